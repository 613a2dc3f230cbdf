/** The webhook events the operations emit, and sending one again for a record on request. */
import type { Environment } from '../../core/options.js';
import type { ModificationRecord, PosRecord, SessionRecord, WebhookDelivery } from '../records.js';
import { invalid } from '../responses.js';
import { type ApiContext, notAllowed, notFound } from './context.js';

export type WebhookEvent = WebhookDelivery['event'];

/** The AUTHORISATION event of a completed session. */
export function sessionAuthorisation(session: SessionRecord): WebhookEvent {
  return {
    event_code: 'AUTHORISATION',
    data: {
      amount: session.amount.value,
      currency: session.amount.currency,
      paymentReference: session.paymentReference,
      paymentStatus: 'AUTHORISED',
      description: session.description,
      customReference: session.customReference,
      paymentSource: 'external_api',
    },
  };
}

/** The AUTHORISATION event of a POS payment with its result (`REFUSED` for a failed one). */
export function posAuthorisation(record: PosRecord): WebhookEvent {
  return {
    event_code: 'AUTHORISATION',
    data: {
      amount: record.amount.value,
      currency: record.amount.currency,
      paymentReference: record.posPaymentId,
      paymentStatus: record.status === 'success' ? 'AUTHORISED' : 'REFUSED',
      description: record.description,
      customReference: record.customReference,
      paymentSource: 'external_api',
    },
  };
}

/** The REFUND event of a resolved refund. */
export function refundEvent(context: ApiContext, record: ModificationRecord): WebhookEvent {
  const { store } = context;
  const owner = store.sessions.findBy({ payment_reference: record.paymentReference }) ?? store.posPayments.get(record.paymentReference);
  return {
    event_code: 'REFUND',
    data: {
      amount: record.amount?.value,
      currency: record.amount?.currency,
      paymentReference: record.paymentReference,
      refundReason: record.reason,
      refundReference: record.operationReference,
      status: 'success',
      customReference: owner?.customReference ?? null,
      paymentSource: 'external_api',
    },
  };
}

/**
 * Sends a documented event again for a record, as the service would have: AUTHORISATION for a
 * completed session (by `sessionId` or `paymentReference`) or a POS payment that has its result,
 * REFUND for a resolved refund (by `refundReference`). Returns the ids of the new deliveries.
 */
export function emitEvent(context: ApiContext, environment: Environment, eventCode: string, reference: string): number[] {
  return context.webhooks.emit(environment, eventFor(context, environment, eventCode, reference));
}

function eventFor(context: ApiContext, environment: Environment, eventCode: string, reference: string): WebhookEvent {
  const { store } = context;
  if (eventCode === 'AUTHORISATION') {
    const byId = store.sessions.get(reference);
    const session = byId?.environment === environment ? byId : store.sessions.findBy({ payment_reference: reference, environment });
    if (session) {
      if (session.status !== 'completed') throw notAllowed(`Session ${session.sessionId} is ${session.status}: it has no authorisation`);
      return sessionAuthorisation(session);
    }
    const pos = store.posPayments.get(reference);
    if (pos?.environment !== environment) throw notFound('Payment');
    if (pos.status !== 'success' && pos.status !== 'failed')
      throw notAllowed(`POS payment ${reference} is ${pos.status}: it has no result yet`);
    return posAuthorisation(pos);
  }
  if (eventCode === 'REFUND') {
    const record = store.modifications.get(reference);
    if (record?.environment !== environment || record.operationType !== 'refund') throw notFound('Refund');
    if (record.status !== 'success') throw notAllowed(`Refund ${reference} is ${record.status}: it is not resolved yet`);
    return refundEvent(context, record);
  }
  throw invalid(`event must be AUTHORISATION or REFUND, the documented event codes`);
}
