import * as z from 'zod/mini';

/**
 * A string enum that also accepts values the SDK does not know yet: the reference leaves many
 * value sets open, so a new status from the service must not break a merchant's integration.
 */
export type OpenEnum<Known extends string> = Known | (string & {});

/**
 * JSON Schema keywords that say what a schema's refinements and transforms check or produce, which
 * zod cannot see into: `payment-service-sdk/openapi.json` is generated from the schemas with them
 * (src/openapi/). `x-open-enum` lists the known values of an {@link openEnum}. A plain `WeakMap`
 * rather than a zod registry: it costs the SDK's bundle nothing to speak of.
 */
export const jsonSchemaHints = new WeakMap<z.core.$ZodType, { [keyword: string]: unknown }>();

/** `schema`, registered with the JSON Schema keywords its refinements or transform stand for. */
export function hinted<Schema extends z.core.$ZodType>(schema: Schema, keywords: { [keyword: string]: unknown }): Schema {
  jsonSchemaHints.set(schema, keywords);
  return schema;
}

export function openEnum<const Known extends string>(known: readonly Known[]): z.ZodMiniType<OpenEnum<Known>> {
  return hinted(z.string(), { 'x-open-enum': known }) as z.ZodMiniType<OpenEnum<Known>>;
}

/** Which of the service's two isolated environments a client talks to. */
export type Environment = 'test' | 'live';

/** Accepted currencies, ISO 4217. */
export const CURRENCIES = ['EUR', 'GBP', 'USD'] as const;
/** An accepted currency. */
export type Currency = (typeof CURRENCIES)[number];

/**
 * Whether `value` is a currency the service accepts (`'EUR'`, `'GBP'` or `'USD'`, uppercase): a type
 * guard that narrows a currency read from the service (typed `string`, kept open for values the SDK
 * does not know yet) to {@link Currency}, for the requests that take only an accepted one.
 *
 * ```ts
 * const { amount } = await client.sessions.retrieve(sessionId);
 * if (isCurrency(amount.currency)) await client.sessions.create({ amount: { value: amount.value, currency: amount.currency }, urlOk, urlKo });
 * ```
 */
export function isCurrency(value: unknown): value is Currency {
  return typeof value === 'string' && (CURRENCIES as readonly string[]).includes(value);
}

/**
 * A schema's own message for a wrong value; a missing value reads "is required" instead, whatever
 * the schema expects.
 */
export function expects(message: string): z.core.$ZodErrorMap {
  return (issue) => (issue.input === undefined ? 'is required' : message);
}

/** Counts user-perceived characters as code points, the way the service's limits read. */
function maxChars(limit: number) {
  // JSON Schema's maxLength counts code points too.
  return hinted(z.string().check(z.refine((value) => [...value].length <= limit, `must be at most ${limit} characters`)), {
    maxLength: limit,
  });
}

export const description = maxChars(255);
export const customReference = maxChars(100);

const INTEGER = { type: 'integer' };

/** A positive integer number of cents. */
export const amountValue = hinted(
  z
    .number({ error: expects('must be a number of cents') })
    .check(
      z.refine(Number.isInteger, { error: 'must be an integer number of cents', abort: true }),
      z.positive('must be greater than 0'),
      z.lte(Number.MAX_SAFE_INTEGER, 'is too large'),
    ),
  INTEGER,
);

const CURRENCY_MESSAGE = 'must be one of EUR, GBP, USD (uppercase)';

/** An amount as sent in a request. */
export const AmountParams = z.strictObject({
  value: amountValue,
  currency: z.enum(CURRENCIES, { error: expects(CURRENCY_MESSAGE) }),
});

/**
 * An amount as a refund or capture sends it: the amount of the payment as the service returned it
 * (`session.amount`, `posPayment.amount`, a record's `amount`) is taken as it comes, its `currency`
 * typed as the open string the service gives. A currency the service does not accept is still refused
 * before anything is sent (`RequestValidationError` at `amount.currency`); fields of an amount other
 * than `value` and `currency` (a read amount keeps the unknown ones) are not sent.
 */
export const ModificationAmountParams = z.object({
  value: amountValue,
  currency: hinted(
    z.string({ error: expects(CURRENCY_MESSAGE) }).check(z.refine(isCurrency, CURRENCY_MESSAGE)) as z.ZodMiniType<
      OpenEnum<Currency>,
      OpenEnum<Currency>
    >,
    { enum: CURRENCIES },
  ),
});

/** An integer, as the service's counts and cents are. */
export const integer = hinted(z.number().check(z.refine(Number.isSafeInteger, 'must be an integer')), INTEGER);

/** An amount as the service returns it: integer cents, currency kept open. */
export const Amount = z.looseObject({
  value: integer,
  currency: openEnum(CURRENCIES),
});

/** Page size of a listing: 1 to 100. */
export const take = hinted(
  z
    .number()
    .check(
      z.refine(Number.isInteger, { error: 'must be an integer', abort: true }),
      z.gte(1, 'must be at least 1'),
      z.lte(100, 'must be at most 100'),
    ),
  INTEGER,
);

/** A cursor from the previous page's `meta.cursor`. */
export const cursor = z.string().check(z.minLength(1, 'must not be empty'));

/** A non-empty identifier string. */
export const identifier = z.string({ error: expects('must be a string') }).check(z.minLength(1, 'must not be empty'));

/** Listing metadata. */
export const ListMeta = z.looseObject({
  cursor: z.nullable(z.string()),
  hasMore: z.boolean(),
  total: integer,
});

/** A record timestamp (`YYYY-MM-DD HH:MM:SS`) or any string the service sends instead. */
export const timestamp = z.string();

/** A timestamp that is absent until something happens (completion, resolution). */
export const laterTimestamp = z.nullish(timestamp);

/** Formats a `Date` as a record timestamp, `YYYY-MM-DD HH:MM:SS` in UTC. */
export function toRecordTimestamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

/** A `Date` that names an instant (not `new Date('nonsense')`). */
export const validDate = z.date().check(z.refine((date) => !Number.isNaN(date.getTime()), 'must be a valid Date'));

/** A date filter: a `Date` (sent as a UTC record timestamp) or a string sent as given. */
export const dateFilter = z.union([
  z.pipe(validDate, hinted(z.transform(toRecordTimestamp), { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$' })),
  z.string().check(z.minLength(1, 'must not be empty')),
]);

export type Amount = z.infer<typeof Amount>;
export type AmountParams = z.input<typeof AmountParams>;
/** The amount of a refund or capture: an {@link AmountParams}, or an amount as the service returned it (its currency a `string`, checked before sending). */
export type ModificationAmountParams = z.input<typeof ModificationAmountParams>;
export type ListMeta = z.infer<typeof ListMeta>;
