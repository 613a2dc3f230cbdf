/**
 * A POS call's `deadline`: the instant by which it must have returned, because the platform ends
 * the process then (a Lambda's remaining time, a Vercel function's `maxDuration`, a Worker's
 * limit). The call aborts its own steps {@link DEADLINE_LEAD_MS} before it, through the same
 * signal as a caller's abort, so that every step (an attempt, a resend, a poll, a `Retry-After`
 * wait) ends there, and the caller still has the state to save.
 */
import type { ValidationIssue } from './errors.js';
import { MAX_TIMER_MS } from './options.js';

/** When a POS call must have returned: a `Date`, or milliseconds since the epoch (`Date.now() + …`). */
export type Deadline = Date | number;

/** How long before its `deadline` a POS call stops waiting, in ms: the time to build its error and hand it back. */
export const DEADLINE_LEAD_MS = 100;

/** `deadline` as epoch ms, or an issue at `path` when it is neither a valid `Date` nor a finite number. */
export function readDeadline(deadline: unknown, path: string, issues: ValidationIssue[]): number | undefined {
  if (deadline === undefined) return undefined;
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  if (typeof ms === 'number' && Number.isFinite(ms)) return ms;
  issues.push({ path, message: 'must be a valid Date or a number of milliseconds since the epoch' });
  return undefined;
}

/** Why a call stopped at its deadline: the `cause` of the `PosPaymentPendingError` it throws. */
function deadlineReason(deadline: number): Error {
  const error = new Error(
    `the call's deadline (${new Date(deadline).toISOString()}) was ${DEADLINE_LEAD_MS} ms away, so it stopped waiting`,
  );
  error.name = 'DeadlineReached';
  return error;
}

/** A signal that aborts at the deadline (less its lead) or with the caller's `signal`; `clear` ends its timer. */
export interface DeadlineSignal {
  signal: AbortSignal | undefined;
  /** True once the deadline's own abort has fired (not the caller's). */
  readonly reached: boolean;
  clear(): void;
}

/** The caller's `signal` joined with the deadline's; without a deadline, the caller's signal as it is. */
export function deadlineSignal(deadline: number | undefined, signal: AbortSignal | undefined): DeadlineSignal {
  if (deadline === undefined) return { signal, reached: false, clear: () => undefined };
  const controller = new AbortController();
  const abort = () => controller.abort(deadlineReason(deadline));
  const ms = deadline - DEADLINE_LEAD_MS - Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (ms <= 0) abort();
  else if (ms <= MAX_TIMER_MS) {
    timer = setTimeout(abort, ms);
    // The deadline alone must not keep a process alive (a test, a CLI); the call's own work does.
    (timer as { unref?: () => void }).unref?.();
  }
  return {
    signal: signal ? AbortSignal.any([signal, controller.signal]) : controller.signal,
    get reached() {
      return controller.signal.aborted;
    },
    clear: () => clearTimeout(timer),
  };
}
