/**
 * One MCP tool per operation of the service, made from the endpoint table that also makes the
 * OpenAPI document (src/openapi/endpoints.ts): named by its `operationId`, described by its summary,
 * its input the JSON Schema of its path parameters and its query or body (as the SDK takes them,
 * `webcode` aside: the client adds it), its output the JSON Schema of its answer. Each call goes
 * through the `PaymentClient`, so that validation, retries, POS recovery and errors are the SDK's.
 * The one hand-written part is {@link CALLS}: which client method runs which operation (a test
 * checks it names every operation and no other).
 */
import type { PaymentClient } from '../client.js';
import type { Page } from '../core/pagination.js';
import { ENDPOINTS, type EndpointDoc } from '../openapi/endpoints.js';
import { type JsonObject, jsonSchema } from '../openapi/json-schema.js';
import type { McpTool, MoneyMove, ToolCall } from './tool.js';

type Args = Record<string, unknown>;
type Call = (client: PaymentClient, args: Args, call: ToolCall) => Promise<unknown>;

const options = (call: ToolCall) => ({ idempotencyKey: call.idempotencyKey, signal: call.signal });
const read = (call: ToolCall) => ({ signal: call.signal });
const id = (args: Args, name: string) => args[name] as string;

/** Which client method runs each operation. Listings answer one page (`cursor` in, `nextCursor` out). */
export const CALLS: Record<string, Call> = {
  createSession: (client, args, call) => client.sessions.create(args as never, options(call)),
  retrieveSession: (client, args, call) => client.sessions.retrieve(id(args, 'sessionId'), read(call)),
  listSessions: (client, args, call) => client.sessions.list(args as never, read(call)).firstPage(),
  refund: (client, args, call) => client.modifications.refund(args as never, options(call)),
  capture: (client, args, call) => client.modifications.capture(args as never, options(call)),
  cancel: (client, args, call) => client.modifications.cancel(args as never, options(call)),
  extend: (client, args, call) => client.modifications.extend(args as never, options(call)),
  listSessionModifications: (client, args, call) => client.sessions.listModifications(id(args, 'sessionId'), read(call)),
  listPosPaymentModifications: (client, args, call) => client.pos.listModifications(id(args, 'posPaymentId'), read(call)),
  listModifications: (client, args, call) => client.modifications.list(args as never, read(call)).firstPage(),
  listTerminals: (client, args, call) => client.terminals.list(args as never, read(call)),
  // The charge goes through the SDK's recovery with its key: an uncertain outcome is resent with the
  // same key and looked up, never sent again with a new one.
  createPosPayment: (client, args, call) => client.pos.createPayment(args as never, options(call)),
  listPosPayments: (client, args, call) => client.pos.list(args as never, read(call)).firstPage(),
};

/** The operations that move money, each confirmed in Live and bounded by `maxAmount`. */
export const MONEY_MOVES: ReadonlySet<string> = new Set(['refund', 'capture', 'cancel', 'extend', 'createPosPayment']);

/** The key an array answer is put under, since a tool's structured output is an object. */
const ARRAY_KEYS: Record<string, string> = {
  listTerminals: 'terminals',
  listSessionModifications: 'modifications',
  listPosPaymentModifications: 'modifications',
};

/** The key of a paginated listing's items in the service's answer (`data.payments`, ...). */
function listingKey(response: JsonObject): string | undefined {
  const properties = response.properties as Record<string, JsonObject> | undefined;
  if (!properties?.meta) return undefined;
  return Object.keys(properties).find((name) => name !== 'meta' && properties[name]?.type === 'array');
}

/** The object schema of a params schema: a pipe's input side (the names the SDK takes). */
function objectOf(schema: NonNullable<EndpointDoc['body']>): JsonObject {
  const def = schema._zod.def as { type: string; in?: typeof schema };
  return jsonSchema(def.type === 'pipe' && def.in ? def.in : schema, 'request');
}

const IDEMPOTENCY_KEY: JsonObject = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description:
    'Idempotency-Key of this write. Leave it out to get one derived from the tool and its arguments (valid 24 h): a repeated identical call then returns the stored answer. Give a new key for a deliberate second, identical operation.',
};

function inputSchema(endpoint: EndpointDoc): JsonObject {
  const properties: Record<string, JsonObject> = {};
  const required: string[] = [];
  for (const [name, description] of Object.entries(endpoint.pathParams ?? {})) {
    properties[name] = { type: 'string', minLength: 1, description };
    required.push(name);
  }
  const params = endpoint.body ?? endpoint.query;
  if (params) {
    const converted = objectOf(params) as { properties?: Record<string, JsonObject>; required?: string[] };
    for (const [name, schema] of Object.entries(converted.properties ?? {})) {
      if (name === 'webcode') continue;
      const fallback = endpoint.defaults?.[endpoint.queryNames?.[name] ?? name];
      properties[name] = fallback === undefined ? schema : { ...schema, default: fallback };
    }
    required.push(...(converted.required ?? []).filter((name) => name !== 'webcode'));
  }
  if (endpoint.method === 'post') properties.idempotencyKey = IDEMPOTENCY_KEY;
  return { type: 'object', properties, ...(required.length > 0 && { required }), additionalProperties: false };
}

/** The output: the answer's schema, an array under {@link ARRAY_KEYS}, a listing with `nextCursor`, a write with its key. */
function outputSchema(endpoint: EndpointDoc): JsonObject {
  let schema = jsonSchema(endpoint.response, 'response');
  const arrayKey = ARRAY_KEYS[endpoint.operationId];
  if (arrayKey) {
    // The per-payment listings read an array or `{ modifications }`: the tool answers the array.
    const array = schema.type === 'array' ? schema : (schema.anyOf as JsonObject[] | undefined)?.find((part) => part.type === 'array');
    if (!array) throw new Error(`No array answer in the schema of ${endpoint.operationId}`);
    schema = { type: 'object', properties: { [arrayKey]: array }, required: [arrayKey] };
  }
  // An answer that may be null (extend's: the SDK answers `{}` then) is its object member.
  const object = (schema.anyOf as JsonObject[] | undefined)?.filter((part) => part.type === 'object');
  if (schema.type !== 'object' && object?.length === 1 && object[0]) schema = object[0];
  if (schema.type !== 'object') throw new Error(`The answer of ${endpoint.operationId} is not an object: give it a key in ARRAY_KEYS`);
  const properties = { ...(schema.properties as Record<string, JsonObject>) };
  const required = [...((schema.required as string[] | undefined) ?? [])];
  if (listingKey(schema)) {
    properties.nextCursor = {
      type: ['string', 'null'],
      description: 'Pass it as `cursor` to get the next page; null on the last page.',
    };
    required.push('nextCursor');
  }
  if (endpoint.method === 'post') {
    properties.idempotencyKey = { type: 'string', description: 'The Idempotency-Key this write was sent with.' };
    required.push('idempotencyKey');
  }
  return { ...schema, properties, required };
}

/** What a money move's arguments say: the amount, its currency and the payment or terminal. */
function moveOf(args: Args): MoneyMove {
  const amount = args.amount as { value?: unknown; currency?: unknown } | undefined;
  return {
    value: typeof amount?.value === 'number' ? amount.value : undefined,
    currency: typeof amount?.currency === 'string' ? amount.currency : undefined,
    reference: [args.paymentReference, args.poiId].find((value): value is string => typeof value === 'string'),
  };
}

/** The structured answer: an object as {@link outputSchema} describes it. */
function structured(endpoint: EndpointDoc, answer: unknown, key: string | undefined, listing: string | undefined): Record<string, unknown> {
  const arrayKey = ARRAY_KEYS[endpoint.operationId];
  let result: Record<string, unknown>;
  if (arrayKey) result = { [arrayKey]: answer };
  else if (listing) {
    const page = answer as Page<unknown>;
    result = { [listing]: page.items, meta: { cursor: page.cursor, hasMore: page.hasMore, total: page.total }, nextCursor: page.cursor };
  } else result = { ...(answer as Record<string, unknown>) };
  if (endpoint.method === 'post' && key !== undefined) result.idempotencyKey = key;
  return result;
}

/** The service's operations as tools, calling `client`. */
export function serviceTools(client: PaymentClient): McpTool[] {
  return ENDPOINTS.map((endpoint): McpTool => {
    const call = CALLS[endpoint.operationId];
    if (!call) throw new Error(`No client method for the operation ${endpoint.operationId}: add it to CALLS`);
    const write = endpoint.method === 'post';
    const movesMoney = MONEY_MOVES.has(endpoint.operationId);
    const output = outputSchema(endpoint);
    const listing = listingKey(output);
    return {
      name: endpoint.operationId,
      kind: 'service',
      description: [
        `${endpoint.summary}.`,
        endpoint.description,
        movesMoney ? 'Moves money: in Live the person confirms it, and `--max-amount` bounds it.' : undefined,
      ]
        .filter(Boolean)
        .join(' '),
      inputSchema: inputSchema(endpoint),
      outputSchema: output,
      annotations: {
        title: endpoint.summary,
        readOnlyHint: !write,
        destructiveHint: movesMoney,
        // Reads change nothing; a write's repeat with the same arguments gets the same key (derived,
        // 24 h), which the service runs once.
        idempotentHint: true,
        openWorldHint: true,
      },
      keyed: write,
      movesMoney,
      move: write ? moveOf : undefined,
      async run(args, context) {
        const { idempotencyKey: _given, ...params } = args;
        return structured(endpoint, await call(client, params, context), context.idempotencyKey, listing);
      },
    };
  });
}
