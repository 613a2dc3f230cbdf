import * as z from 'zod';
import {
  Amount,
  AmountParams,
  cursor,
  customReference,
  dateFilter,
  description,
  identifier,
  ListMeta,
  type OpenEnum,
  openEnum,
  take,
  timestamp,
} from './common.js';

/** Documented POS payment statuses. */
export const POS_PAYMENT_STATUSES = ['pending', 'success', 'failed', 'timeout'] as const;
/** A POS payment status; unknown future values come through as strings. */
export type PosPaymentStatus = OpenEnum<(typeof POS_PAYMENT_STATUSES)[number]>;

export const CreatePosPaymentParamsSchema = z.strictObject({
  poiId: identifier,
  amount: AmountParams,
  description: description.optional(),
  customReference: customReference.optional(),
  isPreAuth: z.boolean().optional(),
});

/** A POS payment record. `paymentReference` equals `posPaymentId`. */
export const PosPaymentSchema = z.looseObject({
  posPaymentId: z.string(),
  paymentReference: z.string().nullish(),
  poiId: z.string().nullish(),
  amount: Amount,
  status: openEnum(POS_PAYMENT_STATUSES),
  isPreAuth: z.boolean().nullish(),
  pspReference: z.string().nullish(),
  errorMessage: z.string().nullish(),
  description: z.string().nullish(),
  customReference: z.string().nullish(),
  createdAt: timestamp.nullish(),
});

/** `pos.list` takes camelCase names and sends the service's wire names. */
export const ListPosPaymentsParamsSchema = z
  .strictObject({
    status: z.enum(POS_PAYMENT_STATUSES, { error: `must be one of ${POS_PAYMENT_STATUSES.join(', ')}` }).optional(),
    createdAtStart: dateFilter.optional(),
    createdAtEnd: dateFilter.optional(),
    cursor: cursor.optional(),
    take: take.optional(),
    order: z.enum(['asc', 'desc'], { error: 'must be asc or desc' }).optional(),
  })
  .transform(({ createdAtStart, createdAtEnd, ...rest }) => ({
    ...rest,
    ...(createdAtStart === undefined ? {} : { created_at_start: createdAtStart }),
    ...(createdAtEnd === undefined ? {} : { created_at_end: createdAtEnd }),
  }));

export const PosPaymentListSchema = z.looseObject({
  posPayments: z.array(PosPaymentSchema),
  meta: ListMeta,
});

/** Parameters of `pos.createPayment`. `webcode` is added by the client. */
export type CreatePosPaymentParams = z.input<typeof CreatePosPaymentParamsSchema>;
/** Parameters of `pos.list`. A `Date` is sent as `YYYY-MM-DD HH:MM:SS` in UTC, a string as given. */
export type ListPosPaymentsParams = z.input<typeof ListPosPaymentsParamsSchema>;
/** A POS payment record. */
export type PosPayment = z.infer<typeof PosPaymentSchema>;
