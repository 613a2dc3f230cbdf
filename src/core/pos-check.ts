/**
 * `pos.checkPayment`: one short look at where a charge stands, for a status route that a
 * cashier's screen polls. It reads the listing only: it never sends the charge, so it never starts one.
 */
import type { PosPayment } from '../schemas/pos.js';
import { deadlineSignal, readDeadline } from './deadline.js';
import { type PosRecoveryState, RequestValidationError, type ValidationIssue } from './errors.js';
import { findCharge } from './pos-lookup.js';
import { type DeadlineOption, type PosOperations, pendingError } from './recovery.js';

/**
 * Where a charge stands:
 * - `success` or `failed`: final, with the payment;
 * - `pending`: the service lists it in progress (`pending`, or `timeout`: the terminal did not
 *   answer in time and it may still complete), with the payment as listed;
 * - `unknown`: nothing is listed for it yet. Just after sending, it may still be on its way; if it
 *   stays unknown past the terminal's time, it never arrived: `pos.resumeRecovery(state)` then
 *   resends it with the same `Idempotency-Key`, which starts it at most once (or reads its answer,
 *   if it did arrive after all).
 */
export type PosPaymentCheck =
  | { status: 'success' | 'failed'; payment: PosPayment }
  | { status: 'pending'; payment: PosPayment }
  | { status: 'unknown' };

/** Options of `pos.checkPayment`. */
export interface CheckPosPaymentOptions extends DeadlineOption {
  /** Cancels the look; the call rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** What the listing says of the charge of `state`; see {@link PosPaymentCheck}. */
export async function checkPayment(
  ops: PosOperations,
  state: PosRecoveryState,
  options: CheckPosPaymentOptions = {},
): Promise<PosPaymentCheck> {
  const issues: ValidationIssue[] = [];
  if (!state || (typeof state.posPaymentId !== 'string' && (typeof state.params !== 'object' || state.params === null))) {
    issues.push({ path: 'state', message: 'needs a posPaymentId, or the params of the charge (the state preparePayment made)' });
  }
  const deadline = readDeadline(options.deadline, 'options.deadline', issues);
  if (issues.length > 0) throw new RequestValidationError(issues);
  const joined = deadlineSignal(deadline, options.signal);
  try {
    const found = await findCharge(ops, state, joined.signal);
    if (!found) return { status: 'unknown' };
    const { payment } = found;
    if (payment.status === 'success' || payment.status === 'failed') return { status: payment.status as 'success' | 'failed', payment };
    return { status: 'pending', payment };
  } catch (error) {
    if (joined.reached && error === joined.signal?.reason) throw pendingError(ops, state, undefined, { cause: error });
    throw error;
  } finally {
    joined.clear();
  }
}
