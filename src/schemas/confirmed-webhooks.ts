/**
 * What `client.webhooks.confirm` resolves to, by kind: types only, in the schemas layer so that
 * `createWebhookHandler` (whose callbacks receive them) and the `Webhooks` resource share them.
 */
import type { ModificationRecord } from './modifications.js';
import type { PosPayment } from './pos.js';
import type { Session } from './sessions.js';
import type { AuthorisationEvent, PaymentOutcome, RefundEvent, RefundOutcome } from './webhooks.js';

/** An AUTHORISATION of a POS payment, confirmed by `GET /pos/payments`. */
export interface ConfirmedPosPayment {
  /** Confirmed through the POS payments listing. */
  kind: 'posPayment';
  /** `authorised` (the record's `status` is `success`) or `refused` (it is `failed`), as the event says. */
  outcome: PaymentOutcome;
  /** The event, as parsed. */
  event: AuthorisationEvent;
  /** The payment as the API returned it: `status` `success` or `failed` as `outcome` says, the event's amount. */
  record: PosPayment;
}

/** An AUTHORISATION of an online payment, confirmed by its session. */
export interface ConfirmedSessionPayment {
  /** Confirmed through the payment's session. */
  kind: 'session';
  /**
   * `authorised` (the session is `completed` with this payment) or `refused` (this payment is a
   * failed attempt of the session), as the event says.
   */
  outcome: PaymentOutcome;
  /** The event, as parsed. */
  event: AuthorisationEvent;
  /** The session as `GET /payment/session/{sessionId}` returned it, holding the event's payment. */
  record: Session;
}

/** A REFUND, confirmed by `GET /modifications?type=refund`. */
export interface ConfirmedRefund {
  /** Confirmed through the modifications listing. */
  kind: 'refund';
  /** `refunded` (the record's `status` is `success`) or `failed` (it is `failed`), as the event's `status` says. */
  outcome: RefundOutcome;
  /** The event, as parsed. */
  event: RefundEvent;
  /** The refund as the API returned it: the event's status, payment and amount. */
  record: ModificationRecord;
}

/** What `client.webhooks.confirm` resolves to: the event, its `outcome` and the record that confirms it, by `kind`. */
export type ConfirmedWebhook = ConfirmedPosPayment | ConfirmedSessionPayment | ConfirmedRefund;
