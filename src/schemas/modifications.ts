import * as z from 'zod/mini';
import {
  Amount,
  cursor,
  identifier,
  ListMeta,
  laterTimestamp,
  ModificationAmountParams,
  type OpenEnum,
  openEnum,
  take,
  timestamp,
} from './common.js';

/** Modification types: `refund` is documented as a filter value; the others are the operations' names. */
export const MODIFICATION_TYPES = ['refund', 'capture', 'cancel', 'extend'] as const;
/** A modification type; unknown future values come through as strings. */
export type ModificationType = OpenEnum<(typeof MODIFICATION_TYPES)[number]>;

/** Modification statuses seen in the reference; the full set is not documented. */
export const MODIFICATION_STATUSES = ['received', 'pending', 'success'] as const;
/** A modification status; unknown values come through as strings. */
export type ModificationStatus = OpenEnum<(typeof MODIFICATION_STATUSES)[number]>;

const paymentReference = identifier;

export const RefundParamsSchema = z.strictObject({
  paymentReference,
  amount: z.optional(ModificationAmountParams),
  reason: z.optional(z.string()),
});

export const CaptureParamsSchema = z.strictObject({
  paymentReference,
  amount: z.optional(ModificationAmountParams),
});

export const CancelParamsSchema = z.strictObject({
  paymentReference,
});

/** The reference does not show the extend body: `paymentReference` is checked and other fields pass through. */
export const ExtendParamsSchema = z.looseObject({
  paymentReference,
  webcode: z.optional(z.never({ error: 'is added by the client from its options; do not pass it' })),
});

export const RefundAcknowledgementSchema = z.looseObject({
  refundReference: z.string(),
  paymentReference: z.nullish(z.string()),
  amount: z.nullish(Amount),
  status: openEnum(MODIFICATION_STATUSES),
  createdAt: z.nullish(timestamp),
});

export const CaptureAcknowledgementSchema = z.looseObject({
  captureReference: z.string(),
  paymentReference: z.nullish(z.string()),
  amount: z.nullish(Amount),
  status: openEnum(MODIFICATION_STATUSES),
  createdAt: z.nullish(timestamp),
});

export const CancelAcknowledgementSchema = z.looseObject({
  cancelReference: z.string(),
  paymentReference: z.nullish(z.string()),
  status: openEnum(MODIFICATION_STATUSES),
  createdAt: z.nullish(timestamp),
});

const ExtendAcknowledgementObject = z.looseObject({
  extendReference: z.nullish(z.string()),
  paymentReference: z.nullish(z.string()),
  status: z.nullish(openEnum(MODIFICATION_STATUSES)),
  createdAt: z.nullish(timestamp),
});

/**
 * The reference does not show the extend response. Accepted: an acknowledgement object shaped like
 * the other modifications' (every field optional, unknown fields kept), or no data at all, read as `{}`.
 */
export const ExtendAcknowledgementSchema = z.pipe(
  z.nullish(ExtendAcknowledgementObject),
  z.transform((value): z.infer<typeof ExtendAcknowledgementObject> => value ?? {}),
);

export const ModificationRecordSchema = z.looseObject({
  operationReference: z.string(),
  operationType: openEnum(MODIFICATION_TYPES),
  paymentReference: z.nullish(z.string()),
  sessionId: z.nullish(z.string()),
  status: openEnum(MODIFICATION_STATUSES),
  requestedAt: z.nullish(timestamp),
  createdAt: z.nullish(timestamp),
  resolvedAt: laterTimestamp,
  amount: z.nullish(Amount),
  reason: z.nullish(z.string()),
});

export const ModificationListSchema = z.looseObject({
  modifications: z.array(ModificationRecordSchema),
  meta: ListMeta,
});

/**
 * The reference does not show the body of the per-session and per-POS-payment listings. Accepted:
 * `data` as an array of modification records, or `data.modifications` as such an array, with or
 * without `meta` (what the sandbox answers, shaped like `GET /modifications`: `{ modifications,
 * meta }`); both are returned as the array. `meta` is kept as any other unknown field and never
 * checked: the SDK does not use it (one listing, no pages).
 */
export const ModificationsOfPaymentSchema = z.union([
  z.array(ModificationRecordSchema),
  z.pipe(
    z.looseObject({ modifications: z.array(ModificationRecordSchema) }),
    z.transform((value) => value.modifications),
  ),
]);

export const ListModificationsParamsSchema = z.strictObject({
  type: z.optional(openEnum(MODIFICATION_TYPES).check(z.minLength(1, 'must not be empty'))),
  status: z.optional(openEnum(MODIFICATION_STATUSES).check(z.minLength(1, 'must not be empty'))),
  take: z.optional(take),
  cursor: z.optional(cursor),
});

/** Parameters of `modifications.refund`. Whether `amount` may be left out for a full refund is not documented. */
export type RefundParams = z.input<typeof RefundParamsSchema>;
/** Parameters of `modifications.capture`. `amount` may be lower than the pre-authorised amount. */
export type CaptureParams = z.input<typeof CaptureParamsSchema>;
/** Parameters of `modifications.cancel`. */
export type CancelParams = z.input<typeof CancelParamsSchema>;
/** Parameters of `modifications.extend`. Fields other than `paymentReference` are sent as given. */
export type ExtendParams = z.input<typeof ExtendParamsSchema>;
/** Parameters of `modifications.list`. */
export type ListModificationsParams = z.input<typeof ListModificationsParamsSchema>;
/** Acknowledgement of a refund (`status` `pending`). */
export type RefundAcknowledgement = z.infer<typeof RefundAcknowledgementSchema>;
/** Acknowledgement of a capture (`status` `received`). */
export type CaptureAcknowledgement = z.infer<typeof CaptureAcknowledgementSchema>;
/** Acknowledgement of a cancel (`status` `received`). */
export type CancelAcknowledgement = z.infer<typeof CancelAcknowledgementSchema>;
/** Acknowledgement of an extend: an object shaped like the other acknowledgements (every field optional), or `{}` when the service sends no data. */
export type ExtendAcknowledgement = z.output<typeof ExtendAcknowledgementSchema>;
/** One modification (refund, capture, cancel) of a payment. */
export type ModificationRecord = z.infer<typeof ModificationRecordSchema>;
