import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  ConfigurationError,
  ConflictError,
  ConnectionError,
  ErrorCode,
  IdempotencyConflictError,
  InvalidRequestError,
  NotFoundError,
  PaymentClient,
  PaymentServiceError,
  PermissionDeniedError,
  RateLimitError,
  RequestValidationError,
  ResponseValidationError,
  ServerError,
  TerminalBusyError,
  TerminalCommunicationError,
  TimeoutError,
} from '../src/index.js';
import { API_KEY, BASE_URL, client, failure, respond, seen, success, useMsw, WEBCODE } from './support/msw.js';
import { rejection } from './support/rejection.js';

// msw replaces globalThis.fetch when it starts listening (in beforeAll): this is the real one,
// used to reach a closed local port for a genuine "connection refused".
const realFetch = globalThis.fetch;

useMsw();

const T = '/external/v1/test';
const amount = { value: 1050, currency: 'EUR' } as const;
const sessionParams = { amount, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' };
const posParams = { poiId: 'V400m-TEST-000001', amount };
const terminals = [{ poiId: 'V400m-TEST-000001', status: 'boarded' }];

function thrown(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

function envelope(status: number, code: number | undefined, message: string) {
  return { success: false, error: { message, ...(code === undefined ? {} : { code }), statusCode: status, traceId: 'trace-123' } };
}

interface Call {
  method: 'get' | 'post';
  path: string;
  run: (c: PaymentClient) => PromiseLike<unknown>;
}

const createSession: Call = { method: 'post', path: `${T}/payment/session`, run: (c) => c.sessions.create(sessionParams) };
const createPos: Call = { method: 'post', path: `${T}/pos/payment`, run: (c) => c.pos.createPayment(posParams, { recover: false }) };
const listTerminals: Call = { method: 'get', path: `${T}/pos/terminals`, run: (c) => c.terminals.list() };
const refund: Call = {
  method: 'post',
  path: `${T}/payment/refund`,
  run: (c) => c.modifications.refund({ paymentReference: 'SHOP1-PXTT-1', amount, reason: 'broken' }),
};

describe('failure envelopes become typed errors', () => {
  type ErrorClass = abstract new (...args: never[]) => ApiError;
  interface Case {
    label: string;
    call: Call;
    status: number;
    code: number | undefined;
    message: string;
    headers?: Record<string, string>;
    type: ErrorClass;
    /** Ancestors the error must also be an instance of, besides ApiError and PaymentServiceError. */
    also?: ErrorClass[];
  }

  const cases: Case[] = [
    {
      label: '400 / 12001',
      call: createPos,
      status: 400,
      code: 12001,
      message: 'Invalid terminal: device not found',
      type: InvalidRequestError,
    },
    {
      label: '400 / 12002',
      call: createSession,
      status: 400,
      code: 12002,
      message: 'deliverAt must be ISO 8601',
      type: InvalidRequestError,
    },
    {
      label: '400 / 12006',
      call: createSession,
      status: 400,
      code: 12006,
      message: 'Invalid countryCode format',
      type: InvalidRequestError,
    },
    { label: '400 / 12009', call: createSession, status: 400, code: 12009, message: 'Country not supported', type: InvalidRequestError },
    { label: '401', call: listTerminals, status: 401, code: undefined, message: 'Unauthorized', type: AuthenticationError },
    {
      label: '403 / 11008',
      call: listTerminals,
      status: 403,
      code: 11008,
      message: 'Webcode does not match the API key',
      type: PermissionDeniedError,
    },
    {
      label: '403 without code (IP)',
      call: createSession,
      status: 403,
      code: undefined,
      message: 'Forbidden',
      type: PermissionDeniedError,
    },
    {
      label: '404 / 19404 (an unknown payment)',
      call: refund,
      status: 404,
      code: 19404,
      message: 'paymentReference does not name a payment of this webcode in Test: SHOP1-PXTT-1 not found',
      type: NotFoundError,
    },
    {
      label: '404 without code (an unknown session)',
      call: { method: 'get', path: `${T}/payment/session/SHOP1-EXTT-1`, run: (c) => c.sessions.retrieve('SHOP1-EXTT-1') },
      status: 404,
      code: undefined,
      message: 'Not found',
      type: NotFoundError,
    },
    {
      label: '409 / 13005',
      call: createPos,
      status: 409,
      code: 13005,
      message: 'Terminal busy (test simulation)',
      type: TerminalBusyError,
      also: [ConflictError],
    },
    {
      label: '409 idempotency body',
      call: createSession,
      status: 409,
      code: undefined,
      message: 'Idempotency key reused with a different request body.',
      type: IdempotencyConflictError,
      also: [ConflictError],
    },
    {
      label: '409 idempotency endpoint',
      call: refund,
      status: 409,
      code: undefined,
      message: 'Idempotency key already used for a different endpoint.',
      type: IdempotencyConflictError,
      also: [ConflictError],
    },
    { label: '409 other', call: refund, status: 409, code: undefined, message: 'Payment already refunded', type: ConflictError },
    {
      label: '429',
      call: listTerminals,
      status: 429,
      code: undefined,
      message: 'Too many requests',
      headers: { 'Retry-After': '2' },
      type: RateLimitError,
    },
    {
      label: '502 / 13004',
      call: createPos,
      status: 502,
      code: 13004,
      message: 'Error in POS payment response: Reject',
      type: TerminalCommunicationError,
    },
    { label: '500', call: listTerminals, status: 500, code: undefined, message: 'Internal error', type: ServerError },
    { label: '503', call: createSession, status: 503, code: undefined, message: 'Service unavailable', type: ServerError },
    { label: '404 (an unknown path)', call: listTerminals, status: 404, code: undefined, message: 'Not found', type: NotFoundError },
    { label: '418', call: listTerminals, status: 418, code: undefined, message: 'Teapot', type: ApiError },
  ];

  it.each(cases)('$label → $type.name', async ({ call, status, code, message, headers, type, also = [] }) => {
    respond(call.method, call.path, () => failure(status, code, message, headers));
    const error = await rejection(call.run(client({ maxRetries: 0 })));

    expect(error).toBeInstanceOf(type);
    expect((error as object).constructor).toBe(type); // exactly this class, not a parent or a sibling
    for (const ancestor of [...also, ApiError, PaymentServiceError, Error]) expect(error).toBeInstanceOf(ancestor);
    const api = error as ApiError;
    expect(api.name).toBe(type.name);
    expect(api).toMatchObject({ status, code, traceId: 'trace-123', attempts: 1 });
    // The service's message first; 401 and 403 11008 add what to check.
    expect(api.message.startsWith(message)).toBe(true);
    if (status !== 401 && code !== 11008) expect(api.message).toBe(message);
    expect(JSON.parse(api.body)).toEqual(envelope(status, code, message));
    expect(seen).toHaveLength(1);
  });

  it.each(['test', 'live'] as const)(
    'a 403 11008 says which of key, environment and webcode to check (%s), never the key',
    async (environment) => {
      const base = environment === 'test' ? T : '/external/v1';
      respond('get', `${base}/pos/terminals`, () => failure(403, 11008, 'API key without permission'));
      const error = (await rejection(client({ environment, webcode: 'SHOP77' }).terminals.list())) as PermissionDeniedError;
      expect(error).toBeInstanceOf(PermissionDeniedError);
      expect(error.message).toMatch(/^API key without permission\. Check/);
      expect(error.message).toContain(environment === 'test' ? 'needs a Test key' : 'needs a Live key');
      expect(error.message).toContain(`this client calls ${environment}`);
      expect(error.message).toContain('"SHOP77"');
      expect(error.message).not.toContain(API_KEY);
      expect(JSON.stringify(error)).not.toContain(API_KEY);
      expect(seen).toHaveLength(1);
    },
  );

  it('a 403 without a code (IP allow-list) keeps the service message alone', async () => {
    respond('get', `${T}/pos/terminals`, () => failure(403, undefined, 'Forbidden'));
    const error = (await rejection(client().terminals.list())) as PermissionDeniedError;
    expect(error.message).toBe('Forbidden');
  });

  it('a 401 is an AuthenticationError saying to check the key, not retried', async () => {
    respond('post', `${T}/payment/session`, () => failure(401, undefined, 'Unauthorized'));
    const error = (await rejection(createSession.run(client()))) as AuthenticationError;
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.name).toBe('AuthenticationError');
    expect(error.message).toMatch(/^Unauthorized\. Check the API key/);
    expect(error.message).not.toContain(API_KEY);
    expect(seen).toHaveLength(1);
  });

  it.each([
    ['Idempotency key reused with a different request body.', 'body-mismatch'],
    ['Idempotency key already used for a different endpoint.', 'endpoint-mismatch'],
  ])('409 "%s" → reason %s', async (message, reason) => {
    respond('post', `${T}/payment/session`, () => failure(409, undefined, message));
    const error = await rejection(createSession.run(client()));
    expect(error).toBeInstanceOf(IdempotencyConflictError);
    expect((error as IdempotencyConflictError).reason).toBe(reason);
    expect(seen).toHaveLength(1); // a conflict is never retried
  });

  it('a 409 that is neither documented conflict is a plain ConflictError', async () => {
    respond('post', `${T}/payment/capture`, () => failure(409, undefined, 'Idempotency key is being processed'));
    const error = await rejection(client().modifications.capture({ paymentReference: 'SHOP1-PXTT-1' }));
    expect((error as object).constructor).toBe(ConflictError);
  });

  it('429 Retry-After: 2 → retryAfterMs 2000', async () => {
    respond('get', `${T}/pos/terminals`, () => failure(429, undefined, 'Slow down', { 'Retry-After': '2' }));
    const error = await rejection(client({ maxRetries: 0 }).terminals.list());
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(2000);
  });

  it('429 without Retry-After → retryAfterMs undefined', async () => {
    respond('get', `${T}/pos/terminals`, () => failure(429, undefined, 'Slow down'));
    const error = await rejection(client({ maxRetries: 0 }).terminals.list());
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBeUndefined();
  });

  it('502 without 13004 is a ServerError, not a terminal error', async () => {
    respond('post', `${T}/pos/payment`, () => failure(502, undefined, 'Bad gateway'));
    const error = await rejection(createPos.run(client()));
    expect((error as object).constructor).toBe(ServerError);
  });
});

describe('bodies that are not the failure envelope', () => {
  const html = '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>';

  it.each([
    { label: 'HTML 502 proxy page', status: 502, body: html, contentType: 'text/html', type: ServerError },
    { label: 'empty 503', status: 503, body: '', contentType: undefined, type: ServerError },
    { label: 'invalid JSON 500', status: 500, body: '{"success": false, "error": {', contentType: 'application/json', type: ServerError },
    { label: 'plain-text 403', status: 403, body: 'Forbidden', contentType: 'text/plain', type: PermissionDeniedError },
    { label: 'HTML 400', status: 400, body: '<h1>Bad Request</h1>', contentType: 'text/html', type: InvalidRequestError },
  ])('$label → $type.name with the raw text in .body', async ({ status, body, contentType, type }) => {
    respond(
      'get',
      `${T}/pos/terminals`,
      () => new HttpResponse(body === '' ? null : body, { status, ...(contentType ? { headers: { 'Content-Type': contentType } } : {}) }),
    );
    const error = await rejection(client({ maxRetries: 0 }).terminals.list());
    expect((error as object).constructor).toBe(type);
    const api = error as ApiError;
    expect(api).toMatchObject({ status, body, code: undefined, traceId: undefined });
    expect(api.message).toContain(String(status));
  });

  it.each([
    ['a bare object', JSON.stringify({ sessionId: 'SHOP1-EXTT-1', status: 'pending' })],
    ['success without data', JSON.stringify({ success: true })],
    ['an HTML page', '<html><body>Welcome</body></html>'],
    ['invalid JSON', '{"success": true, "data": '],
    ['an empty body', ''],
  ])('a 200 whose body is %s → ResponseValidationError with .body', async (_label, body) => {
    respond('get', `${T}/payment/session/SHOP1-EXTT-1`, () => new HttpResponse(body === '' ? null : body, { status: 200 }));
    const error = await rejection(client().sessions.retrieve('SHOP1-EXTT-1'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error).toBeInstanceOf(PaymentServiceError);
    expect(error).not.toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ name: 'ResponseValidationError', body, status: 200, method: 'GET' });
  });
});

describe('request context on errors', () => {
  it('a POST error carries method, path, attempts and the Idempotency-Key it sent', async () => {
    respond('post', `${T}/payment/session`, () => failure(400, 12001, 'amount is required'));
    const error = (await rejection(createSession.run(client()))) as ApiError;
    const sent = seen[0]?.headers.get('idempotency-key');
    expect(sent).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(error).toMatchObject({ method: 'POST', path: `${T}/payment/session`, attempts: 1, idempotencyKey: sent });
  });

  it("a caller's Idempotency-Key is the one on the error", async () => {
    respond('post', `${T}/payment/refund`, () => failure(409, undefined, 'Idempotency key reused with a different request body.'));
    const error = (await rejection(
      client().modifications.refund({ paymentReference: 'SHOP1-PXTT-1' }, { idempotencyKey: 'order-42-refund-1' }),
    )) as ApiError;
    expect(seen[0]?.headers.get('idempotency-key')).toBe('order-42-refund-1');
    expect(error.idempotencyKey).toBe('order-42-refund-1');
  });

  it('a GET error has a path without the query string and no idempotency key', async () => {
    respond('get', `${T}/payment/sessions`, () => failure(404, undefined, 'Not found'));
    const error = (await rejection(client().sessions.list({ status: 'completed', take: 5 }).firstPage())) as ApiError;
    expect(seen[0]?.url.search).toContain('take=5'); // the query was sent...
    expect(error).toMatchObject({ method: 'GET', path: `${T}/payment/sessions`, idempotencyKey: undefined, attempts: 1 }); // ...but is not on the error
  });

  it('a path parameter is part of the path; a live client has the live path', async () => {
    respond('get', '/external/v1/payment/session/SHOP1-EXT-17', () => failure(404, undefined, 'Session not found'));
    const error = (await rejection(client({ environment: 'live' }).sessions.retrieve('SHOP1-EXT-17'))) as ApiError;
    expect(error).toMatchObject({ status: 404, path: '/external/v1/payment/session/SHOP1-EXT-17' });
  });

  it('attempts counts the retries and the same key is on every attempt and on the error', async () => {
    respond('post', `${T}/payment/cancel`, () => failure(503, undefined, 'down', { 'Retry-After': '0' }));
    const error = (await rejection(client({ maxRetries: 2 }).modifications.cancel({ paymentReference: 'SHOP1-PXTT-1' }))) as ApiError;
    expect(error).toBeInstanceOf(ServerError);
    expect(seen).toHaveLength(3);
    expect(error.attempts).toBe(3);
    expect(new Set(seen.map((request) => request.headers.get('idempotency-key')))).toEqual(new Set([error.idempotencyKey]));
  });

  it('a TimeoutError carries the timeout, the request context and the POST key', async () => {
    respond('post', `${T}/payment/session`, async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return success({});
    });
    const error = await rejection(client({ timeout: 50, maxRetries: 0 }).sessions.create(sessionParams));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({
      name: 'TimeoutError',
      timeoutMs: 50,
      method: 'POST',
      path: `${T}/payment/session`,
      attempts: 1,
      idempotencyKey: seen[0]?.headers.get('idempotency-key'),
    });
  });

  it('a network failure is a ConnectionError with a cause and the request context', async () => {
    respond('get', `${T}/pos/terminals`, () => HttpResponse.error());
    const error = await rejection(client({ maxRetries: 0 }).terminals.list());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ name: 'ConnectionError', method: 'GET', path: `${T}/pos/terminals`, attempts: 1 });
    expect((error as ConnectionError).cause).toBeDefined();
  });
});

describe('ErrorCode', () => {
  it('matches the documented codes', () => {
    expect(ErrorCode).toEqual({
      INVALID_REQUEST: 12001,
      INVALID_DELIVER_AT: 12002,
      INVALID_COUNTRY_CODE: 12006,
      COUNTRY_NOT_SUPPORTED: 12009,
      PERMISSION_DENIED: 11008,
      TERMINAL_COMMUNICATION: 13004,
      TERMINAL_BUSY: 13005,
    });
  });

  it('is what the errors carry', async () => {
    respond('post', `${T}/pos/payment`, () => failure(409, 13005, 'Terminal busy'));
    const error = (await rejection(createPos.run(client()))) as ApiError;
    expect(error.code).toBe(ErrorCode.TERMINAL_BUSY);
  });
});

describe('the API key never leaks', () => {
  /** Every rendering of an error a program or a log might produce. */
  function renderings(value: unknown): Record<string, string> {
    const error = value as Error;
    return {
      message: error.message,
      json: JSON.stringify(error),
      inspect: inspect(error, { depth: 10 }),
      inspectHidden: inspect(error, { depth: 10, showHidden: true }),
      string: String(error),
      stack: error.stack ?? '',
    };
  }

  function expectNoKey(value: unknown, secret = API_KEY): void {
    for (const [form, text] of Object.entries(renderings(value))) {
      expect(text, form).not.toContain(secret);
    }
  }

  async function closedPort(): Promise<number> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const address = probe.address();
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    if (address === null || typeof address === 'string') throw new Error('no port');
    return address.port;
  }

  it('ApiError', async () => {
    respond('post', `${T}/payment/session`, () => failure(403, 11008, 'API key without permission'));
    const error = await rejection(createSession.run(client()));
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(seen[0]?.headers.get('x-api-key')).toBe(API_KEY); // the key really was in play
    expectNoKey(error);
  });

  it('ConnectionError from a network error', async () => {
    respond('post', `${T}/payment/session`, () => HttpResponse.error());
    const error = await rejection(client({ maxRetries: 0 }).sessions.create(sessionParams));
    expect(error).toBeInstanceOf(ConnectionError);
    expectNoKey(error);
  });

  it('ConnectionError from a refused connection', async () => {
    const port = await closedPort();
    const sdk = client({ baseUrl: `http://127.0.0.1:${port}`, fetch: realFetch, maxRetries: 0 });
    const error = await rejection(sdk.sessions.create(sessionParams));
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).notSent).toBe(true);
    expectNoKey(error);
  });

  it('TimeoutError', async () => {
    respond('get', `${T}/pos/terminals`, async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return success(terminals);
    });
    const error = await rejection(client({ timeout: 50, maxRetries: 0 }).terminals.list());
    expect(error).toBeInstanceOf(TimeoutError);
    expectNoKey(error);
  });

  it('RequestValidationError', async () => {
    const error = await rejection(client().sessions.create({ ...sessionParams, urlOk: 'not a url' }));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect(seen).toHaveLength(0);
    expectNoKey(error);
  });

  it('ResponseValidationError', async () => {
    respond('get', `${T}/payment/session/SHOP1-EXTT-1`, () => success({ status: 'pending' }));
    const error = await rejection(client().sessions.retrieve('SHOP1-EXTT-1'));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expectNoKey(error);
  });

  it.each([
    ['a key with a trailing space', { apiKey: `${API_KEY} ` }, 'apiKey'],
    ['a key with a newline', { apiKey: `${API_KEY}\n` }, 'apiKey'],
    ['the key as baseUrl credentials', { baseUrl: `https://merchant:${API_KEY}@pay.example.com` }, 'baseUrl'],
    ['the key in a baseUrl query', { baseUrl: `https://pay.example.com/?key=${API_KEY}` }, 'baseUrl'],
    ['a missing webcode', { webcode: '' }, 'webcode'],
  ])('ConfigurationError for %s', (_label, options, option) => {
    const error = thrown(() => new PaymentClient({ apiKey: API_KEY, webcode: WEBCODE, baseUrl: BASE_URL, ...options }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).option).toBe(option);
    expectNoKey(error);
  });

  it('util.inspect and JSON.stringify of a client', () => {
    const sdk = client();
    for (const text of [inspect(sdk, { depth: 10 }), inspect(sdk, { depth: 10, showHidden: true }), JSON.stringify(sdk), String(sdk)]) {
      expect(text).not.toContain(API_KEY);
    }
    expect(inspect(sdk)).toContain(WEBCODE); // the inspection did render the client
  });

  it('the logger never receives the key', async () => {
    const calls: { level: string; args: unknown[] }[] = [];
    const record =
      (level: string) =>
      (...args: unknown[]) => {
        calls.push({ level, args });
      };
    const logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
    const sdk = client({ logger, maxRetries: 1 });

    respond('get', `${T}/pos/terminals`, (_request, count) =>
      count === 1 ? failure(503, undefined, 'busy', { 'Retry-After': '0' }) : success(terminals),
    );
    respond('post', `${T}/payment/session`, () => failure(403, 11008, 'API key without permission'));
    await sdk.terminals.list();
    await rejection(sdk.sessions.create(sessionParams));

    expect(calls.map((call) => call.level)).toEqual(expect.arrayContaining(['debug', 'warn']));
    expect(calls.length).toBeGreaterThanOrEqual(4); // 2 debug for the retried GET, 1 warn, 1 debug for the POST
    for (const call of calls) expect(JSON.stringify(call.args)).not.toContain(API_KEY);
  });
});
