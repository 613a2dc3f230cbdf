/**
 * OpenTelemetry spans (src/core/telemetry.ts), seen through the tracing SDK's in-memory exporter;
 * msw answers at the network boundary. The last block runs the built package (dist/, which
 * `npm test` builds first) in a child process, with and without `@opentelemetry/api` installed.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect, promisify } from 'node:util';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, PaymentClient, RequestValidationError, ServerError, TerminalBusyError } from '../src/index.js';
import { API_KEY, BASE_URL, client, failure, listing, respond, seen, success, useMsw, WEBCODE } from './support/msw.js';
import { rejection } from './support/rejection.js';

useMsw();

const T = '/external/v1/test';
const amount = { value: 1050, currency: 'EUR' } as const;
const sessionParams = { amount, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' };
const created = { sessionId: 'SHOP1-EXTT-1700000001', paymentUrl: 'https://pay.example/p/1', status: 'pending', amount };

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(contextManager.enable());
});
beforeEach(() => {
  // Full jitter draws from Math.random: 0 makes every backoff wait 0 ms.
  vi.spyOn(Math, 'random').mockReturnValue(0);
});
afterEach(() => {
  exporter.reset();
  vi.restoreAllMocks();
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});

/** The finished spans, as a tracing back end would get them. */
function spans(): ReadableSpan[] {
  return exporter.getFinishedSpans();
}

/** The one finished span. */
function onlySpan(): ReadableSpan {
  const finished = spans();
  expect(finished.map((span) => span.name)).toHaveLength(1);
  return finished[0] as ReadableSpan;
}

/** Everything a back end could show of a span: name, attributes, events, status, scope and resource. */
function rendered(span: ReadableSpan): string {
  const { name, attributes, events, status, links, instrumentationScope, resource } = span;
  return `${JSON.stringify({ name, attributes, events, status, links, instrumentationScope, resource: resource.attributes })}\n${inspect(span, { depth: 8 })}`;
}

describe('a span per call', () => {
  it('makes one CLIENT span for a create, named by its route, with the key sent and no API key', async () => {
    respond('post', `${T}/payment/session`, () => success(created, 201));
    const session = await client().sessions.create(sessionParams);
    expect(session.sessionId).toBe(created.sessionId);

    const span = onlySpan();
    const sentKey = seen[0]?.headers.get('idempotency-key');
    expect(sentKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(span.name).toBe('POST /payment/session');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.instrumentationScope).toMatchObject({ name: 'payment-service-sdk' });
    expect(span.attributes).toEqual({
      'http.request.method': 'POST',
      'url.template': '/payment/session',
      'server.address': 'pay.test.invalid',
      'server.port': 443,
      'http.response.status_code': 201,
      'payment_service.attempts': 1,
      'payment_service.idempotency_key': sentKey,
      'payment_service.environment': 'test',
    });
    expect(span.events).toEqual([]);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    const text = rendered(span);
    expect(text).toContain(sentKey);
    expect(text).not.toContain(API_KEY);
    // Neither the query string (webcode) nor a full URL is recorded.
    expect(text).not.toContain('webcode=');
    expect(text).not.toContain(BASE_URL);
  });

  it('names a call with a path parameter by its template, never by the id', async () => {
    respond('get', `${T}/payment/session/${created.sessionId}`, () => success({ ...created, paymentUrl: undefined }));
    await client().sessions.retrieve(created.sessionId);

    const span = onlySpan();
    expect(span.name).toBe('GET /payment/session/{sessionId}');
    expect(span.attributes['url.template']).toBe('/payment/session/{sessionId}');
    expect(span.attributes['http.request.method']).toBe('GET');
    expect(span.attributes['http.response.status_code']).toBe(200);
    // A read sends no Idempotency-Key, and the span has none.
    expect(span.attributes).not.toHaveProperty('payment_service.idempotency_key');
    expect(rendered(span)).not.toContain(created.sessionId);
    expect(rendered(span)).not.toContain(WEBCODE);
  });

  it('ends one span after the last retry, with the attempts and a retry event per retry', async () => {
    respond('post', `${T}/payment/session`, (_request, count) =>
      count <= 2 ? failure(500, undefined, 'Internal error') : success(created, 201),
    );
    await client().sessions.create(sessionParams);

    expect(seen).toHaveLength(3);
    const span = onlySpan();
    expect(span.attributes).toMatchObject({
      'http.response.status_code': 201,
      'payment_service.attempts': 3,
      'http.request.resend_count': 2,
      'payment_service.idempotency_key': seen[0]?.headers.get('idempotency-key'),
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.events.map(({ name, attributes }) => ({ name, attributes }))).toEqual(
      [1, 2].map((attempt) => ({
        name: 'retry',
        attributes: {
          'payment_service.attempt': attempt,
          'payment_service.delay_ms': 0,
          'error.type': 'ServerError',
          'http.response.status_code': 500,
          'payment_service.trace_id': 'trace-123',
        },
      })),
    );
  });

  it('marks a failed call as an error, with the error class and the service error code', async () => {
    respond('post', `${T}/pos/payment`, () => failure(409, 13005, 'Terminal busy'));
    const error = await rejection(client().pos.createPayment({ poiId: 'V400m-TEST-000001', amount }));
    expect(error).toBeInstanceOf(TerminalBusyError);

    const span = onlySpan();
    expect(span.name).toBe('POST /pos/payment');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    expect(span.attributes).toMatchObject({
      'error.type': 'TerminalBusyError',
      'payment_service.error_code': 13005,
      'payment_service.trace_id': 'trace-123',
      'http.response.status_code': 409,
      'payment_service.attempts': 1,
      'payment_service.idempotency_key': seen[0]?.headers.get('idempotency-key'),
    });
    expect(span.events).toEqual([]);
  });

  it('records the last failure when the retries run out', async () => {
    respond('get', `${T}/pos/terminals`, () => failure(503, undefined, 'Unavailable'));
    const error = await rejection(client({ maxRetries: 1 }).terminals.list());
    expect(error).toBeInstanceOf(ServerError);

    const span = onlySpan();
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes).toMatchObject({
      'error.type': 'ServerError',
      'http.response.status_code': 503,
      'payment_service.attempts': 2,
      'http.request.resend_count': 1,
    });
    expect(span.events.map((event) => event.name)).toEqual(['retry']);
  });

  it('makes no span for a call refused before anything is sent', async () => {
    const error = await rejection(client().sessions.create({ ...sessionParams, amount: { value: -1, currency: 'EUR' } }));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect(seen).toEqual([]);
    expect(spans()).toEqual([]);
  });

  it('makes one span per page of a listing walk', async () => {
    const item = (n: number) => ({
      sessionId: `SHOP1-EXTT-${1700000000 + n}`,
      status: 'completed',
      amount,
      createdAt: '2026-01-01 10:00:00',
    });
    respond('get', `${T}/payment/sessions`, (request) =>
      new URL(request.url).searchParams.get('cursor') === 'c2'
        ? success(listing('payments', [item(3)], { cursor: null, hasMore: false, total: 3 }))
        : success(listing('payments', [item(1), item(2)], { cursor: 'c2', hasMore: true, total: 3 })),
    );
    const ids: string[] = [];
    for await (const session of client().sessions.list({ status: 'completed' })) ids.push(session.sessionId);

    expect(ids).toHaveLength(3);
    expect(spans().map((span) => [span.name, span.attributes['http.response.status_code']])).toEqual([
      ['GET /payment/sessions', 200],
      ['GET /payment/sessions', 200],
    ]);
  });
});

describe('context', () => {
  it('is a child of the active span, and the active span while its attempts go out', async () => {
    respond('post', `${T}/payment/session`, () => success(created, 201));
    const activeInHook: (string | undefined)[] = [];
    const sdk = client({ hooks: { beforeRequest: () => void activeInHook.push(trace.getActiveSpan()?.spanContext().spanId) } });

    const parentId = await trace.getTracer('shop').startActiveSpan('checkout', async (parent) => {
      await sdk.sessions.create(sessionParams);
      parent.end();
      return parent.spanContext().spanId;
    });

    const call = spans().find((span) => span.name === 'POST /payment/session');
    expect(call?.parentSpanContext?.spanId).toBe(parentId);
    expect(activeInHook).toEqual([call?.spanContext().spanId]);
  });
});

describe('turning it off', () => {
  it('makes no span with telemetry: false', async () => {
    respond('post', `${T}/payment/session`, () => success(created, 201));
    await client({ telemetry: false }).sessions.create(sessionParams);
    expect(seen).toHaveLength(1);
    expect(spans()).toEqual([]);
  });

  it('rejects a telemetry option that is not a boolean', () => {
    const make = () => new PaymentClient({ apiKey: 'k', webcode: 'W', baseUrl: BASE_URL, telemetry: 'off' as unknown as boolean });
    expect(make).toThrow(ConfigurationError);
    expect(make).toThrow(/"telemetry" must be a boolean/);
  });

  it('works as before with no tracer provider registered (the API no-op tracer)', async () => {
    trace.disable();
    try {
      respond('post', `${T}/payment/session`, (_request, count) =>
        count === 1 ? failure(500, undefined, 'Internal error') : success(created, 201),
      );
      respond('post', `${T}/pos/payment`, () => failure(409, 13005, 'Terminal busy'));
      expect((await client().sessions.create(sessionParams)).sessionId).toBe(created.sessionId);
      expect(await rejection(client().pos.createPayment({ poiId: 'V400m-TEST-000001', amount }))).toBeInstanceOf(TerminalBusyError);
      expect(seen).toHaveLength(3);
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
    expect(spans()).toEqual([]);
  });
});

/**
 * The built package, ESM and CommonJS builds alike, installed in a temporary folder whose
 * node_modules has its runtime dependencies (links to this repository's) and, for `present`, the
 * OpenTelemetry API and tracing SDK; for `absent`, no OpenTelemetry package can be resolved from
 * there at all. A plain node:http server on 127.0.0.1 answers a 500 and then a 201 for each call.
 */
const script = `
import { createServer } from 'node:http';
import { createRequire, registerHooks } from 'node:module';

// Every attempt to resolve @opentelemetry/api made from the SDK's files, and whether it was found.
const sdkAsked = [];
registerHooks({
  resolve(specifier, context, next) {
    if (specifier !== '@opentelemetry/api' || !context.parentURL?.includes('/payment-service-sdk/')) return next(specifier, context);
    const format = context.parentURL.endsWith('.cjs') ? 'cjs' : 'mjs';
    try {
      const resolved = next(specifier, context);
      sdkAsked.push({ format, found: true });
      return resolved;
    } catch (error) {
      sdkAsked.push({ format, found: false, code: error.code });
      throw error;
    }
  },
});
const warnings = [];
process.on('warning', (warning) => warnings.push(warning.name));
Math.random = () => 0;

const mode = process.argv[2];
let exporter;
let apiResolvable = true;
if (mode === 'present') {
  const { trace } = await import('@opentelemetry/api');
  const { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } = await import('@opentelemetry/sdk-trace');
  exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));
} else {
  apiResolvable = await import('@opentelemetry/api').then(() => true, () => false);
}

let requests = 0;
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    requests += 1;
    const failed = requests % 2 === 1;
    const body = failed
      ? { success: false, error: { message: 'Internal error', statusCode: 500, traceId: 't-1' } }
      : { success: true, data: { sessionId: 'SHOP1-EXTT-1', paymentUrl: 'http://127.0.0.1/p', status: 'pending', amount: { value: 100, currency: 'EUR' } } };
    response.writeHead(failed ? 500 : 201, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const options = { apiKey: 'sk_test_CHILD_SENTINEL_1234', webcode: 'SHOP1', environment: 'test', baseUrl: 'http://127.0.0.1:' + server.address().port };
const params = { amount: { value: 100, currency: 'EUR' }, urlOk: 'https://a.example/ok', urlKo: 'https://a.example/ko' };
const builds = { mjs: await import('payment-service-sdk'), cjs: createRequire(import.meta.url)('payment-service-sdk') };
const sessions = {};
for (const [format, sdk] of Object.entries(builds)) sessions[format] = (await new sdk.PaymentClient(options).sessions.create(params)).sessionId;
server.close();
const spans = (exporter?.getFinishedSpans() ?? []).map((span) => ({
  name: span.name,
  attempts: span.attributes['payment_service.attempts'],
  events: span.events.map((event) => event.name),
  apiKeyShown: JSON.stringify({ attributes: span.attributes, events: span.events }).includes(options.apiKey),
}));
console.log(JSON.stringify({ apiResolvable, sdkAsked, sessions, requests, spans, warnings }));
`;

describe('the built package, in a child process', () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  let folder: string;

  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'payment-sdk-otel-'));
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  /** A fresh install of dist/ under `dir`, with the runtime dependencies and `extra` linked. */
  function install(dir: string, extra: string[]): void {
    const modules = join(dir, 'node_modules');
    mkdirSync(join(modules, '@opentelemetry'), { recursive: true });
    cpSync(join(root, 'dist'), join(modules, 'payment-service-sdk', 'dist'), { recursive: true });
    cpSync(join(root, 'package.json'), join(modules, 'payment-service-sdk', 'package.json'));
    for (const name of ['jose', 'ky', 'p-retry', 'uuid', ...extra])
      symlinkSync(join(root, 'node_modules', name), join(modules, name), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    writeFileSync(join(dir, 'run.mjs'), script);
  }

  async function run(mode: 'absent' | 'present') {
    const dir = join(folder, mode);
    install(dir, mode === 'present' ? ['@opentelemetry/api', '@opentelemetry/sdk-trace'] : []);
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['run.mjs', mode], {
      cwd: dir,
      env: { PATH: process.env.PATH },
    });
    return { result: JSON.parse(stdout), stdout, stderr };
  }

  it('works as before, quietly, when @opentelemetry/api cannot be imported', async () => {
    const { result, stdout, stderr } = await run('absent');
    expect(result).toEqual({
      apiResolvable: false,
      // Each build's network chunk asked once (on its first request), and found nothing: the ESM
      // build with `import()`, the CJS build with `require` (which Jest's module system can run).
      sdkAsked: [
        { format: 'mjs', found: false, code: 'ERR_MODULE_NOT_FOUND' },
        { format: 'cjs', found: false, code: 'MODULE_NOT_FOUND' },
      ],
      sessions: { mjs: 'SHOP1-EXTT-1', cjs: 'SHOP1-EXTT-1' },
      requests: 4,
      spans: [],
      warnings: [],
    });
    expect(stdout.trim().split('\n')).toHaveLength(1);
    expect(stderr).toBe('');
  }, 30_000);

  it('traces the calls of both builds when @opentelemetry/api is installed', async () => {
    const { result, stderr } = await run('present');
    expect(result).toMatchObject({
      apiResolvable: true,
      sdkAsked: [
        { format: 'mjs', found: true },
        { format: 'cjs', found: true },
      ],
      sessions: { mjs: 'SHOP1-EXTT-1', cjs: 'SHOP1-EXTT-1' },
      requests: 4,
      warnings: [],
    });
    expect(result.spans).toEqual([
      { name: 'POST /payment/session', attempts: 2, events: ['retry'], apiKeyShown: false },
      { name: 'POST /payment/session', attempts: 2, events: ['retry'], apiKeyShown: false },
    ]);
    expect(stderr).toBe('');
  }, 30_000);
});
