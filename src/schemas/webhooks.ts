import * as z from 'zod/mini';
import { CURRENCIES, expects, openEnum } from './common.js';
import { PAYMENT_STATUSES } from './sessions.js';

/** Event codes the reference documents. Any other code is kept as an {@link UnknownWebhookEvent}. */
export const WEBHOOK_EVENT_CODES = ['AUTHORISATION', 'REFUND'] as const;

/** Refund statuses a REFUND webhook is documented with (`success` is the only one shown). */
export const REFUND_WEBHOOK_STATUSES = ['success'] as const;

/** Values of `paymentSource` in webhooks (`external_api` is the only one shown). */
export const PAYMENT_SOURCES = ['external_api'] as const;

const text = z.string({ error: expects('must be a string') });
/** A field the SDK relies on: confirmation looks records up by it. */
const reference = z.string({ error: expects('must be a non-empty string') }).check(z.minLength(1, 'must be a non-empty string'));
/** Integer cents. Optional in the data, but never a fraction, a string or an unsafe integer. */
const cents = z
  .number({ error: expects('must be an integer number of cents') })
  .check(z.refine(Number.isSafeInteger, 'must be an integer number of cents'));

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
  /** `AUTHORISED` for an authorised payment; other values are not documented. */
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

/** `data` of an AUTHORISATION webhook: a payment was authorised. */
export type AuthorisationWebhookData = z.infer<typeof AuthorisationWebhookDataSchema>;
/** `data` of a REFUND webhook: a refund was resolved. */
export type RefundWebhookData = z.infer<typeof RefundWebhookDataSchema>;
/** An AUTHORISATION webhook: an online payment completed, or a POS payment completed after a timeout. */
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
