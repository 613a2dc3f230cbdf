import * as z from 'zod/mini';
import {
  Amount,
  AmountParams,
  cursor,
  customReference,
  description,
  expects,
  hinted,
  ListMeta,
  laterTimestamp,
  type OpenEnum,
  openEnum,
  take,
  timestamp,
  validDate,
} from './common.js';
import { ISO_DATE_TIME_PATTERN, isIsoDateTime } from './dates.js';

/** Documented session statuses. */
export const SESSION_STATUSES = ['pending', 'completed', 'failed', 'expired', 'cancelled'] as const;
/** A session status; unknown future values come through as strings. */
export type SessionStatus = OpenEnum<(typeof SESSION_STATUSES)[number]>;

/** Documented payment-level statuses (the reference shows only `AUTHORISED`). */
export const PAYMENT_STATUSES = ['AUTHORISED'] as const;
/** Documented payment attempt statuses (the reference shows only `authorised`). */
export const ATTEMPT_STATUSES = ['authorised'] as const;

/** Whether `text` holds a C0 control, DEL or a C1 control: the URL parser would drop or encode them, so the URL sent is not the one given. */
function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

// Checked before the URL format: zod's URL check silently strips tabs and newlines.
const httpUrl = z.pipe(
  z.string({ error: expects('must be an absolute http(s) URL') }).check(
    z.refine((value) => !hasControlCharacter(value), {
      error: 'must not contain control characters (CR, LF, tab, ...)',
      abort: true,
    }),
  ),
  z.url({ protocol: /^https?$/, error: expects('must be an absolute http(s) URL') }),
);

function isBcp47(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

export const CreateSessionParamsSchema = z.strictObject({
  amount: AmountParams,
  urlOk: httpUrl,
  urlKo: httpUrl,
  countryCode: z.optional(z.string().check(z.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code in uppercase, for example ES'))),
  shopperLocale: z.optional(
    z
      .string()
      .check(
        z.maxLength(10, { error: 'must be at most 10 characters', abort: true }),
        z.refine(isBcp47, 'must be a BCP-47 language tag, for example es-ES'),
      ),
  ),
  deliverAt: z.optional(
    z.union([
      z.pipe(
        validDate,
        hinted(
          z.transform((date: Date) => date.toISOString()),
          { type: 'string', format: 'date-time' },
        ),
      ),
      hinted(z.string().check(z.refine(isIsoDateTime, 'must be an ISO 8601 date-time, for example 2026-01-31T10:00:00Z')), {
        pattern: ISO_DATE_TIME_PATTERN,
      }),
    ]),
  ),
  description: z.optional(description),
  customReference: z.optional(customReference),
  isPreAuth: z.optional(z.boolean()),
});

/** The session as returned by `sessions.create`. */
export const PaymentSessionSchema = z.looseObject({
  sessionId: z.string(),
  paymentUrl: z.string(),
  status: openEnum(SESSION_STATUSES),
  amount: Amount,
  description: z.nullish(z.string()),
  customReference: z.nullish(z.string()),
  isPreAuth: z.nullish(z.boolean()),
  createdAt: z.nullish(timestamp),
});

const SessionAttemptSchema = z.looseObject({
  paymentReference: z.nullish(z.string()),
  status: z.nullish(openEnum(ATTEMPT_STATUSES)),
  createdAt: z.nullish(timestamp),
});

/** The session as returned by `sessions.retrieve`. Payment fields appear once a payment exists. */
export const SessionSchema = z.looseObject({
  sessionId: z.string(),
  status: openEnum(SESSION_STATUSES),
  amount: Amount,
  countryCode: z.nullish(z.string()),
  shopperLocale: z.nullish(z.string()),
  description: z.nullish(z.string()),
  customReference: z.nullish(z.string()),
  isPreAuth: z.nullish(z.boolean()),
  urlOk: z.nullish(z.string()),
  urlKo: z.nullish(z.string()),
  createdAt: z.nullish(timestamp),
  paymentReference: z.nullish(z.string()),
  completedAt: laterTimestamp,
  paymentStatus: z.nullish(openEnum(PAYMENT_STATUSES)),
  attempts: z.nullish(z.array(SessionAttemptSchema)),
});

/** One item of `sessions.list`. */
export const SessionListItemSchema = z.looseObject({
  sessionId: z.string(),
  status: openEnum(SESSION_STATUSES),
  amount: Amount,
  description: z.nullish(z.string()),
  customReference: z.nullish(z.string()),
  isPreAuth: z.nullish(z.boolean()),
  createdAt: z.nullish(timestamp),
  completedAt: laterTimestamp,
  paymentReference: z.nullish(z.string()),
  paymentStatus: z.nullish(openEnum(PAYMENT_STATUSES)),
});

export const ListSessionsParamsSchema = z.strictObject({
  status: z.optional(z.enum(SESSION_STATUSES, { error: `must be one of ${SESSION_STATUSES.join(', ')}` })),
  take: z.optional(take),
  cursor: z.optional(cursor),
});

export const SessionListSchema = z.looseObject({
  payments: z.array(SessionListItemSchema),
  meta: ListMeta,
});

/** Parameters of `sessions.create`. `webcode` is added by the client. */
export type CreateSessionParams = z.input<typeof CreateSessionParamsSchema>;
/** Parameters of `sessions.list`. */
export type ListSessionsParams = z.input<typeof ListSessionsParamsSchema>;
/** A payment session as returned by `sessions.create`. */
export type PaymentSession = z.infer<typeof PaymentSessionSchema>;
/** A payment session as returned by `sessions.retrieve`. */
export type Session = z.infer<typeof SessionSchema>;
/** One payment attempt of a session. */
export type SessionAttempt = z.infer<typeof SessionAttemptSchema>;
/** One item of `sessions.list`. */
export type SessionListItem = z.infer<typeof SessionListItemSchema>;
