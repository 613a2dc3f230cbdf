/**
 * The OpenAPI 3.1 document of the sandbox's control API (`/_sandbox/...`): pay or expire sessions,
 * resolve POS payments, set terminals' processing time, read records and deliveries, resend or emit webhooks, move the clock,
 * fault rules, webhook URLs, tenants, reset; and the step that serves it at `/_sandbox/openapi.json`
 * (no key), so that a test suite in any language can drive the sandbox. It is made from the
 * declared routes (routes.ts): their paths, parameter, query and body schemas and answers, with the
 * project's Zod-to-JSON-Schema conversion, as the service's document is made from its endpoints.
 */

import type * as z from 'zod/mini';
import { documentHead, type ServerEntry } from '../../openapi/document.js';
import { type JsonObject, jsonSchema } from '../../openapi/json-schema.js';
import { CONTROL_OPENAPI_PATH, openApiAnswer } from '../openapi.js';
import { SANDBOX_CODES } from '../responses.js';
import type { Step } from '../steps/chain.js';
import type { Located } from '../steps/request.js';
import type { ControlRoute } from './route.js';
import { CONTROL_ROUTES } from './routes.js';
import { CONTROL_SCHEMA_NAMES } from './schemas.js';

const ENVIRONMENT = '{environment}';

/** A schema as the document shows it: a `$ref` for a named one, else converted (its named parts as `$ref`s). */
function schemaOf(schema: z.core.$ZodType): JsonObject {
  const name = CONTROL_SCHEMA_NAMES.get(schema);
  return name === undefined ? jsonSchema(schema, 'response', CONTROL_SCHEMA_NAMES) : { $ref: `#/components/schemas/${name}` };
}

/** The parameters of an object schema, each with its description beside its schema. */
function parametersOf(schema: z.core.$ZodType | undefined, where: 'path' | 'query'): JsonObject[] {
  if (schema === undefined) return [];
  const { properties = {}, required = [] } = schemaOf(schema) as { properties?: Record<string, JsonObject>; required?: string[] };
  return Object.entries(properties).map(([name, { description, ...property }]) => ({
    name,
    in: where,
    required: where === 'path' || required.includes(name),
    ...(description !== undefined && { description }),
    schema: property,
  }));
}

/** One operation; a route of `{environment}` is made once per environment, at its literal path. */
function controlOperation(operationId: string, route: ControlRoute, scope: 'test' | 'live' | undefined): JsonObject {
  const parameters = [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query')];
  const body = route.body === undefined ? undefined : schemaOf(route.body);
  return {
    operationId: scope ? `${scope}${operationId[0]?.toUpperCase()}${operationId.slice(1)}` : operationId,
    summary: scope ? `${route.summary} (${scope === 'test' ? 'Test' : 'Live'})` : route.summary,
    ...(route.description && { description: route.description }),
    tags: [route.tag],
    ...(parameters.length > 0 && { parameters }),
    ...(body && {
      requestBody: {
        // Required where the body has a required field (a rule, an outcome); elsewhere it may be left out.
        required: '$ref' in body || (Array.isArray(body.required) && body.required.length > 0),
        content: { 'application/json': { schema: body } },
      },
    }),
    responses: {
      [String(route.status ?? 200)]: {
        description: 'Done.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: { success: { const: true }, data: schemaOf(route.answer) },
              required: ['success', 'data'],
            },
          },
        },
      },
      '4XX': { $ref: '#/components/responses/Failure' },
      default: { $ref: '#/components/responses/Failure' },
    },
  };
}

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

/** The control API's OpenAPI 3.1 document. */
export function controlApiDocument(servers: readonly ServerEntry[]): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const [operationId, route] of Object.entries(CONTROL_ROUTES) as [string, ControlRoute][]) {
    for (const scope of route.scoped ? (['test', 'live'] as const) : [undefined]) {
      const path = `/_sandbox/${scope ? route.path.replace(ENVIRONMENT, scope) : route.path}`;
      paths[path] = { ...paths[path], [route.method]: controlOperation(operationId, route, scope) };
    }
  }
  const schemas = Object.fromEntries(
    [...CONTROL_SCHEMA_NAMES].map(([schema, name]) => [name, jsonSchema(schema, 'response', CONTROL_SCHEMA_NAMES)]),
  );
  const codes = Object.entries(SANDBOX_CODES)
    .map(([name, code]) => `${code} ${name}`)
    .join(', ');
  return {
    ...documentHead({
      title: 'Payment sandbox control API',
      description:
        "Drives the payment-service-sdk sandbox from outside its API: pay or expire sessions, resolve POS payments, set a terminal's processing time, read records and webhook deliveries, resend or emit webhooks, move the clock, inject faults, manage webhook URLs and tenants, reset. Authenticate with a sandbox key in `X-API-KEY`: under `/_sandbox/{environment}/` a key of that environment; elsewhere any key of the tenant (tenants: the sandbox's own keys only). Answers use the service's envelopes. The API itself is described at `/openapi.json`.",
      servers,
      tags: [
        { name: 'Records', description: 'Sessions, POS payments and modifications of one environment, and what to do to them.' },
        { name: 'Terminals', description: "The simulated terminals and the sandbox's settings of them (processing time)." },
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
      schemas,
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
