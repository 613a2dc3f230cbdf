// src/follow-ups/queue.ts
import type { PosRecoveryState } from '../core/errors.js';

/**
 * What a follow-up watches: a session, a POS payment, a POS charge by its state (`{ pos: state }`,
 * from `pos.preparePayment` or `PosPaymentPendingError`, also before its id is known), or a refund
 * of a session or POS payment.
 */
export type FollowUpTarget =
  | { sessionId: string }
  | { posPaymentId: string }
  | { pos: PosRecoveryState }
  | { refundReference: string; sessionId: string }
  | { refundReference: string; posPaymentId: string };

/**
 * The time follow-ups count in: `Date` by default; the sandbox's clock (`sandbox.clock`) or
 * `manualClock()` (from `payment-service-sdk/sandbox`) in a test, so that moving it brings the
 * checks and `onStale` about. Only `now()` is read.
 */
export interface FollowUpClock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** One scheduled check of a target. Plain JSON: queues store it as their job's data. */
export interface FollowUpJob {
  /** `followUpTargetKey(target) + '#' + check`: a queue keeps at most one job per id (scheduling an id that is waiting, delayed or running again is a no-op). */
  id: string;
  target: FollowUpTarget;
  /** 0 for the first check, then 1, 2, ... */
  check: number;
  /** When `track` first saw the target (ms since the epoch): the horizon counts from here. */
  trackedAt: number;
}

/** A durable job queue the follow-ups run on. Implement it for another engine in ~50 lines. */
export interface FollowUpQueue {
  /** Stores `job` to run once, no earlier than `delayMs` from now, on any instance; resolves once it is stored. Idempotent per `job.id`. */
  schedule(job: FollowUpJob, delayMs: number): Promise<void>;
  /** Starts running due jobs in this process, at most `concurrency` at once. At-least-once: a job whose handler throws, or whose process dies mid-run, runs again later. */
  start(handler: (job: FollowUpJob) => Promise<void>, options: { concurrency: number }): Promise<void>;
  /** Stops taking jobs; resolves once the handlers in flight have finished. Does not close the app's engine objects (boss, connection). */
  stop(): Promise<void>;
  /** Optional, for tests: runs every job due now and resolves once they are done (the memory queue has it). */
  runDue?(): Promise<void>;
}
