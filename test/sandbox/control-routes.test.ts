/**
 * The control API's routes as declared once (src/sandbox/control/routes.ts), over real HTTP on
 * 127.0.0.1: the router answers every declared route at its path and method and nothing else (404,
 * 405); what a route's schemas refuse is refused, each body field and query parameter of the
 * document given a value of the wrong kind answering 400 in the envelope and naming that field; and
 * the typed methods, which run the same routes, refuse a bad body with the route's very message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SERVERS } from '../../src/openapi/document.js';
import type { JsonObject } from '../../src/openapi/json-schema.js';
import { controlApiDocument } from '../../src/sandbox/control/openapi.js';
import { CONTROL_ROUTES } from '../../src/sandbox/control/routes.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { startSandbox } from './support.js';

const document = controlApiDocument(DEFAULT_SERVERS);
const schemas = (document.components as { schemas: Record<string, JsonObject> }).schemas;

let sandbox: Sandbox;
beforeAll(async () => {
  ({ sandbox } = await startSandbox({ modificationResolveMs: 0 }));
});
afterAll(() => sandbox?.close());

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${sandbox.baseUrl}/_sandbox/${path}`, {
    method,
    headers: { 'x-api-key': sandbox.keys.test, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

/** A declared route's path in the Test environment, its parameters filled with values of their form. */
function pathOf(path: string): string {
  return path
    .replace('{environment}', 'test')
    .replace(/\{(\w+)\}/g, (_all, name: string) => (name === 'deliveryId' ? '1' : name === 'poiId' ? 'V400m-TEST-000001' : 'X1'));
}

function expectRefused(answer: { status: number; body: any }, status: number, code: number, naming: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body).toMatchObject({ success: false, error: { code, statusCode: status } });
  expect(answer.body.error.message).toContain(naming);
}

describe('the router answers the declared routes', () => {
  it('reaches every declared route at its path and method; any other method is 405, a path of none 404', async () => {
    const routes = Object.values(CONTROL_ROUTES);
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      const path = pathOf(route.path);
      const answer = await call(route.method.toUpperCase(), path, route.method === 'post' || route.method === 'put' ? {} : undefined);
      expect(answer.status, `${route.method} ${path}`).not.toBe(405);
      expect(answer.body.error?.message ?? '', `${route.method} ${path}`).not.toMatch(/^Control endpoint/);
      expect((await call('PATCH', path)).status, `PATCH ${path}`).toBe(405);
    }
    for (const path of ['test/nothing', 'sessions', 'test/clock', 'test/sessions/X1/pay/again']) {
      expectRefused(await call('GET', path), 404, 19404, 'Control endpoint');
    }
  });

  it('answers a path parameter its schema refuses with 404 naming the record', async () => {
    for (const [method, path] of [
      ['GET', 'test/deliveries/abc'],
      ['POST', 'test/deliveries/1234567890123456/resend'],
    ] as const) {
      const answer = await call(method, path);
      expectRefused(answer, 404, 19404, 'Webhook delivery');
      expect(answer.body.error.message).toBe('Webhook delivery not found');
    }
  });
});

/** A valid body of each route that takes one: the test fails when a route with a body has none here. */
const VALID_BODIES: Record<string, Record<string, unknown>> = {
  paySession: { holderName: 'Jane Tester' },
  resolvePosPayment: { outcome: 'success' },
  emitEvent: { eventCode: 'AUTHORISATION', reference: 'X1' },
  advanceClock: { ms: 1 },
  addFault: { route: 'GET /pos/terminals', times: 1, effect: { type: 'truncate' } },
  addWebhookUrl: { url: 'http://127.0.0.1:9/hook' },
  createTenant: { name: 'Worker' },
  setTerminal: { processingMs: 10 },
};

/** A value of another kind than `schema` says. */
function wrongFor(schema: JsonObject): unknown {
  const type = schema.type ?? (Array.isArray(schema.enum) ? typeof schema.enum[0] : undefined);
  if (type === 'string') return 12345;
  if (type === 'integer' || type === 'number') return 'many';
  return 'text';
}

function resolved(schema: JsonObject): JsonObject {
  return typeof schema.$ref === 'string' ? (schemas[schema.$ref.split('/').pop() ?? ''] ?? {}) : schema;
}

describe("the routes' schemas validate what they describe", () => {
  it('refuses each body field of the document given a value of the wrong kind: 400, the envelope, the field named', async () => {
    const withBody = Object.entries(CONTROL_ROUTES).filter(([, route]) => route.body !== undefined);
    expect(withBody.map(([name]) => name).sort()).toEqual(Object.keys(VALID_BODIES).sort());
    let checked = 0;
    for (const [name, route] of withBody) {
      const operation = (document.paths as Record<string, Record<string, any>>)[
        `/_sandbox/${route.path.replace('{environment}', 'test')}`
      ]?.[route.method];
      const body = resolved(operation.requestBody.content['application/json'].schema);
      for (const [field, schema] of Object.entries(body.properties as Record<string, JsonObject>)) {
        const answer = await call(route.method.toUpperCase(), pathOf(route.path), { ...VALID_BODIES[name], [field]: wrongFor(schema) });
        expectRefused(answer, 400, 12001, field);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(14);
  });

  it('refuses each typed query parameter given a value of the wrong kind, and a missing required one, with 400 naming it', async () => {
    let checked = 0;
    for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      if (path.startsWith('/_sandbox/live/')) continue;
      for (const [method, operation] of Object.entries(methods)) {
        for (const parameter of (operation.parameters ?? []) as JsonObject[]) {
          if (parameter.in !== 'query') continue;
          const schema = parameter.schema as JsonObject;
          const name = String(parameter.name);
          const target = path.slice('/_sandbox/'.length);
          if (schema.type === 'integer' || Array.isArray(schema.enum)) {
            expectRefused(await call(method.toUpperCase(), `${target}?${name}=zzz`), 400, 12001, name);
            checked++;
          }
          if (parameter.required) {
            expectRefused(await call(method.toUpperCase(), target), 400, 12001, name);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });

  it('keeps the limits the document states: take 1 to 100, a fault rule’s ranges', async () => {
    expectRefused(await call('GET', 'test/sessions?take=101'), 400, 12001, 'take must be an integer from 1 to 100');
    expect((await call('GET', 'test/sessions?take=100')).status).toBe(200);
    const copies = resolved(schemas.FaultRule ?? {}).properties as Record<string, any>;
    const duplicate = copies.effect.oneOf.find((effect: any) => effect.title === 'duplicate');
    expect(duplicate.properties.copies).toMatchObject({ type: 'integer', minimum: 2, maximum: 10_000 });
    const rule = (value: number) => ({ event: 'AUTHORISATION', effect: { type: 'duplicate', copies: value } });
    expectRefused(await call('POST', 'faults', rule(10_001)), 400, 12001, 'effect.copies must be a whole number from 2 to 10000');
    expect((await call('POST', 'faults', rule(10_000))).status).toBe(200);
    await call('DELETE', 'faults');
  });
});

describe('the typed methods run the same routes', () => {
  it('refuse a bad body with the very message the route answers over HTTP', async () => {
    const session = await fetch(`${sandbox.baseUrl}/external/v1/test/payment/session`, {
      method: 'POST',
      headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json' },
      body: JSON.stringify({
        webcode: sandbox.webcode,
        amount: { value: 100, currency: 'EUR' },
        urlOk: 'https://shop.example/ok',
        urlKo: 'https://shop.example/ko',
      }),
    }).then(async (response) => (await response.json()).data.sessionId as string);
    const cases: [string, unknown, () => unknown][] = [
      [`test/sessions/${session}/pay`, { holderName: 'x' }, () => sandbox.paySession('test', session, { holderName: 'x' })],
      ['test/pos-payments/X1/resolve', { outcome: 'maybe' }, () => sandbox.resolvePosPayment('test', 'X1', 'maybe' as 'success')],
      ['test/events', { eventCode: 'CHARGEBACK', reference: session }, () => sandbox.emitEvent('test', 'CHARGEBACK' as 'REFUND', session)],
      ['clock/advance', { ms: -5 }, () => sandbox.advanceClock(-5)],
      ['tenants', { webcode: 'not-this' }, () => sandbox.createTenant({ webcode: 'not-this' })],
    ];
    for (const [path, body, typed] of cases) {
      const answer = await call('POST', path, body);
      expect(answer.status, path).toBe(400);
      let refusal: unknown;
      try {
        await typed();
      } catch (error) {
        refusal = error;
      }
      expect(refusal, path).toMatchObject({ status: 400, code: 12001, message: answer.body.error.message });
    }
    expect((await sandbox.paySession('test', session)).status).toBe('completed');
  });

  it('list and clear the request log as GET and DELETE /_sandbox/test/requests do, a typed status and Date as the query text', async () => {
    for (const webcode of ['NOPE', sandbox.webcode]) {
      await fetch(`${sandbox.baseUrl}/external/v1/test/payment/sessions?webcode=${webcode}`, {
        headers: { 'x-api-key': sandbox.keys.test },
      });
    }
    const since = new Date(Date.now() - 3_600_000);
    const typed = await sandbox.requests.list({ status: 403, since, take: 5 });
    const routed = await call('GET', `test/requests?status=403&since=${encodeURIComponent(since.toISOString())}&take=5`);
    expect(typed.total).toBeGreaterThanOrEqual(1);
    expect(typed).toEqual(routed.body.data);
    expect(await sandbox.requests.clear({ status: '4xx' })).toBe(typed.total);
    expect((await call('GET', 'test/requests?status=4xx')).body.data.total).toBe(0);
  });
});
