/**
 * The OpenAPI documents: the committed copies are what the schemas make now (`npm run openapi`),
 * the service's document is OpenAPI 3.1 with every `$ref` resolving and every example valid
 * (ajv, JSON Schema 2020-12), it has the 13 endpoints under both path families and the reference's
 * error codes per endpoint, the sandbox serves both documents and the dashboard's reference page,
 * the sandbox's real answers validate against them, and the control document covers exactly the
 * control router's routes. Network: 127.0.0.1 only.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { DEFAULT_SERVERS, openApiDocument } from '../src/openapi/document.js';
import { ENDPOINTS } from '../src/openapi/endpoints.js';
import type { JsonObject } from '../src/openapi/json-schema.js';
import { controlApiDocument } from '../src/sandbox/control/openapi.js';
import { CONTROL_ROUTES } from '../src/sandbox/control/routes.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { clientFor, startSandbox, URL_KO, URL_OK } from './sandbox/support.js';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const service = openApiDocument();
const control = controlApiDocument(DEFAULT_SERVERS);

/** The reference's endpoint table: method and path after `/external/v1`. */
const REFERENCE_ENDPOINTS = [
  'POST /payment/session',
  'GET /payment/session/{sessionId}',
  'GET /payment/sessions',
  'POST /payment/refund',
  'POST /payment/capture',
  'POST /payment/cancel',
  'POST /payment/extend',
  'GET /payment/session/{sessionId}/modifications',
  'GET /pos/payment/{posPaymentId}/modifications',
  'GET /modifications',
  'GET /pos/terminals',
  'POST /pos/payment',
  'GET /pos/payments',
];

type Operation = JsonObject & {
  operationId: string;
  parameters?: JsonObject[];
  requestBody?: JsonObject;
  responses: Record<string, JsonObject>;
};

function operations(document: JsonObject): { method: string; path: string; operation: Operation }[] {
  return Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ method, path, operation })),
  );
}

/** Follows a local `$ref`; throws when it leads nowhere. */
function resolve(document: JsonObject, node: JsonObject): JsonObject {
  if (typeof node.$ref !== 'string') return node;
  const target = node.$ref
    .slice(2)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((value, key) => (value as JsonObject | undefined)?.[key], document);
  if (target === undefined) throw new Error(`$ref ${node.$ref} resolves to nothing`);
  return resolve(document, target as JsonObject);
}

/** The keys of a JSON value at every level, arrays by their items: its shape, whatever the values. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value === null || typeof value !== 'object') return 'value';
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, shapeOf((value as Record<string, unknown>)[key])]),
  );
}

const ID = 'https://openapi.test/document.json';
const pointer = (...segments: string[]) =>
  segments.map((segment) => `/${encodeURIComponent(segment.replaceAll('~', '~0').replaceAll('/', '~1'))}`).join('');

/** Validates values against the schema at a JSON pointer of `document`, formats included. */
function validatorOf(document: JsonObject) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  ajv.addFormat('uri', { type: 'string', validate: (value: string) => URL.canParse(value) && /^[a-z][a-z0-9+.-]*:/i.test(value) });
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) =>
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) && !Number.isNaN(Date.parse(value)),
  });
  ajv.addSchema({ ...document, $id: ID });
  return (at: string, value: unknown): string[] => {
    const validate = ajv.compile({ $ref: `${ID}#${at}` });
    return validate(value) ? [] : (validate.errors ?? []).map((error) => `${at} ${error.instancePath} ${error.message}`);
  };
}

describe('the committed documents', () => {
  it('are what the schemas make now: run `npm run openapi` after changing a schema', () => {
    expect(readFileSync(new URL('../docs/openapi.json', import.meta.url), 'utf8')).toBe(json(service));
    expect(readFileSync(new URL('../docs/sandbox-control.openapi.json', import.meta.url), 'utf8')).toBe(json(control));
  });
});

describe('the service document', () => {
  it('is OpenAPI 3.1 whose every $ref resolves, with unique operationIds', () => {
    expect(service.openapi).toBe('3.1.0');
    const refs: JsonObject[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        if (typeof (node as JsonObject).$ref === 'string') refs.push(node as JsonObject);
        Object.values(node).forEach(walk);
      }
    };
    for (const document of [service, control]) {
      refs.length = 0;
      walk(document);
      expect(refs.length).toBeGreaterThan(10);
      for (const ref of refs) expect(() => resolve(document, ref)).not.toThrow();
      const ids = operations(document).map(({ operation }) => operation.operationId);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('has the 13 endpoints under the Live and the Test path family, no other', () => {
    const found = operations(service).map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    const expected = ['/external/v1', '/external/v1/test'].flatMap((prefix) =>
      REFERENCE_ENDPOINTS.map((endpoint) => endpoint.replace(' ', ` ${prefix}`)),
    );
    expect(found.sort()).toEqual(expected.sort());
  });

  it('takes X-API-KEY on every operation, Idempotency-Key on the writes, webcode in every body and query', () => {
    expect(service.components).toMatchObject({ securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' } } });
    expect(service.security).toEqual([{ ApiKey: [] }]);
    for (const { method, operation } of operations(service)) {
      const parameters = (operation.parameters ?? []).map((parameter) => resolve(service, parameter));
      const idempotency = parameters.find((parameter) => parameter.name === 'Idempotency-Key');
      if (method === 'post') {
        expect(idempotency, operation.operationId).toMatchObject({ in: 'header', required: false });
        const body = resolve(
          service,
          (operation.requestBody as { content: { 'application/json': { schema: JsonObject } } }).content['application/json'].schema,
        );
        expect(body.required, operation.operationId).toContain('webcode');
      } else {
        expect(idempotency).toBeUndefined();
        expect(parameters.find((parameter) => parameter.name === 'webcode')).toMatchObject({ in: 'query', required: true });
      }
    }
  });

  it("states the reference's request rules: required fields, lengths, enums, formats, integer cents", () => {
    const schemas = (service.components as { schemas: Record<string, JsonObject> }).schemas;
    expect(schemas.CreateSessionRequest).toMatchObject({
      required: ['webcode', 'amount', 'urlOk', 'urlKo'],
      additionalProperties: false,
      properties: {
        amount: {
          required: ['value', 'currency'],
          properties: { value: { type: 'integer', exclusiveMinimum: 0 }, currency: { enum: ['EUR', 'GBP', 'USD'] } },
        },
        urlOk: { format: 'uri' },
        countryCode: { pattern: '^[A-Z]{2}$', description: expect.stringContaining('the service uses "ES" when it is left out') },
        shopperLocale: { maxLength: 10, description: expect.stringContaining('the service uses "es-ES" when it is left out') },
        description: { maxLength: 255 },
        customReference: { maxLength: 100 },
        isPreAuth: { type: 'boolean', description: expect.stringContaining('the service uses false when it is left out') },
      },
    });
    // A request field the service defaults is the caller's to leave out: no `default`, which generators read as "always there".
    for (const [name, schema] of Object.entries(schemas))
      if (name.endsWith('Request'))
        for (const [field, property] of Object.entries((schema as { properties: Record<string, JsonObject> }).properties))
          expect(property, `${name}.${field}`).not.toHaveProperty('default');
    expect(schemas.CreatePosPaymentRequest).toMatchObject({ required: ['webcode', 'poiId', 'amount'] });
    const parameters = (path: string) =>
      Object.fromEntries(
        ((service.paths as Record<string, { get: Operation }>)[path]?.get.parameters ?? []).map((parameter) => [
          parameter.name,
          parameter.schema,
        ]),
      );
    expect(parameters('/external/v1/test/pos/payments')).toMatchObject({
      status: { enum: ['pending', 'success', 'failed', 'timeout'] },
      take: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      order: { enum: ['asc', 'desc'], default: 'asc' },
      created_at_start: {},
      created_at_end: {},
    });
    expect(parameters('/external/v1/pos/terminals')).toMatchObject({ syncFromProvider: { type: 'boolean', default: false } });
  });

  it("lists the reference's error codes per endpoint and status, and keeps codes open", () => {
    const expected = (endpoint: string): Record<string, number[]> => {
      const base: Record<string, number[]> = { '400': [12001], '403': [11008] };
      if (endpoint.startsWith('POST')) base['409'] = [];
      // The reference shows no 404; the sandbox answers 404 / 19404 for a record the path or body names that does not exist.
      if (/^POST \/payment\/(refund|capture|cancel|extend)$/.test(endpoint) || /^GET \/(payment\/session|pos\/payment)\/\{/.test(endpoint))
        base['404'] = [19404];
      if (endpoint === 'POST /payment/session') base['400'] = [12001, 12002, 12006, 12009];
      if (endpoint === 'POST /pos/payment') Object.assign(base, { '409': [13005], '502': [13004] });
      return base;
    };
    for (const { method, path, operation } of operations(service)) {
      const endpoint = `${method.toUpperCase()} ${path.replace(/^\/external\/v1(\/test)?/, '')}`;
      const codes = Object.fromEntries(
        Object.entries(operation.responses)
          .filter(([status]) => /^[45]\d\d$/.test(status))
          .map(([status, response]) => {
            const content = (
              resolve(service, response).content as Record<string, { examples?: Record<string, { value: { error: { code: number } } }> }>
            )['application/json'];
            return [status, Object.values(content?.examples ?? {}).map((example) => example.value.error.code)];
          }),
      );
      expect(codes, endpoint).toEqual(expected(endpoint));
      expect(operation.responses.default, endpoint).toBeDefined();
    }
    const validate = validatorOf(service);
    const at = pointer('components', 'responses', 'Failure400_12001', 'content', 'application/json', 'schema');
    expect(validate(at, { success: false, error: { message: 'x', code: 19999, statusCode: 400, traceId: 't' } })).toEqual([]);
    expect(validate(at, { success: false, error: { message: 'x', code: '12001', statusCode: 400, traceId: 't' } })).not.toEqual([]);
  });

  it('has an example per operation and webhook, each valid against its schema and against the SDK schema it came from', () => {
    const validate = validatorOf(service);
    const problems: string[] = [];
    let checked = 0;
    for (const { method, path, operation } of operations(service)) {
      const base = ['paths', path, method];
      const body = operation.requestBody as { content: { 'application/json': { example?: unknown } } } | undefined;
      if (body) {
        expect(body.content['application/json'].example, operation.operationId).toBeDefined();
        problems.push(
          ...validate(pointer(...base, 'requestBody', 'content', 'application/json', 'schema'), body.content['application/json'].example),
        );
        checked++;
      }
      for (const [index, parameter] of (operation.parameters ?? []).entries()) {
        if (parameter.example !== undefined) {
          problems.push(...validate(pointer(...base, 'parameters', String(index), 'schema'), parameter.example));
          checked++;
        }
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        if (response.$ref) continue;
        const content = (response.content as Record<string, { example?: unknown }>)['application/json'];
        expect(content?.example, `${operation.operationId} ${status}`).toBeDefined();
        problems.push(...validate(pointer(...base, 'responses', status, 'content', 'application/json', 'schema'), content?.example));
        checked++;
      }
    }
    for (const [name, response] of Object.entries((service.components as { responses: Record<string, JsonObject> }).responses)) {
      const content = (response.content as Record<string, { examples?: Record<string, { value: unknown }> }>)['application/json'];
      for (const example of Object.values(content?.examples ?? {})) {
        problems.push(...validate(pointer('components', 'responses', name, 'content', 'application/json', 'schema'), example.value));
        checked++;
      }
    }
    for (const code of ['AUTHORISATION', 'REFUND']) {
      const example = (service.webhooks as Record<string, { post: { requestBody: { content: Record<string, { example: unknown }> } } }>)[
        code
      ]?.post.requestBody.content['application/json']?.example;
      problems.push(...validate(pointer('webhooks', code, 'post', 'requestBody', 'content', 'application/json', 'schema'), example));
      checked++;
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(13 * 2 * 2);
    for (const endpoint of ENDPOINTS) {
      expect(z.safeParse(endpoint.response, endpoint.example.data).success, endpoint.operationId).toBe(true);
      if (endpoint.body) expect(z.safeParse(endpoint.body, endpoint.example.request).success, endpoint.operationId).toBe(true);
      if (endpoint.query) expect(z.safeParse(endpoint.query, endpoint.example.request ?? {}).success, endpoint.operationId).toBe(true);
    }
  });

  it('keeps answers as open as the SDK: unknown fields and values, nulls where a field may be absent', () => {
    const validate = validatorOf(service);
    const session = pointer('components', 'schemas', 'Session');
    const minimal = { sessionId: 'S-EXTT-1', status: 'on_hold', amount: { value: 1, currency: 'CHF' } };
    expect(validate(session, { ...minimal, paymentStatus: null, attempts: null, brandNew: { any: 1 } })).toEqual([]);
    expect(validate(session, { ...minimal, amount: { value: 1.5, currency: 'EUR' } })).not.toEqual([]);
    expect(
      validate(pointer('components', 'schemas', 'CreateSessionRequest'), {
        webcode: 'W',
        amount: { value: 1, currency: 'EUR' },
        urlOk: URL_OK,
        urlKo: URL_KO,
        extra: 1,
      }),
    ).not.toEqual([]);
  });
});

describe('served by the sandbox', () => {
  let sandbox: Sandbox;
  let baseUrl: string;

  beforeAll(async () => {
    ({ sandbox, baseUrl } = await startSandbox({ modificationResolveMs: 0, posTimeoutResolveMs: 600_000 }));
  });
  afterAll(() => sandbox?.close());

  it('answers /openapi.json and /_sandbox/openapi.json with no key, its own origin as the server', async () => {
    for (const [path, expected] of [
      ['/openapi.json', openApiDocument([{ url: baseUrl, description: 'This sandbox' }])],
      ['/_sandbox/openapi.json', controlApiDocument([{ url: baseUrl, description: 'This sandbox' }])],
    ] as const) {
      const response = await fetch(`${baseUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(await response.json()).toEqual(expected);
      const post = await fetch(`${baseUrl}${path}`, { method: 'POST' });
      expect(post.status).toBe(405);
    }
  });

  it('renders the API reference page from the document: every endpoint, the webhooks, no asset from elsewhere', async () => {
    const response = await fetch(`${baseUrl}/api-reference`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await response.text();
    for (const endpoint of ENDPOINTS) expect(page).toContain(`id="${endpoint.operationId}"`);
    expect(page).toContain('id="webhook-AUTHORISATION"');
    expect(page).toContain('href="/openapi.json"');
    expect(page).toContain('<code>shopperLocale</code>');
    expect(page).toMatch(/12009/);
    expect(page).toContain('<a href="/api-reference" aria-current="page">');
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("validates the sandbox's real answers and the requests that got them against the document", async () => {
    const validate = validatorOf(openApiDocument());
    const templates = operations(service).map(({ method, path }) => ({
      method,
      path,
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
    const problems: string[] = [];
    let calls = 0;
    /** Sends a request (checking it against the document: valid unless `refused`) and checks the answer. */
    const call = async (
      method: 'GET' | 'POST',
      path: string,
      input: Record<string, unknown> = {},
      headers: Record<string, string> = {},
      refused = false,
    ) => {
      const { method: lower, path: template } =
        templates.find((entry) => entry.method === method.toLowerCase() && entry.pattern.test(path)) ?? {};
      if (!lower || !template) throw new Error(`No operation for ${method} ${path}`);
      const url = new URL(`${baseUrl}${path}`);
      const body = { webcode: sandbox.webcode, ...input };
      if (method === 'GET') for (const [name, value] of Object.entries(body)) url.searchParams.set(name, String(value));
      else {
        const requestProblems = validate(pointer('paths', template, lower, 'requestBody', 'content', 'application/json', 'schema'), body);
        if (refused) expect(requestProblems, `${method} ${path} ${JSON.stringify(body)}`).not.toEqual([]);
        else problems.push(...requestProblems);
      }
      const key = path.startsWith('/external/v1/test/') ? sandbox.keys.test : sandbox.keys.live;
      const response = await fetch(url, {
        method,
        headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
        ...(method === 'POST' && { body: JSON.stringify(body) }),
      });
      const answer = await response.json();
      const responses = (service.paths as Record<string, Record<string, Operation>>)[template]?.[lower]?.responses ?? {};
      const status = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find((key) => key in responses) ?? 'default';
      const ref = responses[status]?.$ref;
      const at =
        typeof ref === 'string'
          ? `${ref.slice(1)}/content/application~1json/schema`
          : pointer('paths', template, lower, 'responses', status, 'content', 'application/json', 'schema');
      problems.push(...validate(at, answer).map((problem) => `${method} ${path} ${response.status}: ${problem}`));
      calls++;
      return { status: response.status, data: answer.data };
    };

    for (const prefix of ['/external/v1/test', '/external/v1']) {
      const amount = { value: 2590, currency: 'EUR' };
      const created = await call('POST', `${prefix}/payment/session`, {
        amount,
        urlOk: URL_OK,
        urlKo: URL_KO,
        isPreAuth: true,
        customReference: 'c-1',
      });
      expect(created.status).toBe(201);
      await call('GET', `${prefix}/payment/session/${created.data.sessionId}`);
      await sandbox.paySession(prefix.endsWith('test') ? 'test' : 'live', created.data.sessionId);
      const paid = await call('GET', `${prefix}/payment/session/${created.data.sessionId}`);
      const paymentReference = paid.data.paymentReference;
      await call('GET', `${prefix}/payment/sessions`, { status: 'completed', take: 1 });
      await call('POST', `${prefix}/payment/capture`, { paymentReference, amount: { value: 1000, currency: 'EUR' } });
      await call('POST', `${prefix}/payment/extend`, { paymentReference });
      await call('POST', `${prefix}/payment/refund`, { paymentReference, amount: { value: 500, currency: 'EUR' }, reason: 'returned' });
      await call('POST', `${prefix}/payment/cancel`, { paymentReference });
      await call('GET', `${prefix}/payment/session/${created.data.sessionId}/modifications`);
      await call('GET', `${prefix}/modifications`, { type: 'refund', take: 2 });
      await call('GET', `${prefix}/pos/terminals`, { syncFromProvider: true });
      for (const value of [1000, 1077, 1099, 1055]) {
        const pos = await call('POST', `${prefix}/pos/payment`, { poiId: 'V400m-TEST-000001', amount: { value, currency: 'EUR' } });
        if (pos.status === 200) await call('GET', `${prefix}/pos/payment/${pos.data.posPaymentId}/modifications`);
      }
      await call('POST', `${prefix}/pos/payment`, { poiId: 'P400Plus-TEST-000003', amount });
      await call('GET', `${prefix}/pos/payments`, { order: 'desc', take: 2, created_at_start: '2000-01-01 00:00:00' });
      await call('POST', `${prefix}/payment/session`, { amount, urlOk: URL_OK, urlKo: URL_KO, countryCode: 'ZZ' });
      await call('POST', `${prefix}/payment/session`, { amount, urlOk: URL_OK, urlKo: URL_KO, deliverAt: 'tomorrow' }, {}, true);
      await call('POST', `${prefix}/payment/session`, { amount: { value: 1, currency: 'CHF' }, urlOk: URL_OK, urlKo: URL_KO }, {}, true);
      await call('GET', `${prefix}/payment/sessions`, { webcode: 'OTHER' });
      await call('GET', `${prefix}/payment/session/NOPE-EXTT-1`);
      await call('POST', `${prefix}/payment/cancel`, { paymentReference }, { 'idempotency-key': `k${prefix}` });
      await call('POST', `${prefix}/payment/capture`, { paymentReference }, { 'idempotency-key': `k${prefix}` });
    }
    expect(problems).toEqual([]);
    expect(calls).toBeGreaterThan(40);
  });

  it('shows the per-session and per-POS-payment modifications as the sandbox answers them, which the SDK reads', async () => {
    const test = clientFor(sandbox, 'test');
    const session = await test.sessions.create({ amount: { value: 2590, currency: 'EUR' }, urlOk: URL_OK, urlKo: URL_KO });
    const { paymentReference } = await sandbox.paySession('test', session.sessionId);
    await test.modifications.refund({
      paymentReference: paymentReference ?? '',
      amount: { value: 500, currency: 'EUR' },
      reason: 'returned',
    });
    const pos = await test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' } });
    await test.modifications.refund({ paymentReference: pos.posPaymentId, amount: { value: 400, currency: 'EUR' }, reason: 'returned' });
    const get = async (path: string) => {
      const response = await fetch(`${baseUrl}/external/v1/test${path}?webcode=${sandbox.webcode}`, {
        headers: { 'x-api-key': sandbox.keys.test },
      });
      expect(response.status, path).toBe(200);
      return response.json();
    };
    for (const [operationId, path, read] of [
      [
        'listSessionModifications',
        `/payment/session/${session.sessionId}/modifications`,
        () => test.sessions.listModifications(session.sessionId),
      ],
      ['listPosPaymentModifications', `/pos/payment/${pos.posPaymentId}/modifications`, () => test.pos.listModifications(pos.posPaymentId)],
    ] as const) {
      const endpoint = ENDPOINTS.find((candidate) => candidate.operationId === operationId);
      if (!endpoint) throw new Error(`no endpoint ${operationId}`);
      const answer = await get(path);
      expect((answer.data as { modifications: unknown[] }).modifications.length, operationId).toBeGreaterThan(0);
      // The Live and the Test operation: the same keys at every level as the answer (values differ).
      const testId = `test${operationId[0]?.toUpperCase()}${operationId.slice(1)}`;
      const documented = operations(service).filter(({ operation }) => [operationId, testId].includes(operation.operationId));
      expect(documented).toHaveLength(2);
      for (const { operation } of documented) {
        const example = (operation.responses['200']?.content as Record<string, { example: unknown }> | undefined)?.['application/json']
          ?.example;
        expect(shapeOf(example), operation.operationId).toEqual(shapeOf(answer));
        expect(example).toEqual({ success: true, data: endpoint.example.data });
      }
      // The SDK reads the example and the real answer alike: the array of records.
      const parsedExample = z.parse(endpoint.response as z.ZodMiniType, endpoint.example.data);
      expect(parsedExample).toEqual((endpoint.example.data as { modifications: unknown[] }).modifications);
      expect(await read()).toEqual(answer.data.modifications);
      // The reference does not show this body: the SDK also reads a bare array, and never fails on `meta`.
      expect(z.parse(endpoint.response as z.ZodMiniType, [])).toEqual([]);
      expect(z.parse(endpoint.response as z.ZodMiniType, { modifications: [], meta: { total: 'many' } })).toEqual([]);
    }
  });

  it("validates the control API's real answers against its document", async () => {
    const validate = validatorOf(controlApiDocument(DEFAULT_SERVERS));
    const problems: string[] = [];
    const call = async (method: string, path: string, template: string, body?: unknown) => {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const answer = await response.json();
      const status = String(response.status);
      const responses = (control.paths as Record<string, Record<string, Operation>>)[template]?.[method.toLowerCase()]?.responses ?? {};
      expect(responses[status], `${method} ${path} ${status} ${JSON.stringify(answer)}`).toBeDefined();
      problems.push(
        ...validate(pointer('paths', template, method.toLowerCase(), 'responses', status, 'content', 'application/json', 'schema'), answer),
      );
      return answer.data;
    };
    const { sessionId } = await (
      await fetch(`${baseUrl}/external/v1/test/payment/session`, {
        method: 'POST',
        headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json' },
        body: JSON.stringify({ webcode: sandbox.webcode, amount: { value: 100, currency: 'EUR' }, urlOk: URL_OK, urlKo: URL_KO }),
      }).then((response) => response.json())
    ).data;
    await call('POST', `/_sandbox/test/sessions/${sessionId}/pay`, '/_sandbox/test/sessions/{sessionId}/pay', { holderName: 'Jane' });
    await call('GET', '/_sandbox/test/sessions?take=1', '/_sandbox/test/sessions');
    await call('GET', `/_sandbox/test/sessions/${sessionId}`, '/_sandbox/test/sessions/{sessionId}');
    await call('GET', '/_sandbox/test/pos-payments', '/_sandbox/test/pos-payments');
    await call('GET', '/_sandbox/test/modifications', '/_sandbox/test/modifications');
    await call('GET', '/_sandbox/test/deliveries', '/_sandbox/test/deliveries');
    await call('GET', '/_sandbox/clock', '/_sandbox/clock');
    await call('POST', '/_sandbox/clock/advance', '/_sandbox/clock/advance', { duration: '1m' });
    const rule = await call('POST', '/_sandbox/faults', '/_sandbox/faults', {
      route: 'GET /pos/terminals',
      times: 1,
      effect: { type: 'latency', ms: [0, 1] },
    });
    await call('GET', '/_sandbox/faults', '/_sandbox/faults');
    await call('DELETE', `/_sandbox/faults/${rule.id}`, '/_sandbox/faults/{ruleId}');
    await call('POST', '/_sandbox/webhook-urls', '/_sandbox/webhook-urls', { url: 'http://127.0.0.1:9/hook' });
    await call('DELETE', `/_sandbox/webhook-urls?url=${encodeURIComponent('http://127.0.0.1:9/hook')}`, '/_sandbox/webhook-urls');
    const tenant = await call('POST', '/_sandbox/tenants', '/_sandbox/tenants', { name: 'Worker 1' });
    await call('GET', '/_sandbox/tenants', '/_sandbox/tenants');
    await call('DELETE', `/_sandbox/tenants/${tenant.webcode}`, '/_sandbox/tenants/{webcode}');
    expect(problems).toEqual([]);
  });
});

describe('the control document', () => {
  it('has one operation per declared control route (each environment of a scoped one), and no other', () => {
    const declared = Object.entries(CONTROL_ROUTES).flatMap(([operationId, route]) =>
      route.path.startsWith('{environment}/')
        ? (['test', 'live'] as const).map((scope) => ({
            operationId: `${scope}${operationId[0]?.toUpperCase()}${operationId.slice(1)}`,
            method: route.method,
            path: `/_sandbox/${route.path.replace('{environment}', scope)}`,
          }))
        : [{ operationId, method: route.method, path: `/_sandbox/${route.path}` }],
    );
    const documented = operations(control).map(({ method, path, operation }) => ({ operationId: operation.operationId, method, path }));
    const byId = (entries: { operationId: string }[]) => [...entries].sort((a, b) => a.operationId.localeCompare(b.operationId));
    expect(byId(documented)).toEqual(byId(declared));
    expect(documented.length).toBeGreaterThan(30);
    expect(Object.keys(control.paths as JsonObject)).toContain('/_sandbox/live/sessions/{sessionId}/pay');
  });
});
