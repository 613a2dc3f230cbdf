/**
 * One check of a follow-up target: the record read through the API, and, when it is final, the
 * event the webhook would have brought (or the ended session). Reads only: never a write.
 */
import { timeFromPosPaymentId } from '../core/recovery.js';
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
  const payment = await findPos(client, target.posPaymentId);
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
