/**
 * The service's OpenAPI 3.1 document, built from the endpoint table and the SDK's Zod schemas:
 * both path families (Live `/external/v1/...`, Test `/external/v1/test/...`), the envelopes, the
 * documented failures per endpoint, `X-API-KEY`, `Idempotency-Key` on the writes and the webhooks.
 * The build writes it to `dist/openapi.json` (`payment-service-sdk/openapi.json`); the sandbox
 * serves it at `/openapi.json` with its own origin as the server.
 */
import type * as z from 'zod/mini';
import { AuthorisationEventSchema, RefundEventSchema } from '../schemas/webhooks.js';
import { VERSION } from '../version.js';
import { type DocumentedFailure, ENDPOINTS, type EndpointDoc } from './endpoints.js';
import { type JsonObject, jsonSchema } from './json-schema.js';

/** Where the document says the service is. */
export interface ServerEntry {
  url: string;
  description: string;
}

/** The default server: the service's base address is not published, so the sandbox's default is named. */
export const DEFAULT_SERVERS: readonly ServerEntry[] = [
  {
    url: 'http://127.0.0.1:4010',
    description:
      "The sandbox as `npx payment-service-sdk sandbox --port 4010` starts it. The real service's base address is given with your keys.",
  },
];

const WEBCODE = { type: 'string', minLength: 1, description: 'The business identifier; it must equal the webcode bound to the API key.' };

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The failure envelope: `success` false and the error; `code` open, since the complete list of codes is not shown. */
function failureEnvelope(codes: readonly number[]): JsonObject {
  const code =
    codes.length === 0
      ? { type: 'integer', description: 'The service code; none is shown for this failure.' }
      : {
          anyOf: [{ type: 'integer', enum: [...codes] }, { type: 'integer' }],
          description: `Documented codes: ${codes.join(', ')}. The complete list of codes is not shown: others may come.`,
        };
  return {
    type: 'object',
    properties: {
      success: { const: false },
      error: {
        type: 'object',
        properties: {
          message: { type: 'string' },
          code,
          statusCode: { type: 'integer', description: 'Equal to the HTTP status.' },
          traceId: { type: 'string' },
        },
        required: ['message', 'code', 'statusCode', 'traceId'],
      },
    },
    required: ['success', 'error'],
  };
}

function successEnvelope(data: JsonObject, dataRequired: boolean): JsonObject {
  return {
    type: 'object',
    properties: { success: { const: true }, data },
    required: dataRequired ? ['success', 'data'] : ['success'],
  };
}

/** The answers of one status: the causes in the description, one example per documented code. */
function failureResponse(status: number, failures: readonly DocumentedFailure[]): JsonObject {
  const codes = failures.map((failure) => failure.code).filter((code) => code !== null);
  // An example per documented code, and per code the sandbox answers where the reference shows none.
  const examples = Object.fromEntries(
    failures.flatMap((failure) => {
      const code = failure.code ?? failure.sandboxCode;
      if (code === undefined) return [];
      const value = { success: false, error: { message: failure.message, code, statusCode: status, traceId: 'trace-0001' } };
      return [[String(code), { summary: failure.cause, value }]];
    }),
  );
  return {
    description: failures
      .map((failure) => {
        const code =
          failure.code ?? (failure.sandboxCode === undefined ? 'No code' : `No code shown (the sandbox: ${failure.sandboxCode})`);
        return `${code}: ${failure.cause}${failure.cause.endsWith('`') ? '' : '.'}`;
      })
      .join(' '),
    content: { 'application/json': { schema: failureEnvelope(codes), ...(Object.keys(examples).length > 0 && { examples }) } },
  };
}

/** Where a failure answer is kept in `components.responses`: by status and documented codes, shared by the endpoints that answer it. */
function failureResponseName(status: number, failures: readonly DocumentedFailure[]): string {
  const named = failures.find((failure) => failure.responseName !== undefined)?.responseName;
  if (named !== undefined) return named;
  const codes = failures.map((failure) => failure.code).filter((code) => code !== null);
  return [`Failure${status}`, ...codes].join('_');
}

const DEFAULT_FAILURE = {
  description:
    'Any other failure, in the failure envelope (not shown in the reference: an unknown path, a body too large, rate limiting, a server error...). A missing or unknown key is a 403 with 11008, and an unknown record a 404, both listed with the operations.',
  content: { 'application/json': { schema: failureEnvelope([]) } },
};

/** The query parameters of a GET: `webcode`, then the SDK's params under their wire names. */
function queryParameters(endpoint: EndpointDoc): JsonObject[] {
  const parameters: JsonObject[] = [{ name: 'webcode', in: 'query', required: true, schema: WEBCODE }];
  if (!endpoint.query) return parameters;
  const def = endpoint.query._zod.def as { type: string; in?: z.core.$ZodType };
  const object = def.type === 'pipe' && def.in ? def.in : endpoint.query;
  const converted = jsonSchema(object, 'request') as { properties: Record<string, JsonObject>; required?: string[] };
  for (const [field, schema] of Object.entries(converted.properties)) {
    const name = endpoint.queryNames?.[field] ?? field;
    const fallback = endpoint.defaults?.[name];
    parameters.push({
      name,
      in: 'query',
      required: converted.required?.includes(field) ?? false,
      schema: fallback === undefined ? schema : { ...schema, default: fallback },
    });
  }
  return parameters;
}

/**
 * The body of a POST: the SDK's params and `webcode`, required. A field the service defaults says
 * its default in its description, not as `default`: generators read `default` as "always there"
 * (openapi-typescript's `--default-non-nullable`, on by default, makes such a field required), and
 * in a request the field is the caller's to leave out.
 */
function requestBody(endpoint: EndpointDoc, body: z.core.$ZodType): JsonObject {
  const converted = jsonSchema(body, 'request') as { properties: Record<string, JsonObject>; required?: string[] };
  const properties = Object.fromEntries(
    Object.entries(converted.properties)
      .filter(([name]) => name !== 'webcode')
      .map(([name, schema]) => {
        const fallback = endpoint.defaults?.[name];
        if (fallback === undefined) return [name, schema];
        const stated = `Optional: the service uses ${JSON.stringify(fallback)} when it is left out.`;
        return [name, { ...schema, description: [schema.description, stated].filter(Boolean).join(' ') }];
      }),
  );
  return {
    ...converted,
    properties: { webcode: WEBCODE, ...properties },
    required: ['webcode', ...(converted.required ?? []).filter((name) => name !== 'webcode')],
  };
}

function requestName(endpoint: EndpointDoc): string {
  return `${endpoint.operationId[0]?.toUpperCase()}${endpoint.operationId.slice(1)}Request`;
}

/** One operation under one path family; its failure answers are added to `responses`. */
function operation(endpoint: EndpointDoc, test: boolean, responses: JsonObject): JsonObject {
  const write = endpoint.method === 'post';
  const pathParameters = Object.entries(endpoint.pathParams ?? {}).map(([name, description]) => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: { type: 'string', minLength: 1 },
  }));
  const parameters = [...pathParameters, ...(write ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : queryParameters(endpoint))];
  if (!write && endpoint.example.request) {
    const example = { webcode: 'SHOP1', ...endpoint.example.request };
    for (const parameter of parameters as JsonObject[]) {
      const value = example[parameter.name as keyof typeof example];
      if (value !== undefined && parameter.in === 'query') parameter.example = value;
    }
  }
  const byStatus = new Map<number, DocumentedFailure[]>();
  for (const failure of endpoint.failures) byStatus.set(failure.status, [...(byStatus.get(failure.status) ?? []), failure]);
  const environment = test ? 'Test' : 'Live';
  return {
    operationId: test ? `test${endpoint.operationId[0]?.toUpperCase()}${endpoint.operationId.slice(1)}` : endpoint.operationId,
    summary: `${endpoint.summary} (${environment})`,
    description: [
      endpoint.description,
      test
        ? 'Test environment: needs a Test key (scope `external_api_test`); simulates payments, moves no money.'
        : 'Live environment: needs a Live key (scope `external_api_live`).',
    ]
      .filter(Boolean)
      .join('\n\n'),
    tags: [endpoint.tag],
    ...(parameters.length > 0 && { parameters }),
    ...(write && {
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: ref(requestName(endpoint)),
            example: { webcode: 'SHOP1', ...endpoint.example.request },
          },
        },
      },
    }),
    responses: {
      [endpoint.status]: {
        description: endpoint.status === '2XX' ? 'Accepted. The success status is not stated in the reference.' : 'Success.',
        content: {
          'application/json': {
            schema: successEnvelope(ref(endpoint.responseName), endpoint.status !== '2XX'),
            example: { success: true, data: endpoint.example.data },
          },
        },
      },
      ...Object.fromEntries(
        [...byStatus].map(([status, failures]) => {
          const name = failureResponseName(status, failures);
          responses[name] ??= failureResponse(status, failures);
          return [String(status), { $ref: `#/components/responses/${name}` }];
        }),
      ),
      default: { $ref: '#/components/responses/Failure' },
    },
  };
}

function webhook(operationId: string, summary: string, schemaName: string, example: unknown): JsonObject {
  return {
    post: {
      operationId,
      summary,
      description:
        'Sent to the webhook URL configured for the business. How the URL is configured, how deliveries are authenticated or signed, and the retry policy: not shown. Other event codes (capture, cancel, extend, chargeback) are not shown either.',
      security: [],
      requestBody: { required: true, content: { 'application/json': { schema: ref(schemaName), example } } },
      responses: { '200': { description: 'Received. Answer 2xx once the event is stored.' } },
    },
  };
}

/** A tag of an OpenAPI document: a group of operations. */
export interface DocumentTag {
  name: string;
  description: string;
}

/**
 * What the service's document and the sandbox control API's begin with: OpenAPI 3.1, the info
 * block, the servers, the one security scheme (`ApiKey`, defined in each document's components)
 * and the tags.
 */
export function documentHead(head: {
  title: string;
  description: string;
  servers: readonly ServerEntry[];
  tags: readonly DocumentTag[];
}): JsonObject {
  return {
    openapi: '3.1.0',
    info: { title: head.title, version: VERSION, description: head.description, license: { name: 'MIT', identifier: 'MIT' } },
    // No `jsonSchemaDialect`: 3.1's default is that same OAS dialect, and given explicitly it makes
    // Prism 5.16 validate no body at all (its ajv cannot compile a schema of that `$schema`).
    servers: head.servers.map((server) => ({ ...server })),
    security: [{ ApiKey: [] }],
    tags: head.tags.map((tag) => ({ ...tag })),
  };
}

/** The two webhook events, with an example each. */
function webhookEntries(): JsonObject {
  return {
    AUTHORISATION: webhook(
      'authorisationWebhook',
      'A payment was authorised, or a POS payment completed after a timeout',
      'AuthorisationEvent',
      {
        event_code: 'AUTHORISATION',
        data: {
          amount: 2590,
          currency: 'EUR',
          paymentReference: 'SHOP1-PXTT-1001',
          paymentStatus: 'AUTHORISED',
          description: 'Order 1042',
          customReference: 'order-1042',
          paymentSource: 'external_api',
        },
      },
    ),
    REFUND: webhook('refundWebhook', 'A refund was resolved', 'RefundEvent', {
      event_code: 'REFUND',
      data: {
        amount: 1000,
        currency: 'EUR',
        paymentReference: 'SHOP1-PXTT-1001',
        refundReason: 'Customer returned one item',
        refundReference: 'SHOP1-RFXT-1',
        status: 'success',
        customReference: 'order-1042',
        paymentSource: 'external_api',
      },
    }),
  };
}

/** The security scheme and the `Idempotency-Key` parameter every operation refers to (made anew for each document). */
function sharedComponents(): JsonObject {
  return {
    securitySchemes: {
      ApiKey: {
        type: 'apiKey',
        in: 'header',
        name: 'X-API-KEY',
        description:
          'A Live key (scope `external_api_live`) reaches only `/external/v1/...`, a Test key (`external_api_test`) only `/external/v1/test/...`. Each key is bound to one webcode and may carry an IP allow-list.',
      },
    },
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Optional on writes; a UUID is recommended. The same key with the same request is processed once and later requests get the stored response. The same key with another body answers 409 (`Idempotency key reused with a different request body.`), on another endpoint 409 (`Idempotency key already used for a different endpoint.`).',
        schema: { type: 'string', minLength: 1 },
        example: '7d4c2b0e-3f1a-4c8e-9b52-1a2b3c4d5e6f',
      },
    },
  };
}

/** The service's OpenAPI 3.1 document. */
export function openApiDocument(servers: readonly ServerEntry[] = DEFAULT_SERVERS): JsonObject {
  const responses: JsonObject = { Failure: DEFAULT_FAILURE };
  const schemas: JsonObject = {
    AuthorisationEvent: jsonSchema(AuthorisationEventSchema, 'response'),
    RefundEvent: jsonSchema(RefundEventSchema, 'response'),
  };
  const paths: Record<string, JsonObject> = {};
  for (const endpoint of ENDPOINTS) {
    schemas[endpoint.responseName] ??= jsonSchema(endpoint.response, 'response');
    if (endpoint.body) schemas[requestName(endpoint)] = requestBody(endpoint, endpoint.body);
    for (const test of [false, true]) {
      const path = `/external/v1${test ? '/test' : ''}${endpoint.path}`;
      paths[path] = { ...paths[path], [endpoint.method]: operation(endpoint, test, responses) };
    }
  }
  return {
    ...documentHead({
      title: 'Payment service: online sessions, POS payments, modifications and webhooks',
      description:
        'Generated from the Zod schemas of payment-service-sdk. Every request carries `X-API-KEY` and `webcode` (in the body of a POST, as a query parameter of a GET). Live paths start with `/external/v1/`, Test paths with `/external/v1/test/`; a key reaches only its own environment. Answers use the envelopes `{ success: true, data }` and `{ success: false, error: { message, code, statusCode, traceId } }`. Where the reference says "not shown", the schemas stay open: unknown fields and values are allowed in answers.',
      servers,
      tags: [
        { name: 'Sessions', description: 'Online payments through the hosted payment page.' },
        { name: 'Modifications', description: 'Refund, capture, cancel and extend, addressed by `paymentReference`.' },
        { name: 'POS payments', description: 'Charges sent to a physical terminal.' },
        { name: 'Terminals', description: 'The boarded terminals.' },
      ],
    }),
    paths,
    webhooks: webhookEntries(),
    components: {
      ...sharedComponents(),
      responses,
      schemas,
    },
  };
}
