import * as z from 'zod/mini';
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
  description: z.optional(description),
  customReference: z.optional(customReference),
  isPreAuth: z.optional(z.boolean()),
});

/** A POS payment record. `paymentReference` equals `posPaymentId`. */
export const PosPaymentSchema = z.looseObject({
  posPaymentId: z.string(),
  paymentReference: z.nullish(z.string()),
  poiId: z.nullish(z.string()),
  amount: Amount,
  status: openEnum(POS_PAYMENT_STATUSES),
  isPreAuth: z.nullish(z.boolean()),
  pspReference: z.nullish(z.string()),
  errorMessage: z.nullish(z.string()),
  description: z.nullish(z.string()),
  customReference: z.nullish(z.string()),
  createdAt: z.nullish(timestamp),
});

/** The query parameters `pos.list` sends under the service's names, by its own camelCase names. */
export const POS_LIST_WIRE_NAMES = { createdAtStart: 'created_at_start', createdAtEnd: 'created_at_end' } as const;

/** `pos.list` takes camelCase names and sends the service's wire names. */
export const ListPosPaymentsParamsSchema = z.pipe(
  z.strictObject({
    status: z.optional(z.enum(POS_PAYMENT_STATUSES, { error: `must be one of ${POS_PAYMENT_STATUSES.join(', ')}` })),
    createdAtStart: z.optional(dateFilter),
    createdAtEnd: z.optional(dateFilter),
    cursor: z.optional(cursor),
    take: z.optional(take),
    order: z.optional(z.enum(['asc', 'desc'], { error: 'must be asc or desc' })),
  }),
  z.transform(({ createdAtStart, createdAtEnd, ...rest }) => ({
    ...rest,
    ...(createdAtStart === undefined ? {} : { [POS_LIST_WIRE_NAMES.createdAtStart]: createdAtStart }),
    ...(createdAtEnd === undefined ? {} : { [POS_LIST_WIRE_NAMES.createdAtEnd]: createdAtEnd }),
  })),
);

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
