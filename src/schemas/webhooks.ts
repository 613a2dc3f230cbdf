import * as z from 'zod/mini';
import { CURRENCIES, expects, hinted, openEnum } from './common.js';
import { PAYMENT_STATUSES } from './sessions.js';

/** Event codes the reference documents. Any other code is kept as an {@link UnknownWebhookEvent}. */
export const WEBHOOK_EVENT_CODES = ['AUTHORISATION', 'REFUND'] as const;

/** Refund statuses a REFUND webhook is documented with (`success` is the only one shown). */
export const REFUND_WEBHOOK_STATUSES = ['success'] as const;

/** Values of `paymentSource` in webhooks (`external_api` is the only one shown). */
export const PAYMENT_SOURCES = ['external_api'] as const;

/**
 * What a confirmed AUTHORISATION says happened to the payment:
 * - `authorised`: the event's `paymentStatus` is `AUTHORISED` (or absent) and the API shows the
 *   payment authorised. Ship the order.
 * - `refused`: the event's `paymentStatus` is anything else (`REFUSED` for a declined card) and the
 *   API shows the payment failed. Nothing was charged: let the customer pay again.
 */
export const PAYMENT_OUTCOMES = ['authorised', 'refused'] as const;
/** What a confirmed AUTHORISATION says happened to the payment: see {@link PAYMENT_OUTCOMES}. */
export type PaymentOutcome = (typeof PAYMENT_OUTCOMES)[number];

/**
 * What a confirmed REFUND says happened to the refund:
 * - `refunded`: the event's `status` is `success` (or absent) and the refund's record is `success`.
 * - `failed`: the event's `status` is `failed` and so is the record (the reference shows only
 *   `success`; a failed refund is confirmed the same way, so that its webhook is not redelivered).
 */
export const REFUND_OUTCOMES = ['refunded', 'failed'] as const;
/** What a confirmed REFUND says happened to the refund: see {@link REFUND_OUTCOMES}. */
export type RefundOutcome = (typeof REFUND_OUTCOMES)[number];

/** The `outcome` of any confirmed webhook: a {@link PaymentOutcome} or a {@link RefundOutcome}. */
export type WebhookOutcome = PaymentOutcome | RefundOutcome;

const text = z.string({ error: expects('must be a string') });
/** A field the SDK relies on: confirmation looks records up by it. */
const reference = z.string({ error: expects('must be a non-empty string') }).check(z.minLength(1, 'must be a non-empty string'));
/** Integer cents. Optional in the data, but never a fraction, a string or an unsafe integer. */
const cents = hinted(
  z
    .number({ error: expects('must be an integer number of cents') })
    .check(z.refine(Number.isSafeInteger, 'must be an integer number of cents')),
  { type: 'integer' },
);

/**
 * `data` of an AUTHORISATION webhook. Only `paymentReference` is required (confirmation looks the
 * payment up by it); the other documented fields may be absent or null, and unknown fields are kept.
 */
export const AuthorisationWebhookDataSchema = z.looseObject({
  /** Amount in integer cents. */
  amount: z.nullish(cents),
  /** ISO 4217 currency of `amount`. */
  currency: z.nullish(openEnum(CURRENCIES)),
  /** The payment: an online `paymentReference` or, for a POS payment, its `posPaymentId`. */
  paymentReference: reference,
  /**
   * `AUTHORISED` for an authorised payment. Any other value reports a failed one (`REFUSED` for a
   * declined POS payment, as the sandbox sends); the reference shows no other value.
   */
  paymentStatus: z.nullish(openEnum(PAYMENT_STATUSES)),
  description: z.nullish(text),
  customReference: z.nullish(text),
  /** `external_api`. */
  paymentSource: z.nullish(openEnum(PAYMENT_SOURCES)),
});

/**
 * `data` of a REFUND webhook. `refundReference` and `paymentReference` are required (confirmation
 * looks the refund up by them); the other documented fields may be absent or null, and unknown
 * fields are kept.
 */
export const RefundWebhookDataSchema = z.looseObject({
  /** Refunded amount in integer cents. */
  amount: z.nullish(cents),
  /** ISO 4217 currency of `amount`. */
  currency: z.nullish(openEnum(CURRENCIES)),
  /** The refunded payment. */
  paymentReference: reference,
  refundReason: z.nullish(text),
  /** The refund (`{webcode}-RFX[T]-{number}`). */
  refundReference: reference,
  /** `success` is the only value shown. */
  status: z.nullish(openEnum(REFUND_WEBHOOK_STATUSES)),
  customReference: z.nullish(text),
  /** `external_api`. */
  paymentSource: z.nullish(openEnum(PAYMENT_SOURCES)),
});

export const AuthorisationEventSchema = z.looseObject({
  event_code: z.literal('AUTHORISATION'),
  data: AuthorisationWebhookDataSchema,
});

export const RefundEventSchema = z.looseObject({
  event_code: z.literal('REFUND'),
  data: RefundWebhookDataSchema,
});

export const UnknownWebhookEventSchema = z.looseObject({
  event_code: z.string(),
  data: z.record(z.string(), z.unknown()),
});

/** `data` of an AUTHORISATION webhook: the result of a payment, authorised or not (`paymentStatus`). */
export type AuthorisationWebhookData = z.infer<typeof AuthorisationWebhookDataSchema>;
/** `data` of a REFUND webhook: a refund was resolved. */
export type RefundWebhookData = z.infer<typeof RefundWebhookDataSchema>;
/**
 * An AUTHORISATION webhook: the result of an online payment that completed, or of a POS payment
 * (also one that completed after a timeout). `data.paymentStatus` says whether it was authorised.
 */
export type AuthorisationEvent = z.infer<typeof AuthorisationEventSchema>;
/** A REFUND webhook: a refund was resolved. */
export type RefundEvent = z.infer<typeof RefundEventSchema>;
/**
 * A webhook whose `event_code` the SDK does not know (capture, cancel, chargeback and others are
 * not documented). Its `data` is kept as it arrived.
 */
export type UnknownWebhookEvent = z.infer<typeof UnknownWebhookEventSchema>;
/**
 * Any webhook, as returned by `parseWebhook`. TypeScript cannot narrow this union by comparing
 * `event_code` (the unknown member's code is any string): use `isAuthorisationEvent` and
 * `isRefundEvent`, or the per-event callbacks of `createWebhookHandler`.
 */
export type WebhookEvent = AuthorisationEvent | RefundEvent | UnknownWebhookEvent;
