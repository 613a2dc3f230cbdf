/**
 * The Zod schemas of the control API's values: the records it answers with (as
 * `payment-service-sdk/sandbox` types them; other fields may be added), the clock, fault rules,
 * webhook URLs, tenants, and the pieces its routes share (a listing page and its query, a record's
 * timeline). The routes validate with them and the control document is made from them; the
 * document keeps each schema of {@link CONTROL_SCHEMA_NAMES} once, under that name.
 */
import * as z from 'zod/mini';
import { hinted } from '../../schemas/common.js';
import { API_ROUTES } from '../api/routes.js';
import { faultRuleSchema } from '../fault-rule-schema.js';
import { RequestLogEntry } from '../request-log/schema.js';

/** A whole number (the records' ids, times and amounts). */
export const whole = hinted(z.number().check(z.refine(Number.isSafeInteger)), { type: 'integer' });
const millis = whole.check(z.describe('Unix ms of the sandbox clock.'));
const laterMillis = z.optional(z.nullable(whole).check(z.describe('Unix ms of the sandbox clock.')));
const environment = z.enum(['test', 'live']);
const amount = z.object({ value: whole, currency: z.string() });
const nullableText = z.optional(z.nullable(z.string()));
/** A JSON object of any fields. */
const anyObject = hinted(z.record(z.string(), z.unknown()), { type: 'object' });

export const ControlSessionSchema = z
  .object({
    environment,
    sessionId: z.string(),
    paymentUrl: z.string(),
    status: z.enum(['pending', 'completed', 'failed', 'expired', 'cancelled']),
    amount,
    createdAt: millis,
    completedAt: laterMillis,
    paymentReference: nullableText,
  })
  .check(z.describe('A stored session (`SandboxSession`) and the link of its payment page.'));

export const PosPaymentSchema = z.object({
  environment,
  posPaymentId: z.string(),
  poiId: z.string(),
  amount,
  status: z.enum(['pending', 'success', 'failed', 'timeout']),
  isPreAuth: z.optional(z.boolean()),
  pspReference: nullableText,
  errorMessage: nullableText,
  createdAt: millis,
});

export const ModificationSchema = z.object({
  environment,
  operationReference: z.string(),
  operationType: z.enum(['refund', 'capture', 'cancel', 'extend']),
  paymentReference: z.string(),
  sessionId: z.optional(z.string()),
  status: z.enum(['pending', 'received', 'success', 'failed']),
  requestedAt: z.optional(millis),
  resolvedAt: laterMillis,
  amount: z.optional(z.nullable(amount)),
  reason: nullableText,
});

const attempt = z.object({
  at: z.optional(millis),
  status: z.optional(z.nullable(whole)),
  error: nullableText,
  durationMs: z.optional(whole),
  responseBody: nullableText,
});

export const DeliverySchema = z.object({
  id: whole,
  url: z.string(),
  environment,
  event: z.object({ event_code: z.string(), data: anyObject }),
  attempts: z.array(attempt),
  delivered: z.boolean(),
  abandoned: z.boolean(),
  createdAt: millis,
});

export const ClockStateSchema = z.object({
  epochMs: whole.check(z.describe('Sandbox time, Unix ms.')),
  iso: z.string().check(z.describe('Sandbox time, ISO 8601 in UTC.')),
  offsetMs: whole.check(z.describe('How far the sandbox clock runs ahead of real time, in ms.')),
});

/** A rule as `POST /_sandbox/faults` takes it: one of the API's own route templates, or an event. */
export const FaultRuleBody = faultRuleSchema(API_ROUTES.map((route) => route.template));

export const FaultRuleStateSchema = z
  .object({ id: z.string(), injected: whole, effect: anyObject })
  .check(z.describe('A fault rule as the sandbox holds it: its fields, its id and how many times it has struck.'));

export const WebhookUrlsSchema = z.object({ urls: z.array(z.string()) });

const pair = z.object({ test: z.string(), live: z.string() });
export const TenantSchema = z.object({ webcode: z.string(), name: z.string(), keys: pair, clientSecrets: pair });

export const TerminalSettingsSchema = z
  .object({
    poiId: z.string(),
    name: z.string(),
    model: z.string(),
    online: z.boolean().check(z.describe('The offline terminal answers 502 / 13004 at once, whatever its processing time.')),
    processingMs: z
      .nullable(whole)
      .check(z.describe("How long this terminal's POS payments take, in ms of the sandbox clock; `null`: the sandbox's `posDelayMs`.")),
  })
  .check(z.describe("A simulated terminal and the sandbox's setting of it, in one environment."));

/** Each schema the document keeps once, by its name there. */
export const CONTROL_SCHEMA_NAMES: ReadonlyMap<z.core.$ZodType, string> = new Map<z.core.$ZodType, string>([
  [ControlSessionSchema, 'ControlSession'],
  [PosPaymentSchema, 'SandboxPosPayment'],
  [ModificationSchema, 'SandboxModification'],
  [DeliverySchema, 'WebhookDelivery'],
  [ClockStateSchema, 'ClockState'],
  [FaultRuleBody, 'FaultRule'],
  [FaultRuleStateSchema, 'FaultRuleState'],
  [WebhookUrlsSchema, 'WebhookUrls'],
  [TenantSchema, 'Tenant'],
  [TerminalSettingsSchema, 'TerminalSettings'],
  [RequestLogEntry, 'RequestLogEntry'],
]);

/** One page of a control listing; `cursor` is `null` on the last page. */
export function pageOf<S extends z.ZodMiniType>(item: S) {
  return z.object({ items: z.array(item), cursor: z.nullable(z.string()), hasMore: z.boolean(), total: whole });
}

/** A record with its modifications and the webhook deliveries about it. */
export function timelineOf<S extends z.ZodMiniType>(record: S) {
  return z.object({ record, modifications: z.array(ModificationSchema), deliveries: z.array(DeliverySchema) });
}

/**
 * An integer query parameter: digits only, within `min`..`max`, else 400 with `message`; the
 * document says `integer` with its range and default.
 */
export function queryInteger(min: number, max: number, fallback: number, message: string) {
  const digits = z.custom<string>((value) => typeof value === 'string' && /^\d+$/.test(value) && +value >= min && +value <= max, message);
  return z.pipe(hinted(digits, { type: 'integer', minimum: min, maximum: max, default: fallback }), z.transform(Number));
}

const described = (description: string) => z.optional(z.string().check(z.describe(description)));

/** The query of every control listing: a status, the page size, the cursor, the order. */
export const ListingQuery = z.object({
  status: described('Only records with this status.'),
  take: z.optional(queryInteger(1, 100, 20, 'take must be an integer from 1 to 100').check(z.describe('Page size.'))),
  cursor: z.optional(
    z
      .string()
      .check(
        z.regex(/^([ad]\d{1,15})?$/, 'cursor is not valid: pass meta.cursor of the previous page'),
        z.describe('`cursor` of the previous page.'),
      ),
  ),
  order: z.optional(
    z.enum(['asc', 'desc'], { error: 'order must be asc or desc' }).check(z.meta({ default: 'asc', description: 'Creation order.' })),
  ),
});
