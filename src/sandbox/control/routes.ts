/**
 * Every route of the control API under `/_sandbox/`, declared once (see route.ts): the router
 * validates and runs them, the control document describes them, the `Sandbox` object's typed
 * methods call them. Under `/_sandbox/{test|live}/` the records of one environment (its key
 * only) and its terminals' settings; elsewhere the clock, fault rules, webhook URLs, reset (any key of the tenant) and the
 * tenants (the sandbox's own keys only).
 */
import * as z from 'zod/mini';
import { hinted } from '../../schemas/common.js';
import { notFound } from '../api/context.js';
import { MAX_PROCESSING_MS } from '../api/terminals.js';
import { FaultRuleError, MAX_FAULT_RULES } from '../faults.js';
import { invalid } from '../responses.js';
import { MAX_ADVANCE_MS, parseDuration } from './control.js';
import { REQUEST_ROUTES } from './requests.js';
import { controlRoute } from './route.js';
import {
  ClockStateSchema,
  ControlSessionSchema,
  DeliverySchema,
  FaultRuleBody,
  FaultRuleStateSchema,
  ListingQuery,
  ModificationSchema,
  PosPaymentSchema,
  pageOf,
  TenantSchema,
  TerminalSettingsSchema,
  timelineOf,
  WebhookUrlsSchema,
} from './schemas.js';

const id = (description: string) => z.string().check(z.describe(description));
const sessionParams = (description: string) => z.object({ sessionId: id(description) });
const posParams = (description: string) => z.object({ posPaymentId: id(description) });
/** A delivery id: up to 15 digits; any other segment names no delivery (404). */
const deliveryParams = z.object({
  deliveryId: z.pipe(
    z.string().check(z.regex(/^\d{1,15}$/, 'Webhook delivery'), z.describe('The delivery id (an integer).')),
    z.transform(Number),
  ),
});

const ADVANCE = 'Give ms (an integer) or duration ("90s", "5m", "1h30m", "PT5M")';
const advanceMs = hinted(
  z.number({ error: ADVANCE }).check(z.refine(Number.isSafeInteger, ADVANCE), z.minimum(0, ADVANCE), z.maximum(MAX_ADVANCE_MS, ADVANCE)),
  {
    type: 'integer',
  },
);
const HOLDER_NAME = 'holderName must be a name of at least 3 characters';
/** At least 3 characters once the spaces around are trimmed (the document's pattern). */
const HOLDER_PATTERN = /^\s*\S[\s\S]+\S\s*$/;
const DURATION = /^(?:P(?!$)(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?|(?:\d+(?:ms|s|m|h|d))+)$/;
/** An absolute http(s) URL: the pattern the document shows, then one `URL` parses. */
const HTTP_URL = /^https?:\/\/[^\s/?#]+/i;
const OUTCOME = 'outcome must be success or failed';
const EVENT_CODE = 'eventCode must be AUTHORISATION or REFUND, the documented event codes';
const WEBHOOK_URL = 'url must be an absolute http(s) URL';
const TENANTS_ONLY = "Only the sandbox's own keys may manage tenants.";
const PROCESSING = `processingMs must be an integer from 0 to ${MAX_PROCESSING_MS}, or null for the default`;
const processingMs = z.nullable(
  hinted(
    z
      .number({ error: PROCESSING })
      .check(z.refine(Number.isSafeInteger, PROCESSING), z.minimum(0, PROCESSING), z.maximum(MAX_PROCESSING_MS, PROCESSING)),
    { type: 'integer' },
  ),
);

/** The routes of one environment's records. */
const RECORD_ROUTES = {
  listSessions: controlRoute({
    method: 'get',
    path: '{environment}/sessions',
    summary: 'List stored sessions',
    tag: 'Records',
    query: ListingQuery,
    answer: pageOf(ControlSessionSchema),
    run: (c, { query }) => c.control.listSessions(c.environment, query),
  }),
  getSession: controlRoute({
    method: 'get',
    path: '{environment}/sessions/{sessionId}',
    summary: 'A session with its modifications and webhook deliveries',
    tag: 'Records',
    params: sessionParams('The `sessionId`.'),
    answer: timelineOf(ControlSessionSchema),
    run: (c, { params }) => c.control.session(c.environment, params.sessionId),
  }),
  paySession: controlRoute({
    method: 'post',
    path: '{environment}/sessions/{sessionId}/pay',
    summary: 'Pay a pending session as a customer would on the payment page',
    description:
      "Answers after the webhooks' first attempts. `holderName` decides the outcome as on the Test form (`DECLINED`, `CARD_EXPIRED`, `ERROR`...; any other name pays).",
    tag: 'Records',
    params: sessionParams('The `sessionId` of a pending session.'),
    body: z.object({
      holderName: z.optional(
        z
          .string({ error: HOLDER_NAME })
          .check(z.regex(HOLDER_PATTERN, HOLDER_NAME), z.describe('Cardholder name; default a name that pays.')),
      ),
    }),
    answer: ControlSessionSchema,
    run: (c, { params, body }) => c.control.paySession(c.environment, params.sessionId, { holderName: body.holderName }),
  }),
  expireSession: controlRoute({
    method: 'post',
    path: '{environment}/sessions/{sessionId}/expire',
    summary: 'Expire a pending session now',
    tag: 'Records',
    params: sessionParams('The `sessionId` of a pending session.'),
    answer: ControlSessionSchema,
    run: (c, { params }) => c.control.expireSession(c.environment, params.sessionId),
  }),
  listPosPayments: controlRoute({
    method: 'get',
    path: '{environment}/pos-payments',
    summary: 'List stored POS payments',
    tag: 'Records',
    query: ListingQuery,
    answer: pageOf(PosPaymentSchema),
    run: (c, { query }) => c.control.listPosPayments(c.environment, query),
  }),
  getPosPayment: controlRoute({
    method: 'get',
    path: '{environment}/pos-payments/{posPaymentId}',
    summary: 'A POS payment with its modifications and webhook deliveries',
    tag: 'Records',
    params: posParams('The `posPaymentId`.'),
    answer: timelineOf(PosPaymentSchema),
    run: (c, { params }) => c.control.posPayment(c.environment, params.posPaymentId),
  }),
  resolvePosPayment: controlRoute({
    method: 'post',
    path: '{environment}/pos-payments/{posPaymentId}/resolve',
    summary: 'Resolve a pending or timed-out POS payment now',
    description: "Answers after the webhooks' first attempts.",
    tag: 'Records',
    params: posParams('The `posPaymentId` of a `pending` or `timeout` POS payment.'),
    body: z.object({ outcome: z.enum(['success', 'failed'], { error: OUTCOME }) }),
    answer: PosPaymentSchema,
    run: (c, { params, body }) => c.control.resolvePosPayment(c.environment, params.posPaymentId, body.outcome),
  }),
  listModifications: controlRoute({
    method: 'get',
    path: '{environment}/modifications',
    summary: 'List stored modifications',
    tag: 'Records',
    query: z.extend(ListingQuery, {
      type: z.optional(z.enum(['refund', 'capture', 'cancel', 'extend']).check(z.describe('Only this operation.'))),
    }),
    answer: pageOf(ModificationSchema),
    run: (c, { query }) => c.control.listModifications(c.environment, query),
  }),
  getModification: controlRoute({
    method: 'get',
    path: '{environment}/modifications/{operationReference}',
    summary: 'A modification with the webhook deliveries about it',
    tag: 'Records',
    params: z.object({ operationReference: id('The refund, capture, cancel or extend reference.') }),
    answer: timelineOf(ModificationSchema),
    run: (c, { params }) => c.control.modification(c.environment, params.operationReference),
  }),
} as const;

/** The simulated terminals' settings, in one environment. */
const TERMINAL_ROUTES = {
  listTerminals: controlRoute({
    method: 'get',
    path: '{environment}/terminals',
    summary: 'The simulated terminals, each with its processing time',
    tag: 'Terminals',
    answer: z.object({ terminals: z.array(TerminalSettingsSchema) }),
    run: (c) => ({ terminals: c.control.terminals(c.environment) }),
  }),
  setTerminal: controlRoute({
    method: 'put',
    path: '{environment}/terminals/{poiId}',
    summary: "Set a simulated terminal's processing time, or take it offline",
    description:
      "`processingMs`: how long the terminal takes to answer each POS payment, instead of the sandbox's `posDelayMs`; `null` goes back to it. Meanwhile the payment is in flight: listed `pending`, a resend with its `Idempotency-Key` waits for the answer, a new payment on the terminal is refused 409 / 13005. The sandbox clock governs it (`clock/advance` makes it due). A payment already at the terminal keeps the time it was sent with. `online`: `false` takes the terminal offline (its POS payments answered 502 / 13004, nothing charged; left out of `GET /pos/terminals?syncFromProvider=true`), `true` brings it online, `null` back to the simulated state. A field left out keeps its setting; reset keeps both.",
    tag: 'Terminals',
    params: z.object({ poiId: id('A `poiId` of the simulated terminals (`GET /pos/terminals`).') }),
    body: z.object({
      processingMs: z.optional(
        processingMs.check(
          z.meta({ description: `Milliseconds, 0 to ${MAX_PROCESSING_MS}; \`null\`: the sandbox's \`posDelayMs\`.`, examples: [35_000] }),
        ),
      ),
      online: z.optional(
        z
          .nullable(z.boolean({ error: 'online must be true, false or null' }))
          .check(
            z.meta({ description: '`false`: offline (502 / 13004); `true`: online; `null`: the simulated state.', examples: [false] }),
          ),
      ),
    }),
    answer: TerminalSettingsSchema,
    run: (c, { params, body }) => c.control.setTerminal(c.environment, params.poiId, body),
  }),
} as const;

/** The routes of webhook deliveries and events, in one environment. */
const DELIVERY_ROUTES = {
  listDeliveries: controlRoute({
    method: 'get',
    path: '{environment}/deliveries',
    summary: 'List webhook deliveries',
    tag: 'Webhooks',
    query: ListingQuery,
    answer: pageOf(DeliverySchema),
    run: (c, { query }) => c.control.listDeliveries(c.environment, query),
  }),
  getDelivery: controlRoute({
    method: 'get',
    path: '{environment}/deliveries/{deliveryId}',
    summary: 'A webhook delivery and its attempts',
    tag: 'Webhooks',
    params: deliveryParams,
    answer: DeliverySchema,
    run: (c, { params }) => c.control.delivery(c.environment, params.deliveryId),
  }),
  resendDelivery: controlRoute({
    method: 'post',
    path: '{environment}/deliveries/{deliveryId}/resend',
    summary: "Deliver a delivery's event again, as a new delivery to the same URL",
    tag: 'Webhooks',
    params: deliveryParams,
    answer: DeliverySchema,
    run: (c, { params }) => c.control.resendDelivery(c.environment, params.deliveryId),
  }),
  emitEvent: controlRoute({
    method: 'post',
    path: '{environment}/events',
    summary: 'Emit a webhook event for a record',
    description: '`AUTHORISATION` for a completed session or a POS payment with its result, `REFUND` for a resolved refund.',
    tag: 'Webhooks',
    body: z.object({
      eventCode: z.enum(['AUTHORISATION', 'REFUND'], { error: EVENT_CODE }),
      reference: z
        .string({ error: 'reference is required' })
        .check(z.minLength(1, 'reference is required'), z.describe('A sessionId, posPaymentId or refundReference.')),
    }),
    answer: z.array(DeliverySchema),
    run: (c, { body }) => c.control.emitEvent(c.environment, body.eventCode, body.reference),
  }),
} as const;

/** The routes of the clock and of the whole sandbox. */
const CLOCK_ROUTES = {
  getClock: controlRoute({
    method: 'get',
    path: 'clock',
    summary: 'The sandbox clock',
    tag: 'Clock',
    answer: ClockStateSchema,
    run: (c) => c.control.clock(),
  }),
  advanceClock: controlRoute({
    method: 'post',
    path: 'clock/advance',
    summary: 'Move the sandbox clock ahead',
    description: 'Scheduled work (expiry, POS answers, refunds, webhook retries) falls due in order, as if the time had passed.',
    tag: 'Clock',
    body: z.object({
      ms: z.optional(advanceMs.check(z.describe(`Milliseconds, at most ${MAX_ADVANCE_MS} (a year).`))),
      duration: z.optional(
        z
          .string({ error: ADVANCE })
          .check(z.regex(DURATION, ADVANCE), z.meta({ description: '`90s`, `5m`, `1h30m` or ISO 8601 `PT5M`.', examples: ['5m'] })),
      ),
    }),
    answer: ClockStateSchema,
    run: (c, { body }) => {
      const ms = parseDuration(body.ms ?? body.duration);
      if (ms === undefined) throw invalid(ADVANCE);
      return c.control.advanceClock(ms);
    },
  }),
  reset: controlRoute({
    method: 'post',
    path: 'reset',
    summary: 'Delete every record, stored response, delivery and scheduled job, and set the clock back',
    description: 'Keys, webhook URLs and terminal settings stay.',
    tag: 'Sandbox',
    answer: ClockStateSchema,
    run: async (c) => {
      await c.control.reset();
      return c.control.clock();
    },
  }),
} as const;

/** A rule added, or 400 with what is wrong with it (past the schema: the number of rules a tenant holds). */
function addFault(faults: { add(rule: unknown): z.input<typeof FaultRuleStateSchema> }, rule: unknown) {
  try {
    return faults.add(rule);
  } catch (error) {
    throw error instanceof FaultRuleError ? invalid(error.message) : error;
  }
}

/** The fault rules' routes. */
const FAULT_ROUTES = {
  listFaults: controlRoute({
    method: 'get',
    path: 'faults',
    summary: 'The fault rules',
    tag: 'Faults',
    answer: z.array(FaultRuleStateSchema),
    run: (c) => c.tenant.faults.list(),
  }),
  addFault: controlRoute({
    method: 'post',
    path: 'faults',
    summary: 'Add a fault rule',
    description: `Every answer a rule changed carries \`X-Sandbox-Fault: <rule id>\`. A tenant holds at most ${MAX_FAULT_RULES} rules: the next is refused with 400.`,
    tag: 'Faults',
    body: FaultRuleBody,
    answer: FaultRuleStateSchema,
    run: (c, { body }) => addFault(c.tenant.faults, body),
  }),
  clearFaults: controlRoute({
    method: 'delete',
    path: 'faults',
    summary: 'Remove every fault rule',
    tag: 'Faults',
    answer: z.array(FaultRuleStateSchema),
    run: (c) => {
      c.tenant.faults.clear();
      return c.tenant.faults.list();
    },
  }),
  removeFault: controlRoute({
    method: 'delete',
    path: 'faults/{ruleId}',
    summary: 'Remove one fault rule',
    tag: 'Faults',
    params: z.object({ ruleId: id('The rule id.') }),
    answer: FaultRuleStateSchema,
    run: (c, { params }) => {
      const removed = c.tenant.faults.remove(params.ruleId);
      if (!removed) throw notFound(`Fault rule ${params.ruleId}`);
      return removed;
    },
  }),
} as const;

/** The webhook URLs' routes. */
const WEBHOOK_URL_ROUTES = {
  listWebhookUrls: controlRoute({
    method: 'get',
    path: 'webhook-urls',
    summary: 'The webhook URLs',
    tag: 'Webhooks',
    answer: WebhookUrlsSchema,
    run: (c) => ({ urls: [...c.control.webhookUrls] }),
  }),
  addWebhookUrl: controlRoute({
    method: 'post',
    path: 'webhook-urls',
    summary: 'Add a webhook URL',
    tag: 'Webhooks',
    body: z.object({
      url: z
        .string({ error: WEBHOOK_URL })
        .check(z.regex(HTTP_URL, WEBHOOK_URL), z.refine(URL.canParse, WEBHOOK_URL), z.meta({ format: 'uri' })),
    }),
    answer: WebhookUrlsSchema,
    run: (c, { body }) => ({ urls: [...c.control.addWebhookUrl(body.url)] }),
  }),
  removeWebhookUrl: controlRoute({
    method: 'delete',
    path: 'webhook-urls',
    summary: 'Remove a webhook URL',
    tag: 'Webhooks',
    query: z.object({ url: z.string({ error: 'url is required: the URL to remove' }).check(z.describe('The URL to remove.')) }),
    answer: WebhookUrlsSchema,
    run: (c, { query }) => ({ urls: [...c.control.removeWebhookUrl(query.url)] }),
  }),
} as const;

/** The tenants' routes: the sandbox's own keys only. */
const TENANT_ROUTES = {
  listTenants: controlRoute({
    method: 'get',
    path: 'tenants',
    summary: 'The tenants made',
    description: TENANTS_ONLY,
    tag: 'Tenants',
    ownerOnly: true,
    answer: z.object({ tenants: z.array(TenantSchema) }),
    run: (c) => ({ tenants: c.tenants.list() }),
  }),
  createTenant: controlRoute({
    method: 'post',
    path: 'tenants',
    summary: 'Make a tenant: its own webcode, keys, client secrets, records and clock',
    description: `${TENANTS_ONLY} Anything left out is generated.`,
    tag: 'Tenants',
    ownerOnly: true,
    status: 201,
    body: z.object({
      webcode: z.optional(
        z
          .string({ error: 'webcode must be 1 to 32 characters A-Z, 0-9 or _' })
          .check(z.regex(/^[A-Z0-9_]{1,32}$/, 'webcode must be 1 to 32 characters A-Z, 0-9 or _')),
      ),
      name: z.optional(
        z
          .string({ error: 'name must be 1 to 100 characters' })
          .check(z.minLength(1, 'name must be 1 to 100 characters'), z.maxLength(100, 'name must be 1 to 100 characters')),
      ),
    }),
    answer: TenantSchema,
    run: (c, { body }) => c.tenants.create(body),
  }),
  removeTenant: controlRoute({
    method: 'delete',
    path: 'tenants/{webcode}',
    summary: 'Remove a tenant: its keys stop working, its records are gone',
    description: TENANTS_ONLY,
    tag: 'Tenants',
    ownerOnly: true,
    params: z.object({ webcode: id('The webcode of a tenant made.') }),
    answer: z.object({ webcode: z.string(), removed: z.literal(true) }),
    run: async (c, { params }) => {
      await c.tenants.remove(params.webcode);
      return { webcode: params.webcode, removed: true as const };
    },
  }),
} as const;

/** The client secret's rotation. */
const SECRET_ROUTES = {
  rotateClientSecret: controlRoute({
    method: 'post',
    path: '{environment}/client-secret/rotate',
    summary: "Rotate the environment's client secret",
    description:
      "Answers the new secret. The payment pages sign every token made from now on with it; tokens made before still carry the old one, so decode with both while customers come back (`decodeRedirectData(token, [current, previous])`). A made tenant's new secret is kept with its keys; the sandbox's own lasts until it stops.",
    tag: 'Sandbox',
    answer: z.object({ environment: z.enum(['test', 'live']), clientSecret: z.string() }),
    run: (c) => ({ environment: c.environment, clientSecret: c.tenants.rotateClientSecret(c.tenant, c.environment) }),
  }),
} as const;

/** Every control route, by the `operationId` the document gives it (prefixed `test`/`live` for a route of each environment). */
export const CONTROL_ROUTES = {
  ...RECORD_ROUTES,
  ...TERMINAL_ROUTES,
  ...REQUEST_ROUTES,
  ...DELIVERY_ROUTES,
  ...CLOCK_ROUTES,
  ...FAULT_ROUTES,
  ...WEBHOOK_URL_ROUTES,
  ...SECRET_ROUTES,
  ...TENANT_ROUTES,
} as const;
