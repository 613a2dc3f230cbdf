/**
 * Every control route's query and body parsed by exactly the schema its document shows, over real
 * HTTP on 127.0.0.1: for each query parameter and body field of every operation of the control
 * document, the values its documented schema refuses (found with ajv from the document itself:
 * wrong kinds, out of range, not of its pattern or format, not of its enum) are refused with 400
 * naming it; and values it accepts (a date-time for `since`) are not refused.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SERVERS } from '../../src/openapi/document.js';
import type { JsonObject } from '../../src/openapi/json-schema.js';
import { controlApiDocument } from '../../src/sandbox/control/openapi.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { startSandbox } from './support.js';

const document = controlApiDocument(DEFAULT_SERVERS);
const schemas = (document.components as { schemas: Record<string, JsonObject> }).schemas;
const ajv = new Ajv2020({ strict: false, validateSchema: false });
(addFormats as unknown as (ajv: Ajv2020) => void)(ajv);

let sandbox: Sandbox;
beforeAll(async () => {
  ({ sandbox } = await startSandbox({ modificationResolveMs: 0 }));
});
afterAll(() => sandbox?.close());

function resolved(schema: JsonObject): JsonObject {
  return typeof schema.$ref === 'string' ? (schemas[schema.$ref.split('/').pop() ?? ''] ?? {}) : schema;
}

/** A valid body of each operation that takes one, so that one field at a time is at fault. */
const VALID_BODIES: Record<string, Record<string, unknown>> = {
  testPaySession: { holderName: 'Jane Tester' },
  testResolvePosPayment: { outcome: 'success' },
  testEmitEvent: { eventCode: 'AUTHORISATION', reference: 'X1' },
  advanceClock: { ms: 1 },
  addFault: { route: 'GET /pos/terminals', times: 1, effect: { type: 'truncate' } },
  addWebhookUrl: { url: 'http://127.0.0.1:9/hook' },
  createTenant: { name: 'Worker' },
  testSetTerminal: { processingMs: 10 },
};

/** Values to try as a query parameter (text, as a query carries it). */
const QUERY_CANDIDATES = [
  'zzz',
  '-1',
  '0',
  '101',
  '99999',
  '1.5',
  '',
  ' ',
  'x1',
  'a1',
  'd1',
  '2026-13-01T00:00:00Z',
  '2026-02-31T10:00:00Z',
  '2026-01-31',
  'tomorrow',
];
/** Values to try as a body field (JSON of any kind). */
const BODY_CANDIDATES: unknown[] = [
  12345,
  'zzz',
  -1,
  1.5,
  10 ** 12,
  99_999_999_999,
  '',
  'ab',
  '   x   ',
  true,
  null,
  [],
  {},
  'mailto:a@b.example',
  'not a url',
  'x'.repeat(101),
];

/** The query candidates the documented schema refuses: an integer's text read as the number the router reads. */
function refusedQueryValues(schema: JsonObject): string[] {
  const validate = ajv.compile(schema);
  return QUERY_CANDIDATES.filter((text) => {
    const asValue = schema.type === 'integer' && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    return !validate(asValue);
  });
}

function refusedBodyValues(schema: JsonObject): unknown[] {
  const validate = ajv.compile({ ...schema, components: { schemas } } as JsonObject);
  return BODY_CANDIDATES.filter((value) => !validate(value));
}

interface Case {
  operationId: string;
  method: string;
  target: string;
  name: string;
  where: 'query' | 'body';
  value: unknown;
}

/** Every operation of the Test environment and of no environment, as the document lists them. */
function operations(): { operationId: string; method: string; target: string; operation: Record<string, any> }[] {
  const found = [];
  for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
    if (path.startsWith('/_sandbox/live/')) continue;
    const target = path
      .slice('/_sandbox/'.length)
      .replace(/\{(\w+)\}/g, (_all, name: string) => (name === 'deliveryId' ? '1' : name === 'poiId' ? 'V400m-TEST-000001' : 'X1'));
    for (const [method, operation] of Object.entries(methods))
      found.push({ operationId: operation.operationId, method, target, operation });
  }
  return found;
}

function cases(): { refused: Case[]; unconstrained: string[] } {
  const refused: Case[] = [];
  const unconstrained: string[] = [];
  for (const { operationId, method, target, operation } of operations()) {
    for (const parameter of (operation.parameters ?? []) as JsonObject[]) {
      if (parameter.in !== 'query') continue;
      const values = refusedQueryValues(parameter.schema as JsonObject);
      const name = String(parameter.name);
      if (values.length === 0) unconstrained.push(`${operationId} ?${name}`);
      for (const value of values) refused.push({ operationId, method, target, name, where: 'query', value });
    }
    const body = operation.requestBody?.content['application/json'].schema as JsonObject | undefined;
    if (body === undefined) continue;
    for (const [name, schema] of Object.entries((resolved(body).properties ?? {}) as Record<string, JsonObject>)) {
      const values = refusedBodyValues(schema);
      if (values.length === 0) unconstrained.push(`${operationId} ${name}`);
      for (const value of values) refused.push({ operationId, method, target, name, where: 'body', value });
    }
  }
  return { refused, unconstrained };
}

async function send(item: Omit<Case, 'value'>, value: unknown): Promise<{ status: number; body: any }> {
  const url = new URL(`${sandbox.baseUrl}/_sandbox/${item.target}`);
  if (item.where === 'query') url.searchParams.set(item.name, String(value));
  const body = item.where === 'body' ? { ...VALID_BODIES[item.operationId], [item.name]: value } : undefined;
  const response = await fetch(url, {
    method: item.method.toUpperCase(),
    headers: { 'x-api-key': sandbox.keys.test, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

describe("every control route's query and body, as its document shows them", () => {
  it('refuses each value a documented query or body schema refuses, with 400 naming the parameter', async () => {
    const { refused } = cases();
    const operationsWithBody = operations().filter(({ operation }) => operation.requestBody !== undefined);
    expect(operationsWithBody.map(({ operationId }) => operationId).sort()).toEqual(Object.keys(VALID_BODIES).sort());
    const failures: string[] = [];
    for (const item of refused) {
      const answer = await send(item, item.value);
      const message: string = answer.body?.error?.message ?? '';
      if (answer.status !== 400 || !message.includes(item.name))
        failures.push(`${item.operationId} ${item.where} ${item.name}=${JSON.stringify(item.value)}: ${answer.status} ${message}`);
    }
    expect(failures).toEqual([]);
    // since and until, status, take, order, type, cursor, url..., in each listing and body.
    expect(refused.length).toBeGreaterThan(150);
    const named = new Set(refused.map((item) => `${item.operationId}.${item.name}`));
    for (const name of ['testListRequests.since', 'testListRequests.until', 'testClearRequests.since', 'testListRequests.status'])
      expect(named, name).toContain(name);
  });

  it('refuses since and until unless ISO 8601 date-times, as the document says, and takes those it accepts', async () => {
    for (const operation of ['GET', 'DELETE'])
      for (const name of ['since', 'until']) {
        for (const value of ['-1', '0', '101', '99999', '2026-01-31', '2026-02-31T10:00:00Z', 'Tue, 01 Dec 2026 10:00:00 GMT']) {
          const answer = await send({ operationId: '', method: operation, target: 'test/requests', name, where: 'query' }, value);
          expect(answer.status, `${operation} ${name}=${value}`).toBe(400);
          expect(answer.body.error.message).toContain(`${name} must be an ISO 8601 date-time`);
        }
        for (const value of ['2026-01-31T10:00:00Z', '2026-01-31T10:00:00.250+01:00', '2026-01-31t10:00:00z']) {
          const answer = await send({ operationId: '', method: operation, target: 'test/requests', name, where: 'query' }, value);
          expect(answer.status, `${operation} ${name}=${value}`).toBe(200);
        }
      }
    await expect(sandbox.requests.list({ since: '99999' })).rejects.toMatchObject({ status: 400 });
  });

  it('lists what no schema constrains: free text only (names, ids, the status of a record listing)', () => {
    const { unconstrained } = cases();
    for (const name of unconstrained)
      expect(name).toMatch(/\?(status|operation|method|idempotencyKey|traceId|reference|url)$|route$|reference$/);
  });
});
