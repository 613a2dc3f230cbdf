/**
 * One check of a follow-up target: the record read through the API, and, when it is final, the
 * event the webhook would have brought (or the ended session). Reads only, but for a POS charge
 * tracked by its state that nothing lists: that one is resent with its own key (see findCharge).
 */
import { PosPaymentPendingError, type PosRecoveryState } from '../core/errors.js';
import type { CheckPosPaymentOptions, PosPaymentCheck } from '../core/pos-check.js';
import { type ResumeRecoveryOptions, timeFromPosPaymentId } from '../core/recovery.js';
import type { Amount } from '../schemas/common.js';
import type { ConfirmedPosPayment, ConfirmedRefund, ConfirmedSessionPayment } from '../schemas/confirmed-webhooks.js';
import type { ModificationRecord } from '../schemas/modifications.js';
import type { PosPayment } from '../schemas/pos.js';
import type { Session } from '../schemas/sessions.js';
import type { AuthorisationEvent, RefundEvent } from '../schemas/webhooks.js';
import type { FollowUpTarget } from './queue.js';

/** What a follow-up reads through: a `PaymentClient` (its sessions and POS namespaces). */
export interface FollowUpReader {
  /** Sessions: `retrieve` and `listModifications`. */
  sessions: {
    retrieve(sessionId: string): PromiseLike<Session>;
    listModifications(sessionId: string): PromiseLike<ModificationRecord[]>;
  };
  /** POS payments: `list` (newest first, within a day of the time the id carries) and `listModifications`. */
  pos: {
    list(params: { order: 'desc'; take: number; createdAtStart?: Date; createdAtEnd?: Date }): {
      pages(): AsyncIterable<{ items: readonly PosPayment[]; hasMore: boolean }>;
    };
    listModifications(posPaymentId: string): PromiseLike<ModificationRecord[]>;
    /** For `{ pos: state }` targets: where the charge stands, read only. */
    checkPayment?(state: PosRecoveryState, options?: CheckPosPaymentOptions): PromiseLike<PosPaymentCheck>;
    /** For `{ pos: state }` targets that nothing lists: the same charge resent with its key. */
    resumeRecovery?(state: PosRecoveryState, options?: ResumeRecoveryOptions): PromiseLike<PosPayment>;
  };
}

/** A final outcome, as the webhook would have brought it (or the session that ended unpaid). */
export type FinalOutcome =
  | { kind: 'authorisation'; event: AuthorisationEvent; confirmed: ConfirmedSessionPayment | ConfirmedPosPayment }
  | { kind: 'refund'; event: RefundEvent; confirmed: ConfirmedRefund }
  | { kind: 'ended'; session: Session };

const ENDED = ['failed', 'cancelled', 'expired'];
const DAY_MS = 86_400_000;
const MAX_PAGES = 10;
/** How long one check of a `{ pos: state }` target may look, and then wait on a resend of the charge, in ms. */
const POS_LOOK_MS = 10_000;
const POS_RESEND_MS = 15_000;

function authorisation(
  reference: string,
  status: string,
  amount: Amount,
  record: { description?: string | null | undefined; customReference?: string | null | undefined },
) {
  const data = { amount: amount.value, currency: amount.currency, paymentReference: reference, paymentStatus: status };
  const event: AuthorisationEvent = {
    event_code: 'AUTHORISATION',
    data: { ...data, description: record.description, customReference: record.customReference, paymentSource: 'external_api' },
  };
  return { event, outcome: status === 'AUTHORISED' ? ('authorised' as const) : ('refused' as const) };
}

async function findPos(client: FollowUpReader, id: string): Promise<PosPayment | undefined> {
  const time = timeFromPosPaymentId(id)?.getTime() ?? Number.NaN;
  const window = Number.isNaN(time) ? {} : { createdAtStart: new Date(time - DAY_MS), createdAtEnd: new Date(time + DAY_MS) };
  let pages = 0;
  for await (const page of client.pos.list({ ...window, order: 'desc', take: 100 }).pages()) {
    const found = page.items.find((payment) => payment.posPaymentId === id);
    if (found || !page.hasMore || ++pages >= MAX_PAGES) return found;
  }
  return undefined;
}

/**
 * The final payment of a charge known by its state, or undefined while it is not final. A charge
 * nothing lists (no id known: it may never have arrived) is resent with its own key, which starts it
 * at most once, or reads its answer; a resend still waiting at its deadline is looked at next check.
 */
async function findCharge(client: FollowUpReader, state: PosRecoveryState): Promise<PosPayment | undefined> {
  const { checkPayment, resumeRecovery } = client.pos;
  if (!checkPayment || !resumeRecovery)
    throw new TypeError('createFollowUps: { pos: state } targets need a PaymentClient (pos.checkPayment, pos.resumeRecovery)');
  const check = await checkPayment.call(client.pos, state, { deadline: Date.now() + POS_LOOK_MS });
  if (check.status !== 'unknown') return check.status === 'pending' ? undefined : check.payment;
  if (state.posPaymentId !== undefined || state.idempotencyKey === undefined || !state.params) return undefined;
  try {
    return await resumeRecovery.call(client.pos, state, { deadline: Date.now() + POS_RESEND_MS, maxWaitMs: POS_RESEND_MS });
  } catch (error) {
    if (error instanceof PosPaymentPendingError) return undefined;
    throw error;
  }
}

/** Reads `target` once; resolves with its final outcome, or undefined while it is not final. */
export async function readOutcome(client: FollowUpReader, target: FollowUpTarget): Promise<FinalOutcome | undefined> {
  if ('refundReference' in target) {
    const records = await ('sessionId' in target
      ? client.sessions.listModifications(target.sessionId)
      : client.pos.listModifications(target.posPaymentId));
    const record = records.find((item) => item.operationReference === target.refundReference);
    if (record?.status !== 'success' && record?.status !== 'failed') return undefined;
    const event: RefundEvent = {
      event_code: 'REFUND',
      data: {
        amount: record.amount?.value,
        currency: record.amount?.currency,
        paymentReference: record.paymentReference ?? '',
        refundReason: record.reason,
        refundReference: target.refundReference,
        status: record.status,
        paymentSource: 'external_api',
      },
    };
    return {
      kind: 'refund',
      event,
      confirmed: { kind: 'refund', outcome: record.status === 'success' ? 'refunded' : 'failed', event, record },
    };
  }
  if ('sessionId' in target) {
    const session = await client.sessions.retrieve(target.sessionId);
    if (ENDED.includes(session.status)) return { kind: 'ended', session };
    if (session.status !== 'completed' || !session.paymentReference) return undefined;
    const { event, outcome } = authorisation(session.paymentReference, session.paymentStatus ?? 'AUTHORISED', session.amount, session);
    return { kind: 'authorisation', event, confirmed: { kind: 'session', outcome, event, record: session } };
  }
  const payment = 'pos' in target ? await findCharge(client, target.pos) : await findPos(client, target.posPaymentId);
  if (payment?.status !== 'success' && payment?.status !== 'failed') return undefined;
  // A failed POS payment's webhook says REFUSED, as the sandbox sends it (the reference shows no other refusal).
  const { event, outcome } = authorisation(
    payment.posPaymentId,
    payment.status === 'success' ? 'AUTHORISED' : 'REFUSED',
    payment.amount,
    payment,
  );
  return { kind: 'authorisation', event, confirmed: { kind: 'posPayment', outcome, event, record: payment } };
}
