/**
 * The OpenAPI 3.1 document of the sandbox's control API (`/_sandbox/...`): pay or expire sessions,
 * resolve POS payments, read records and deliveries, resend or emit webhooks, move the clock,
 * fault rules, webhook URLs, tenants, reset; and the step that serves it at `/_sandbox/openapi.json`
 * (no key), so that a test suite in any language can drive the sandbox. Its operations follow the control
 * router's tables (src/sandbox/control/routes.ts, src/sandbox/steps/tenants.ts; a test keeps them
 * equal), the fault rules' fields follow the sandbox's rule parser, and the routes a rule may name
 * are the API's own route table.
 */

import { documentHead, type ServerEntry } from '../../openapi/document.js';
import type { JsonObject } from '../../openapi/json-schema.js';
import { API_ROUTES } from '../api/routes.js';
import { EFFECT_FIELDS, FAULT_RULE_LIMITS, MAX_FAULT_RULES } from '../faults.js';
import { CONTROL_OPENAPI_PATH, openApiAnswer } from '../openapi.js';
import { SANDBOX_CODES } from '../responses.js';
import type { Step } from '../steps/chain.js';
import type { Located } from '../steps/request.js';
import { REQUEST_OPERATIONS, requestLogSchemas } from './requests.js';

/** One control operation: where, what it takes and what `data` it answers. */
export interface ControlOperationDoc {
  operationId: string;
  method: 'get' | 'post' | 'delete';
  /** After `/_sandbox/`; a path starting with `{environment}/` is made for `test/` and for `live/`, each needing a key of its environment. */
  path: string;
  summary: string;
  description?: string;
  tag: 'Records' | 'Requests' | 'Webhooks' | 'Clock' | 'Faults' | 'Tenants' | 'Sandbox';
  pathParams?: Record<string, string>;
  query?: Record<string, JsonObject & { description: string; required?: boolean }>;
  body?: JsonObject;
  /** Schema of `data` in the success envelope. */
  data: JsonObject;
  status?: '200' | '201';
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const page = (item: string) => ({
  type: 'object',
  properties: {
    items: { type: 'array', items: ref(item) },
    cursor: { type: ['string', 'null'] },
    hasMore: { type: 'boolean' },
    total: { type: 'integer' },
  },
  required: ['items', 'cursor', 'hasMore', 'total'],
});
const timeline = (record: string) => ({
  type: 'object',
  properties: {
    record: ref(record),
    modifications: { type: 'array', items: ref('SandboxModification') },
    deliveries: { type: 'array', items: ref('WebhookDelivery') },
  },
  required: ['record', 'modifications', 'deliveries'],
});

const LISTING_QUERY = {
  status: { type: 'string', description: 'Only records with this status.' },
  take: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size.' },
  cursor: { type: 'string', description: '`cursor` of the previous page.' },
  order: { type: 'string', enum: ['asc', 'desc'], default: 'asc', description: 'Creation order.' },
};

const range = ({ min, max }: { min: number; max: number }) => ({ type: 'integer', minimum: min, maximum: max });
const latencyMs = range(FAULT_RULE_LIMITS.latencyMs);
/** The schema of each field a fault effect may have, by name, or by `type.name` where effects differ (the parser's `EFFECT_FIELDS` says which effect has which). */
const EFFECT_FIELD_SCHEMAS: Record<string, JsonObject> = {
  'latency.ms': {
    anyOf: [latencyMs, { type: 'array', prefixItems: [latencyMs, latencyMs], minItems: 2, maxItems: 2, description: '[MIN, MAX]' }],
  },
  'delay.ms': { ...range(FAULT_RULE_LIMITS.delayMs), description: 'Milliseconds of the sandbox clock.' },
  'terminal.ms': range(FAULT_RULE_LIMITS.terminalMs),
  status: { type: 'integer', enum: [500, 502, 503, 504, 429] },
  when: { type: 'string', enum: ['before', 'after-commit'] },
  retryAfter: { ...range(FAULT_RULE_LIMITS.retryAfter), description: 'Seconds, sent as `Retry-After`.' },
  copies: range(FAULT_RULE_LIMITS.copies),
  outcome: { type: 'string', enum: ['busy', 'offline', 'slow'] },
};
const REQUIRED_EFFECT_FIELDS = new Set(['ms', 'status', 'when', 'copies', 'outcome']);

function effectSchema(): JsonObject {
  return {
    oneOf: Object.entries(EFFECT_FIELDS).map(([type, fields]) => ({
      title: type,
      type: 'object',
      properties: {
        type: { const: type },
        ...Object.fromEntries(
          fields.map((field) => [field, EFFECT_FIELD_SCHEMAS[`${type}.${field}`] ?? EFFECT_FIELD_SCHEMAS[field] ?? {}]),
        ),
      },
      required: ['type', ...fields.filter((field) => REQUIRED_EFFECT_FIELDS.has(field) && !(type === 'terminal' && field === 'ms'))],
      additionalProperties: false,
    })),
  };
}

const amount = {
  type: 'object',
  properties: { value: { type: 'integer' }, currency: { type: 'string' } },
  required: ['value', 'currency'],
};
const millis = { type: 'integer', description: 'Unix ms of the sandbox clock.' };
const nullableMillis = { type: ['integer', 'null'], description: 'Unix ms of the sandbox clock.' };
const environment = { type: 'string', enum: ['test', 'live'] };

/** The records the control API answers with (as `payment-service-sdk/sandbox` types them); other fields may be added. */
const SCHEMAS: Record<string, JsonObject> = {
  ControlSession: {
    type: 'object',
    description: 'A stored session (`SandboxSession`) and the link of its payment page.',
    properties: {
      environment,
      sessionId: { type: 'string' },
      paymentUrl: { type: 'string' },
      status: { type: 'string', enum: ['pending', 'completed', 'failed', 'expired', 'cancelled'] },
      amount,
      createdAt: millis,
      completedAt: nullableMillis,
      paymentReference: { type: ['string', 'null'] },
    },
    required: ['environment', 'sessionId', 'paymentUrl', 'status', 'amount', 'createdAt'],
  },
  SandboxPosPayment: {
    type: 'object',
    properties: {
      environment,
      posPaymentId: { type: 'string' },
      poiId: { type: 'string' },
      amount,
      status: { type: 'string', enum: ['pending', 'success', 'failed', 'timeout'] },
      isPreAuth: { type: 'boolean' },
      pspReference: { type: ['string', 'null'] },
      errorMessage: { type: ['string', 'null'] },
      createdAt: millis,
    },
    required: ['environment', 'posPaymentId', 'poiId', 'amount', 'status', 'createdAt'],
  },
  SandboxModification: {
    type: 'object',
    properties: {
      environment,
      operationReference: { type: 'string' },
      operationType: { type: 'string', enum: ['refund', 'capture', 'cancel', 'extend'] },
      paymentReference: { type: 'string' },
      sessionId: { type: 'string' },
      status: { type: 'string', enum: ['pending', 'received', 'success', 'failed'] },
      requestedAt: millis,
      resolvedAt: nullableMillis,
      amount: { anyOf: [amount, { type: 'null' }] },
      reason: { type: ['string', 'null'] },
    },
    required: ['environment', 'operationReference', 'operationType', 'paymentReference', 'status'],
  },
  WebhookDelivery: {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      url: { type: 'string' },
      environment,
      event: {
        type: 'object',
        properties: { event_code: { type: 'string' }, data: { type: 'object' } },
        required: ['event_code', 'data'],
      },
      attempts: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            at: millis,
            status: { type: ['integer', 'null'] },
            error: { type: ['string', 'null'] },
            durationMs: { type: 'integer' },
            responseBody: { type: ['string', 'null'] },
          },
        },
      },
      delivered: { type: 'boolean' },
      abandoned: { type: 'boolean' },
      createdAt: millis,
    },
    required: ['id', 'url', 'environment', 'event', 'attempts', 'delivered', 'abandoned', 'createdAt'],
  },
  ClockState: {
    type: 'object',
    properties: {
      epochMs: { type: 'integer', description: 'Sandbox time, Unix ms.' },
      iso: { type: 'string', description: 'Sandbox time, ISO 8601 in UTC.' },
      offsetMs: { type: 'integer', description: 'How far the sandbox clock runs ahead of real time, in ms.' },
    },
    required: ['epochMs', 'iso', 'offsetMs'],
  },
  FaultRule: {
    type: 'object',
    description:
      'Name a `route` (API effects: latency, error, reset, truncate; terminal effects on `POST /pos/payment`) or an `event` (webhook effects: duplicate, delay, drop, reorder).',
    properties: {
      environment,
      route: { type: 'string', enum: API_ROUTES.map((route) => route.template) },
      event: { type: 'string', enum: ['AUTHORISATION', 'REFUND'] },
      times: { ...range(FAULT_RULE_LIMITS.times), description: 'Strikes the next N matches only; default every match.' },
      probability: { type: 'number', minimum: 0, maximum: 1, description: 'Drawn from the stream seeded by the sandbox seed; default 1.' },
      effect: effectSchema(),
    },
    required: ['effect'],
    additionalProperties: false,
  },
  FaultRuleState: {
    type: 'object',
    description: 'A fault rule as the sandbox holds it: its fields, its id and how many times it has struck.',
    properties: { id: { type: 'string' }, injected: { type: 'integer' }, effect: { type: 'object' } },
    required: ['id', 'injected', 'effect'],
  },
  WebhookUrls: { type: 'object', properties: { urls: { type: 'array', items: { type: 'string' } } }, required: ['urls'] },
  Tenant: {
    type: 'object',
    properties: {
      webcode: { type: 'string' },
      name: { type: 'string' },
      keys: { type: 'object', properties: { test: { type: 'string' }, live: { type: 'string' } }, required: ['test', 'live'] },
      clientSecrets: { type: 'object', properties: { test: { type: 'string' }, live: { type: 'string' } }, required: ['test', 'live'] },
    },
    required: ['webcode', 'name', 'keys', 'clientSecrets'],
  },
};

const ENVIRONMENT = '{environment}';

/** Every control operation, as the control router answers it. */
export const CONTROL_OPERATIONS: readonly ControlOperationDoc[] = [
  {
    operationId: 'listSessions',
    method: 'get',
    path: '{environment}/sessions',
    summary: 'List stored sessions',
    tag: 'Records',
    query: LISTING_QUERY,
    data: page('ControlSession'),
  },
  ...REQUEST_OPERATIONS,
  {
    operationId: 'getSession',
    method: 'get',
    path: '{environment}/sessions/{sessionId}',
    summary: 'A session with its modifications and webhook deliveries',
    tag: 'Records',
    pathParams: { sessionId: 'The `sessionId`.' },
    data: timeline('ControlSession'),
  },
  {
    operationId: 'paySession',
    method: 'post',
    path: '{environment}/sessions/{sessionId}/pay',
    summary: 'Pay a pending session as a customer would on the payment page',
    description:
      "Answers after the webhooks' first attempts. `holderName` decides the outcome as on the Test form (`DECLINED`, `CARD_EXPIRED`, `ERROR`...; any other name pays).",
    tag: 'Records',
    pathParams: { sessionId: 'The `sessionId` of a pending session.' },
    body: { type: 'object', properties: { holderName: { type: 'string', description: 'Cardholder name; default a name that pays.' } } },
    data: ref('ControlSession'),
  },
  {
    operationId: 'expireSession',
    method: 'post',
    path: '{environment}/sessions/{sessionId}/expire',
    summary: 'Expire a pending session now',
    tag: 'Records',
    pathParams: { sessionId: 'The `sessionId` of a pending session.' },
    data: ref('ControlSession'),
  },
  {
    operationId: 'listPosPayments',
    method: 'get',
    path: '{environment}/pos-payments',
    summary: 'List stored POS payments',
    tag: 'Records',
    query: LISTING_QUERY,
    data: page('SandboxPosPayment'),
  },
  {
    operationId: 'getPosPayment',
    method: 'get',
    path: '{environment}/pos-payments/{posPaymentId}',
    summary: 'A POS payment with its modifications and webhook deliveries',
    tag: 'Records',
    pathParams: { posPaymentId: 'The `posPaymentId`.' },
    data: timeline('SandboxPosPayment'),
  },
  {
    operationId: 'resolvePosPayment',
    method: 'post',
    path: '{environment}/pos-payments/{posPaymentId}/resolve',
    summary: 'Resolve a pending or timed-out POS payment now',
    description: "Answers after the webhooks' first attempts.",
    tag: 'Records',
    pathParams: { posPaymentId: 'The `posPaymentId` of a `pending` or `timeout` POS payment.' },
    body: { type: 'object', properties: { outcome: { type: 'string', enum: ['success', 'failed'] } }, required: ['outcome'] },
    data: ref('SandboxPosPayment'),
  },
  {
    operationId: 'listModifications',
    method: 'get',
    path: '{environment}/modifications',
    summary: 'List stored modifications',
    tag: 'Records',
    query: {
      ...LISTING_QUERY,
      type: { type: 'string', enum: ['refund', 'capture', 'cancel', 'extend'], description: 'Only this operation.' },
    },
    data: page('SandboxModification'),
  },
  {
    operationId: 'getModification',
    method: 'get',
    path: '{environment}/modifications/{operationReference}',
    summary: 'A modification with the webhook deliveries about it',
    tag: 'Records',
    pathParams: { operationReference: 'The refund, capture, cancel or extend reference.' },
    data: timeline('SandboxModification'),
  },
  {
    operationId: 'listDeliveries',
    method: 'get',
    path: '{environment}/deliveries',
    summary: 'List webhook deliveries',
    tag: 'Webhooks',
    query: LISTING_QUERY,
    data: page('WebhookDelivery'),
  },
  {
    operationId: 'getDelivery',
    method: 'get',
    path: '{environment}/deliveries/{deliveryId}',
    summary: 'A webhook delivery and its attempts',
    tag: 'Webhooks',
    pathParams: { deliveryId: 'The delivery id (an integer).' },
    data: ref('WebhookDelivery'),
  },
  {
    operationId: 'resendDelivery',
    method: 'post',
    path: '{environment}/deliveries/{deliveryId}/resend',
    summary: "Deliver a delivery's event again, as a new delivery to the same URL",
    tag: 'Webhooks',
    pathParams: { deliveryId: 'The delivery id (an integer).' },
    data: ref('WebhookDelivery'),
  },
  {
    operationId: 'emitEvent',
    method: 'post',
    path: '{environment}/events',
    summary: 'Emit a webhook event for a record',
    description: '`AUTHORISATION` for a completed session or a POS payment with its result, `REFUND` for a resolved refund.',
    tag: 'Webhooks',
    body: {
      type: 'object',
      properties: {
        eventCode: { type: 'string', enum: ['AUTHORISATION', 'REFUND'] },
        reference: { type: 'string', description: 'A sessionId, posPaymentId or refundReference.' },
      },
      required: ['eventCode', 'reference'],
    },
    data: { type: 'array', items: ref('WebhookDelivery') },
  },
  { operationId: 'getClock', method: 'get', path: 'clock', summary: 'The sandbox clock', tag: 'Clock', data: ref('ClockState') },
  {
    operationId: 'advanceClock',
    method: 'post',
    path: 'clock/advance',
    summary: 'Move the sandbox clock ahead',
    description: 'Scheduled work (expiry, POS answers, refunds, webhook retries) falls due in order, as if the time had passed.',
    tag: 'Clock',
    body: {
      type: 'object',
      properties: {
        ms: { type: 'integer', minimum: 0, description: 'Milliseconds.' },
        duration: { type: 'string', description: '`90s`, `5m`, `1h30m` or ISO 8601 `PT5M`.', examples: ['5m'] },
      },
    },
    data: ref('ClockState'),
  },
  {
    operationId: 'reset',
    method: 'post',
    path: 'reset',
    summary: 'Delete every record, stored response, delivery and scheduled job, and set the clock back',
    description: 'Keys and webhook URLs stay.',
    tag: 'Sandbox',
    data: ref('ClockState'),
  },
  {
    operationId: 'listFaults',
    method: 'get',
    path: 'faults',
    summary: 'The fault rules',
    tag: 'Faults',
    data: { type: 'array', items: ref('FaultRuleState') },
  },
  {
    operationId: 'addFault',
    method: 'post',
    path: 'faults',
    summary: 'Add a fault rule',
    description: `Every answer a rule changed carries \`X-Sandbox-Fault: <rule id>\`. A tenant holds at most ${MAX_FAULT_RULES} rules: the next is refused with 400.`,
    tag: 'Faults',
    body: ref('FaultRule'),
    data: ref('FaultRuleState'),
  },
  {
    operationId: 'clearFaults',
    method: 'delete',
    path: 'faults',
    summary: 'Remove every fault rule',
    tag: 'Faults',
    data: { type: 'array', items: ref('FaultRuleState') },
  },
  {
    operationId: 'removeFault',
    method: 'delete',
    path: 'faults/{ruleId}',
    summary: 'Remove one fault rule',
    tag: 'Faults',
    pathParams: { ruleId: 'The rule id.' },
    data: ref('FaultRuleState'),
  },
  {
    operationId: 'listWebhookUrls',
    method: 'get',
    path: 'webhook-urls',
    summary: 'The webhook URLs',
    tag: 'Webhooks',
    data: ref('WebhookUrls'),
  },
  {
    operationId: 'addWebhookUrl',
    method: 'post',
    path: 'webhook-urls',
    summary: 'Add a webhook URL',
    tag: 'Webhooks',
    body: { type: 'object', properties: { url: { type: 'string', format: 'uri' } }, required: ['url'] },
    data: ref('WebhookUrls'),
  },
  {
    operationId: 'removeWebhookUrl',
    method: 'delete',
    path: 'webhook-urls',
    summary: 'Remove a webhook URL',
    tag: 'Webhooks',
    query: { url: { type: 'string', description: 'The URL to remove.', required: true } },
    data: ref('WebhookUrls'),
  },
  {
    operationId: 'listTenants',
    method: 'get',
    path: 'tenants',
    summary: 'The tenants made',
    description: "Only the sandbox's own keys may manage tenants.",
    tag: 'Tenants',
    data: { type: 'object', properties: { tenants: { type: 'array', items: ref('Tenant') } }, required: ['tenants'] },
  },
  {
    operationId: 'createTenant',
    method: 'post',
    path: 'tenants',
    summary: 'Make a tenant: its own webcode, keys, client secrets, records and clock',
    description: "Only the sandbox's own keys may manage tenants. Anything left out is generated.",
    tag: 'Tenants',
    body: {
      type: 'object',
      properties: {
        webcode: { type: 'string', pattern: '^[A-Z0-9_]{1,32}$' },
        name: { type: 'string', minLength: 1, maxLength: 100 },
      },
    },
    data: ref('Tenant'),
    status: '201',
  },
  {
    operationId: 'removeTenant',
    method: 'delete',
    path: 'tenants/{webcode}',
    summary: 'Remove a tenant: its keys stop working, its records are gone',
    description: "Only the sandbox's own keys may manage tenants.",
    tag: 'Tenants',
    pathParams: { webcode: 'The webcode of a tenant made.' },
    data: { type: 'object', properties: { webcode: { type: 'string' }, removed: { const: true } }, required: ['webcode', 'removed'] },
  },
];

const FAILURE = {
  type: 'object',
  properties: {
    success: { const: false },
    error: {
      type: 'object',
      properties: { message: { type: 'string' }, code: { type: 'integer' }, statusCode: { type: 'integer' }, traceId: { type: 'string' } },
      required: ['message', 'code', 'statusCode', 'traceId'],
    },
  },
  required: ['success', 'error'],
};

/** One operation; an operation of `{environment}` is made once per environment, at its literal path. */
function controlOperation(doc: ControlOperationDoc, scope: 'test' | 'live' | undefined): JsonObject {
  const parameters = [
    ...Object.entries(doc.pathParams ?? {}).map(([name, description]) => ({
      name,
      in: 'path',
      required: true,
      description,
      schema: name === 'deliveryId' ? { type: 'string', pattern: '^\\d{1,15}$' } : { type: 'string' },
    })),
    ...Object.entries(doc.query ?? {}).map(([name, { description, required, ...schema }]) => ({
      name,
      in: 'query',
      required: required ?? false,
      description,
      schema,
    })),
  ];
  return {
    operationId: scope ? `${scope}${doc.operationId[0]?.toUpperCase()}${doc.operationId.slice(1)}` : doc.operationId,
    summary: scope ? `${doc.summary} (${scope === 'test' ? 'Test' : 'Live'})` : doc.summary,
    ...(doc.description && { description: doc.description }),
    tags: [doc.tag],
    ...(parameters.length > 0 && { parameters }),
    ...(doc.body && {
      requestBody: {
        required: '$ref' in doc.body || doc.body.required !== undefined,
        content: { 'application/json': { schema: doc.body } },
      },
    }),
    responses: {
      [doc.status ?? '200']: {
        description: 'Done.',
        content: {
          'application/json': {
            schema: { type: 'object', properties: { success: { const: true }, data: doc.data }, required: ['success', 'data'] },
          },
        },
      },
      '4XX': { $ref: '#/components/responses/Failure' },
      default: { $ref: '#/components/responses/Failure' },
    },
  };
}

/** The control API's OpenAPI 3.1 document. */
export function controlApiDocument(servers: readonly ServerEntry[]): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const doc of CONTROL_OPERATIONS) {
    for (const scope of doc.path.startsWith(ENVIRONMENT) ? (['test', 'live'] as const) : [undefined]) {
      const path = `/_sandbox/${scope ? doc.path.replace(ENVIRONMENT, scope) : doc.path}`;
      paths[path] = { ...paths[path], [doc.method]: controlOperation(doc, scope) };
    }
  }
  const codes = Object.entries(SANDBOX_CODES)
    .map(([name, code]) => `${code} ${name}`)
    .join(', ');
  return {
    ...documentHead({
      title: 'Payment sandbox control API',
      description:
        "Drives the payment-service-sdk sandbox from outside its API: pay or expire sessions, resolve POS payments, read records and webhook deliveries, resend or emit webhooks, move the clock, inject faults, manage webhook URLs and tenants, reset. Authenticate with a sandbox key in `X-API-KEY`: under `/_sandbox/{environment}/` a key of that environment; elsewhere any key of the tenant (tenants: the sandbox's own keys only). Answers use the service's envelopes. The API itself is described at `/openapi.json`.",
      servers,
      tags: [
        { name: 'Records', description: 'Sessions, POS payments and modifications of one environment, and what to do to them.' },
        { name: 'Requests', description: 'The request log: what each request to the API sent and got back.' },
        { name: 'Webhooks', description: 'Deliveries, resends, events and the webhook URLs.' },
        { name: 'Clock', description: 'The sandbox clock.' },
        { name: 'Faults', description: 'Fault rules: what the sandbox gets wrong on purpose.' },
        { name: 'Tenants', description: 'Isolated tenants for parallel test workers.' },
        { name: 'Sandbox', description: 'The whole sandbox.' },
      ],
    }),
    paths,
    components: {
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-KEY',
          description: 'A sandbox key (`sk_test_sandbox` or `sk_live_sandbox` by default).',
        },
      },
      responses: {
        Failure: {
          description: `A failure, in the service's envelope. Codes of the sandbox's own failures: ${codes}; a wrong key answers 401 or 403 (11008), a bad value 400 (12001).`,
          content: { 'application/json': { schema: FAILURE } },
        },
      },
      schemas: { ...SCHEMAS, ...requestLogSchemas() },
    },
  };
}

/** Answers `/_sandbox/openapi.json` before the control API asks for a key; any other control path goes on. */
export function controlOpenApi(origin: (url: URL) => string): Step<Located> {
  return (context, next) =>
    context.url.pathname === CONTROL_OPENAPI_PATH
      ? openApiAnswer(context.request, context.url, origin(context.url), controlApiDocument)
      : next(context);
}
