/** The options of `createFollowUps` and what it returns: types only, shared by the setup and the check logic. */
import type { WebhookStore, WebhookTransaction } from '../helpers/webhook-store.js';
import type { WebhookCallback } from '../helpers/webhooks.js';
import type { Session } from '../schemas/sessions.js';
import type { AuthorisationEvent, RefundEvent } from '../schemas/webhooks.js';
import type { FollowUpClock, FollowUpQueue, FollowUpTarget } from './queue.js';
import type { FollowUpReader } from './read.js';

/** What `onSessionEnded` learns besides the session: its key, the session as read, and `transaction`. */
export interface SessionEndedContext {
  /** `SESSION_ENDED:<sessionId>:<status>`, as the store holds it. */
  key: string;
  /** The session as the check read it (the same as the first argument). */
  confirmed: Session;
  /** See {@link WebhookTransaction}. */
  transaction: WebhookTransaction;
}

/** Options of `createFollowUps`. At least one of `onAuthorisation`, `onRefund` and `onSessionEnded` is required. */
export interface FollowUpsOptions {
  /** The `PaymentClient` the checks read through (sessions, POS payments, per-payment modifications). */
  client: FollowUpReader;
  /** The `WebhookStore` of the app's `createWebhookHandler`: the same store, so that a webhook and a follow-up of one outcome run once. */
  store: WebhookStore;
  /** Where the checks are scheduled: `memoryFollowUpQueue()`, `pgBossFollowUpQueue(boss)`, `bullMqFollowUpQueue(connection)` or your own. */
  queue: FollowUpQueue;
  /**
   * Called once per final payment (a completed session, a POS payment `success` or `failed`) with
   * the AUTHORISATION event its webhook would bring (`paymentStatus` `AUTHORISED`, or `REFUSED`
   * for a failed POS payment). The webhook handler's callback fits: `request` is a stand-in
   * (`POST http://follow-up.invalid/<target key>`), `context.confirmed` the record read.
   */
  onAuthorisation?: WebhookCallback<AuthorisationEvent> | undefined;
  /** Called once per resolved refund (`success` or `failed`) with the REFUND event its webhook would bring; as `onAuthorisation`. */
  onRefund?: WebhookCallback<RefundEvent> | undefined;
  /** Called once per session that ended unpaid (`failed`, `cancelled`, `expired`): no webhook exists for these. */
  onSessionEnded?: ((session: Session, context: SessionEndedContext) => unknown) | undefined;
  /** Called once when a target is still not final at `horizonMs` (a session never opened stays `pending` for ever). */
  onStale?: ((target: FollowUpTarget) => unknown) | undefined;
  /** Called when a check fails (the API or the store) or a callback throws; the next check tries again. Its own errors are ignored. */
  onError?: ((error: unknown, target: FollowUpTarget) => unknown) | undefined;
  /** Delays between checks, in ms, the last one repeating; the first is from `track` to the first check. Default `DEFAULT_FOLLOW_UP_SCHEDULE`. */
  schedule?: readonly number[] | undefined;
  /** How long a target is checked, in ms from its first `track`; the last check falls on it. Default 24 h. */
  horizonMs?: number | undefined;
  /** How long a claim holds, in ms, as the webhook handler's `leaseMs`. Default 60 000. */
  leaseMs?: number | undefined;
  /**
   * The time the schedule and the horizon count in. Default the system's. In a test, the sandbox's
   * (`sandbox.clock`: `sandbox.advanceClock('5m')` then brings the checks due in those 5 minutes)
   * or `manualClock()`. A `memoryFollowUpQueue()` made without a clock takes this one; pg-boss and
   * BullMQ keep their own time for the delays (only the horizon follows the clock there).
   */
  clock?: FollowUpClock | undefined;
}

/** What `createFollowUps` returns. */
export interface FollowUps {
  /**
   * Schedules the checks of `target` (rejects with a `TypeError`, scheduling nothing, when it is
   * malformed). Tracking a target twice is one follow-up. `{ pos: state }` follows a POS charge by
   * the state `pos.preparePayment` made (or `PosPaymentPendingError.state`): track it before you
   * send it, so that a process killed mid-charge still gets its outcome acted on once.
   */
  track(target: FollowUpTarget): Promise<void>;
  /** Starts running due checks in this process, `concurrency` at once (default 4). */
  start(options?: { concurrency?: number | undefined }): Promise<void>;
  /** Stops taking checks; resolves once the checks in flight have finished. */
  stop(): Promise<void>;
  /**
   * For tests: runs every check due now on the follow-ups' clock (after `sandbox.advanceClock`,
   * say) and resolves once they are done, instead of waiting for the queue to notice. Needs a
   * queue that can (`memoryFollowUpQueue`); others reject with a `TypeError`.
   */
  runDue(): Promise<void>;
}

/** The options, checked, with their defaults: what the checks run with. */
export type FollowUpSettings = FollowUpsOptions & { schedule: number[]; horizonMs: number; leaseMs: number; clock: FollowUpClock };
