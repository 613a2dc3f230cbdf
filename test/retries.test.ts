/**
 * Retries over real HTTP on 127.0.0.1, against the fault-injecting test server (no msw here).
 *
 * Every scenario checks three things: how many attempts the SDK made (seen from the client side,
 * so attempts the server never read are counted too), that every attempt of one call carried the
 * same `Idempotency-Key`, and that the server ran the operation at most once (`server.runs`).
 *
 * Every scenario runs twice, once per way an attempt goes out: through ky when the client has
 * `beforeRequest` or `afterResponse` hooks (attempts seen by a `beforeRequest` hook), and straight
 * to the global `fetch` when it has none (attempts seen by a spy on it).
 */
import { type AddressInfo, connect, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  type ClientOptions,
  ConflictError,
  ConnectionError,
  IdempotencyConflictError,
  InvalidRequestError,
  PaymentClient,
  PaymentServiceError,
  PermissionDeniedError,
  RateLimitError,
  type RetryInfo,
  ServerError,
  TerminalBusyError,
  TerminalCommunicationError,
  TimeoutError,
} from '../src/index.js';
import { type Fault, type FaultServer, startFaultServer } from './support/fault-server.js';
import { rejection as rejectionOf } from './support/rejection.js';

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(() => server.close());

beforeEach(() => {
  server.reset();
  // Full jitter draws from Math.random: 0 makes every backoff wait 0 ms (Retry-After still applies).
  vi.spyOn(Math, 'random').mockReturnValue(0);
});
afterEach(() => {
  vi.restoreAllMocks();
});

const PREFIX = '/external/v1/test';
const SESSION = 'POST /payment/session';
const REFUND = 'POST /payment/refund';
const CHARGE = 'POST /pos/payment';
const TERMINALS = 'GET /pos/terminals';

const sessionParams = {
  amount: { value: 1000, currency: 'EUR' },
  urlOk: 'https://shop.example/ok',
  urlKo: 'https://shop.example/ko',
} as const;
const refundParams = { paymentReference: 'SHOP1-EXTT-17000000001', amount: { value: 500, currency: 'EUR' } } as const;
const chargeParams = { poiId: 'V400m-TEST-000001', amount: { value: 1099, currency: 'EUR' } } as const;

/** One HTTP attempt, as the client sent it. */
interface Sent {
  method: string;
  path: string;
  key: string | undefined;
}

interface Harness {
  client: PaymentClient;
  /** Every HTTP attempt the SDK made, in order, with the `Idempotency-Key` it carried. */
  sent: Sent[];
  /** Everything `hooks.onRetry` was told. */
  retries: RetryInfo[];
}

/** The two ways an attempt goes out (see the top of the file). */
const ROUTES = ['through ky, which runs the hooks', 'straight to fetch, without hooks'] as const;
let route: (typeof ROUTES)[number] = ROUTES[0];

// On the fetch route the clients call the global fetch, which a spy watches: each harness records
// the attempts carrying its own API key.
const realFetch = globalThis.fetch;
const recorders = new Map<string, (request: Request) => void>();
let harnesses = 0;
function watchGlobalFetch(): void {
  vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    const request = new Request(input, init);
    recorders.get(request.headers.get('x-api-key') ?? '')?.(request);
    return realFetch(input, init);
  });
}

function sdk(options: ClientOptions = {}): Harness {
  const sent: Sent[] = [];
  const retries: RetryInfo[] = [];
  const { hooks, ...rest } = options;
  const apiKey = `sk_test_harness${++harnesses}`;
  const record = (request: Request) => {
    sent.push({
      method: request.method,
      path: new URL(request.url).pathname,
      key: request.headers.get('idempotency-key') ?? undefined,
    });
  };
  const onRetry = async (info: RetryInfo) => {
    retries.push(info);
    await hooks?.onRetry?.(info);
  };
  if (route === ROUTES[1]) recorders.set(apiKey, record);
  const client = new PaymentClient({
    apiKey,
    webcode: 'SHOP1',
    baseUrl: server.baseUrl,
    environment: 'test',
    ...rest,
    hooks: route === ROUTES[0] ? { beforeRequest: record, onRetry } : { onRetry },
  });
  return { client, sent, retries };
}

/** A failure envelope as the service sends it. */
function envelope(status: number, code?: number, message = `failure ${status}`): string {
  return JSON.stringify({
    success: false,
    error: { message, ...(code === undefined ? {} : { code }), statusCode: status, traceId: `trace-${status}` },
  });
}

function fail(status: number, options: { code?: number; message?: string; headers?: Record<string, string>; body?: string } = {}): Fault {
  return {
    kind: 'respond',
    status,
    body: options.body ?? envelope(status, options.code, options.message),
    ...(options.headers ? { headers: options.headers } : {}),
  };
}

const PROXY_PAGE =
  '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>';

/** The single `Idempotency-Key` shared by all the given attempts (fails if they differ or lack one). */
function oneKey(attempts: readonly Sent[]): string {
  expect(attempts.length).toBeGreaterThan(0);
  const keys = new Set(attempts.map((attempt) => attempt.key));
  expect(keys.size).toBe(1);
  const [key] = [...keys];
  if (key === undefined) throw new Error('the attempts carried no Idempotency-Key');
  expect(key).toMatch(/^[\x21-\x7e]{1,255}$/);
  return key;
}

/** The key of every attempt the server read on `route` is `key`. */
function serverSawOnly(route: string, key: string): void {
  for (const request of server.seen(route)) expect(request.idempotencyKey).toBe(key);
}

/** Operations the server actually ran, over all keys. */
function operationsRun(): number {
  return [...server.runs.values()].reduce((sum, count) => sum + count, 0);
}

/** The server ran the operation of `key` at most once, and nothing else ran. */
function ranAtMostOnce(key: string): void {
  expect(server.runs.get(key) ?? 0).toBeLessThanOrEqual(1);
  expect(operationsRun()).toBe(server.runs.get(key) ?? 0);
}

/** Awaits a call that must fail, checks the error's class, and returns it typed. */
async function rejection<T>(promise: PromiseLike<unknown>, type: abstract new (...args: any[]) => T): Promise<T> {
  let error: unknown;
  try {
    await promise;
  } catch (caught) {
    error = caught;
  }
  if (error === undefined) throw new Error(`expected the call to fail with ${type.name}, it resolved`);
  expect(error).toBeInstanceOf(type);
  return error as T;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A port on 127.0.0.1 with nothing listening: connections are refused. */
async function refusedPort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A TCP relay on `port` to the fault server, so a port that refused connections starts answering. */
async function relay(port: number): Promise<{ close(): Promise<void> }> {
  const target = Number(new URL(server.baseUrl).port);
  const sockets = new Set<Socket>();
  const relayServer: NetServer = createNetServer((socket) => {
    const upstream = connect(target, '127.0.0.1');
    for (const end of [socket, upstream]) {
      sockets.add(end);
      end.on('error', () => undefined);
      end.on('close', () => {
        socket.destroy();
        upstream.destroy();
      });
    }
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => relayServer.listen(port, '127.0.0.1', resolve));
  return {
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => relayServer.close(() => resolve()));
    },
  };
}

describe.each(ROUTES)('%s', (current) => {
  beforeEach(() => {
    route = current;
    recorders.clear();
    if (route === ROUTES[1]) watchGlobalFetch();
  });

  describe('issue scenarios', () => {
    it('connection reset before the response: resent with the same key, the operation ran once', async () => {
      const { client, sent, retries } = sdk();
      // The service runs the operation, then the connection dies before any response byte.
      server.script(SESSION, { kind: 'reset-after' });

      const { data, idempotencyKey } = await client.sessions.create(sessionParams).withResponse();

      expect(sent).toHaveLength(2);
      const key = oneKey(sent);
      expect(idempotencyKey).toBe(key);
      expect(server.seen(SESSION)).toHaveLength(2);
      serverSawOnly(SESSION, key);
      expect(server.seen(SESSION)[1]?.body).toBe(server.seen(SESSION)[0]?.body);
      expect(server.runs.get(key)).toBe(1);
      ranAtMostOnce(key);
      expect(data.sessionId).toMatch(/^SHOP1-EXTT-/);
      expect(retries).toHaveLength(1);
      expect(retries[0]?.error).toBeInstanceOf(ConnectionError);
    });

    it('a response that stalls past the timeout: TimeoutError, resent with the same key, the operation ran once', async () => {
      const { client, sent, retries } = sdk({ timeout: 500 });
      server.script(SESSION, { kind: 'stall', ms: 5_000 });

      const started = performance.now();
      const session = await client.sessions.create(sessionParams);
      const elapsed = performance.now() - started;

      expect(session.status).toBe('pending');
      expect(sent).toHaveLength(2);
      const key = oneKey(sent);
      serverSawOnly(SESSION, key);
      expect(server.runs.get(key)).toBe(1);
      ranAtMostOnce(key);
      expect(retries).toHaveLength(1);
      const error = retries[0]?.error;
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error).not.toBeInstanceOf(ConnectionError);
      expect((error as TimeoutError).timeoutMs).toBe(500);
      // The first attempt was given up at the timeout, not after the stall.
      expect(elapsed).toBeLessThan(2_500);
    });

    it('503 then 201: retried once with the same key, the operation ran once', async () => {
      const { client, sent, retries } = sdk();
      server.script(SESSION, fail(503, { headers: { 'retry-after': '0' } }));

      const { data, response, idempotencyKey } = await client.sessions.create(sessionParams).withResponse();

      expect(response.status).toBe(201);
      expect(data.sessionId).toMatch(/^SHOP1-EXTT-/);
      expect(sent).toHaveLength(2);
      const key = oneKey(sent);
      expect(idempotencyKey).toBe(key);
      expect(server.seen(SESSION)).toHaveLength(2);
      serverSawOnly(SESSION, key);
      expect(server.runs.get(key)).toBe(1);
      ranAtMostOnce(key);
      expect(retries.map((retry) => (retry.error as ApiError).status)).toEqual([503]);
    });

    it('429 with Retry-After: 1 waits 1000 ms, then succeeds with the same key', async () => {
      const { client, sent, retries } = sdk();
      server.script(SESSION, fail(429, { headers: { 'retry-after': '1' } }));

      const started = performance.now();
      await client.sessions.create(sessionParams);
      const elapsed = performance.now() - started;

      expect(sent).toHaveLength(2);
      const key = oneKey(sent);
      serverSawOnly(SESSION, key);
      expect(server.runs.get(key)).toBe(1);
      ranAtMostOnce(key);
      expect(retries).toHaveLength(1);
      expect(retries[0]?.delayMs).toBe(1000);
      expect(retries[0]?.error).toBeInstanceOf(RateLimitError);
      expect((retries[0]!.error as RateLimitError).retryAfterMs).toBe(1000);
      expect(elapsed).toBeGreaterThanOrEqual(950);
    });

    it('a 502 proxy page (HTML, no code) is retried with the same key, the operation ran once', async () => {
      const { client, sent, retries } = sdk();
      server.script(SESSION, fail(502, { body: PROXY_PAGE, headers: { 'content-type': 'text/html' } }));

      await client.sessions.create(sessionParams);

      expect(sent).toHaveLength(2);
      const key = oneKey(sent);
      serverSawOnly(SESSION, key);
      expect(server.runs.get(key)).toBe(1);
      ranAtMostOnce(key);
      const error = retries[0]?.error;
      expect(error).toBeInstanceOf(ServerError);
      expect((error as ServerError).status).toBe(502);
      expect((error as ServerError).code).toBeUndefined();
      expect((error as ServerError).body).toBe(PROXY_PAGE);
    });

    it('a 400 is not retried: one attempt, nothing ran, the error carries attempts and the key', async () => {
      const { client, sent, retries } = sdk();
      server.script(SESSION, fail(400, { code: 12001, message: 'amount.value is required' }));

      const error = await rejection(client.sessions.create(sessionParams), InvalidRequestError);

      expect(sent).toHaveLength(1);
      const key = oneKey(sent);
      expect(server.seen(SESSION)).toHaveLength(1);
      serverSawOnly(SESSION, key);
      expect(operationsRun()).toBe(0);
      expect(retries).toHaveLength(0);
      expect(error.status).toBe(400);
      expect(error.code).toBe(12001);
      expect(error.attempts).toBe(1);
      expect(error.idempotencyKey).toBe(key);
    });

    it('an abort during the backoff wait rejects at once with the abort reason; nothing else is sent', async () => {
      const controller = new AbortController();
      const reason = new Error('the shopper left');
      // Retry-After: 30 would hold the call for 30 s: only the abort can end it quickly.
      const { client, sent, retries } = sdk({
        hooks: { onRetry: () => void setTimeout(() => controller.abort(reason), 20) },
      });
      server.script(SESSION, fail(503, { headers: { 'retry-after': '30' } }));

      const started = performance.now();
      const error = await rejectionOf(client.sessions.create(sessionParams, { signal: controller.signal }));
      const elapsed = performance.now() - started;

      expect(error).toBe(reason);
      expect(elapsed).toBeLessThan(1000);
      expect(retries).toHaveLength(1);
      expect(retries[0]?.delayMs).toBe(30_000);
      await pause(50);
      expect(sent).toHaveLength(1);
      const key = oneKey(sent);
      expect(server.seen(SESSION)).toHaveLength(1);
      serverSawOnly(SESSION, key);
      expect(operationsRun()).toBe(0);
    });
  });

  describe('what is retried', () => {
    it.each([408, 500, 502, 503, 504])('%i is retried for a GET and for a keyed write', async (status) => {
      const { client, sent } = sdk();
      server.script(TERMINALS, fail(status));
      server.script(REFUND, fail(status));

      const terminals = await client.terminals.list();
      expect(terminals[0]?.poiId).toBe('V400m-TEST-000001');
      expect(sent.filter((attempt) => attempt.method === 'GET')).toHaveLength(2);
      expect(server.seen(TERMINALS)).toHaveLength(2);

      const refund = await client.modifications.refund(refundParams);
      expect(refund.status).toBe('pending');
      const writes = sent.filter((attempt) => attempt.method === 'POST');
      expect(writes).toHaveLength(2);
      const key = oneKey(writes);
      serverSawOnly(REFUND, key);
      expect(server.runs.get(key)).toBe(1);
      ranAtMostOnce(key);
    });

    it.each([
      [400, 12001, InvalidRequestError],
      [401, undefined, ApiError],
      [403, 11008, PermissionDeniedError],
      [404, undefined, ApiError],
      [409, undefined, ConflictError],
      [422, undefined, ApiError],
    ] as const)('%i is not retried', async (status, code, type) => {
      const { client, sent, retries } = sdk();
      server.script(REFUND, fail(status, code === undefined ? {} : { code }));

      const error = await rejection(client.modifications.refund(refundParams), type);

      expect(error.status).toBe(status);
      expect(error.attempts).toBe(1);
      expect(sent).toHaveLength(1);
      expect(error.idempotencyKey).toBe(oneKey(sent));
      expect(server.seen(REFUND)).toHaveLength(1);
      expect(retries).toHaveLength(0);
      expect(operationsRun()).toBe(0);
    });

    it('a 4xx on a GET is not retried either', async () => {
      const { client, sent } = sdk();
      server.script(TERMINALS, fail(403, { code: 11008 }));

      const error = await rejection(client.terminals.list(), PermissionDeniedError);

      expect(error.attempts).toBe(1);
      expect(error.idempotencyKey).toBeUndefined();
      expect(sent).toEqual([{ method: 'GET', path: `${PREFIX}/pos/terminals`, key: undefined }]);
    });

    it('502 with 13004 (terminal offline) is not retried', async () => {
      const { client, sent } = sdk();
      server.script(REFUND, fail(502, { code: 13004, message: 'Could not communicate with the terminal' }));

      const error = await rejection(client.modifications.refund(refundParams), TerminalCommunicationError);

      expect(error.status).toBe(502);
      expect(error.code).toBe(13004);
      expect(error.attempts).toBe(1);
      expect(sent).toHaveLength(1);
      expect(server.seen(REFUND)).toHaveLength(1);
    });

    it('409 with 13005 (terminal busy) is not retried, nor is an idempotency conflict', async () => {
      const { client, sent } = sdk();
      server.script(REFUND, fail(409, { code: 13005, message: 'Another payment is in progress' }));
      const busy = await rejection(client.modifications.refund(refundParams), TerminalBusyError);
      expect(busy.attempts).toBe(1);
      expect(sent).toHaveLength(1);

      // Same key, different body: the server itself answers 409.
      await client.modifications.refund(refundParams, { idempotencyKey: 'refund-key-1' });
      const conflict = await rejection(
        client.modifications.refund({ ...refundParams, amount: { value: 400, currency: 'EUR' } }, { idempotencyKey: 'refund-key-1' }),
        IdempotencyConflictError,
      );
      expect(conflict.reason).toBe('body-mismatch');
      expect(conflict.attempts).toBe(1);
      expect(sent).toHaveLength(3);
      expect(server.runs.get('refund-key-1')).toBe(1);
    });

    it('429 without Retry-After is retried after the backoff', async () => {
      const { client, sent, retries } = sdk();
      server.script(TERMINALS, fail(429));

      await client.terminals.list();

      expect(sent).toHaveLength(2);
      expect(retries).toHaveLength(1);
      expect(retries[0]?.error).toBeInstanceOf(RateLimitError);
      expect((retries[0]!.error as RateLimitError).retryAfterMs).toBeUndefined();
      expect(retries[0]?.delayMs).toBe(0);
    });

    it('a Retry-After over 60 s is not waited for: the RateLimitError is thrown with retryAfterMs', async () => {
      const { client, sent, retries } = sdk();
      server.script(SESSION, fail(429, { headers: { 'retry-after': '61' } }));

      const started = performance.now();
      const error = await rejection(client.sessions.create(sessionParams), RateLimitError);

      expect(performance.now() - started).toBeLessThan(1000);
      expect(error.retryAfterMs).toBe(61_000);
      expect(error.attempts).toBe(1);
      expect(sent).toHaveLength(1);
      expect(error.idempotencyKey).toBe(oneKey(sent));
      expect(retries).toHaveLength(0);
      expect(operationsRun()).toBe(0);
    });

    it('a Retry-After of exactly 60 s is still honoured (the wait is cancelled here)', async () => {
      const controller = new AbortController();
      const { client, sent, retries } = sdk({ hooks: { onRetry: () => controller.abort() } });
      server.script(TERMINALS, fail(429, { headers: { 'retry-after': '60' } }));

      await rejectionOf(client.terminals.list({}, { signal: controller.signal }));

      expect(retries).toHaveLength(1);
      expect(retries[0]?.delayMs).toBe(60_000);
      expect(sent).toHaveLength(1);
    });

    it("the service's Retry-After replaces the backoff", async () => {
      vi.spyOn(Math, 'random').mockReturnValue(0.99);
      const { client, retries } = sdk();
      server.script(REFUND, fail(503, { headers: { 'retry-after': '0' } }));

      await client.modifications.refund(refundParams);

      expect(retries.map((retry) => retry.delayMs)).toEqual([0]);
    });

    it('a Retry-After HTTP date over 60 s away is not waited for either', async () => {
      const { client, sent } = sdk();
      const date = new Date(Date.now() + 120_000).toUTCString();
      server.script(TERMINALS, fail(429, { headers: { 'retry-after': date } }));

      const error = await rejection(client.terminals.list(), RateLimitError);

      expect(error.retryAfterMs).toBeGreaterThan(115_000);
      expect(error.retryAfterMs).toBeLessThanOrEqual(120_000);
      expect(error.attempts).toBe(1);
      expect(sent).toHaveLength(1);
    });

    it('a Retry-After HTTP date is honoured as the delay', async () => {
      const { client, sent, retries } = sdk();
      // A whole-second date, with the clock 300 ms before it.
      const at = Math.ceil(Date.now() / 1000) * 1000 + 1000;
      vi.spyOn(Date, 'now').mockReturnValue(at - 300);
      server.script(REFUND, fail(503, { headers: { 'retry-after': new Date(at).toUTCString() } }));

      const started = performance.now();
      await client.modifications.refund(refundParams);

      expect(performance.now() - started).toBeGreaterThanOrEqual(280);
      expect(retries.map((retry) => retry.delayMs)).toEqual([300]);
      expect(sent).toHaveLength(2);
      ranAtMostOnce(oneKey(sent));
    });

    it('a truncated body on a GET is retried', async () => {
      const { client, sent, retries } = sdk();
      server.script(TERMINALS, { kind: 'truncate' });

      const terminals = await client.terminals.list();

      expect(terminals).toHaveLength(1);
      expect(sent).toHaveLength(2);
      expect(server.seen(TERMINALS)).toHaveLength(2);
      expect(retries[0]?.error).toBeInstanceOf(ConnectionError);
    });

    it('a truncated body on a keyed write is retried with the same key and replayed, not run again', async () => {
      const { client, sent } = sdk();
      server.script(REFUND, { kind: 'truncate' });

      await client.modifications.refund(refundParams);

      expect(sent).toHaveLength(2);
      const key = oneKey(sent);
      serverSawOnly(REFUND, key);
      expect(server.runs.get(key)).toBe(1);
    });

    it('a truncated body is an ordinary retry, not the free stale-socket resend: maxRetries 0 means one attempt', async () => {
      // Response bytes arrived, so this is not "a reused keep-alive socket reset before any response byte".
      const { client, sent } = sdk({ maxRetries: 0 });
      server.script(TERMINALS, { kind: 'truncate' });

      const error = await rejection(client.terminals.list(), ConnectionError);

      expect(error.attempts).toBe(1);
      expect(sent).toHaveLength(1);
      expect(server.seen(TERMINALS)).toHaveLength(1);
    });
  });

  describe('maxRetries', () => {
    it('defaults to 2 retries (3 attempts)', async () => {
      const { client, sent } = sdk();
      server.script(REFUND, fail(503), fail(503), fail(503));

      const error = await rejection(client.modifications.refund(refundParams), ServerError);

      expect(error.attempts).toBe(3);
      expect(sent).toHaveLength(3);
      expect(error.idempotencyKey).toBe(oneKey(sent));
      expect(server.seen(REFUND)).toHaveLength(3);
      expect(operationsRun()).toBe(0);
    });

    it('is set per client', async () => {
      const { client, sent } = sdk({ maxRetries: 1 });
      server.script(TERMINALS, fail(503), fail(503), fail(503));

      const error = await rejection(client.terminals.list(), ServerError);

      expect(error.attempts).toBe(2);
      expect(sent).toHaveLength(2);
    });

    it('is overridden per call, down to 0', async () => {
      const { client, sent } = sdk({ maxRetries: 2 });
      server.script(REFUND, fail(503), fail(503));

      const error = await rejection(client.modifications.refund(refundParams, { maxRetries: 0 }), ServerError);

      expect(error.attempts).toBe(1);
      expect(sent).toHaveLength(1);
    });

    it('is overridden per call, above the client value', async () => {
      const { client, sent } = sdk({ maxRetries: 1 });
      server.script(SESSION, fail(503), fail(500), fail(504));

      await client.sessions.create(sessionParams, { maxRetries: 3 });

      expect(sent).toHaveLength(4);
      const key = oneKey(sent);
      serverSawOnly(SESSION, key);
      expect(server.runs.get(key)).toBe(1);
    });
  });

  describe('retry budget', () => {
    const budget = { capacity: 10, retryCost: 5, timeoutCost: 10 };

    it('retries spend tokens, an empty bucket stops retries, successes refund them', async () => {
      const { client, sent } = sdk({ retryBudget: budget });

      // A: one retry (5 tokens), then success refunds them: the bucket is full again.
      server.script(TERMINALS, fail(503));
      await client.terminals.list();
      expect(sent).toHaveLength(2);

      // B: two retries take all 10 tokens (possible only if A's were refunded).
      server.script(TERMINALS, fail(503), fail(503), fail(503));
      const drained = await rejection(client.terminals.list(), ServerError);
      expect(drained.attempts).toBe(3);
      expect(sent).toHaveLength(5);

      // C: the bucket is empty: no retry, the first failure is thrown.
      server.script(REFUND, fail(503), fail(503));
      const denied = await rejection(client.modifications.refund(refundParams), ServerError);
      expect(denied.attempts).toBe(1);
      expect(sent).toHaveLength(6);
      server.reset();

      // Five successes without retries refund one token each: enough for one retry (5).
      for (let i = 0; i < 5; i += 1) await client.terminals.list();
      expect(sent).toHaveLength(11);
      server.script(TERMINALS, fail(503), fail(503));
      const once = await rejection(client.terminals.list(), ServerError);
      expect(once.attempts).toBe(2);
      expect(sent).toHaveLength(13);
    });

    it('is per client: another client still retries', async () => {
      const first = sdk({ retryBudget: budget });
      server.script(TERMINALS, fail(503), fail(503), fail(503));
      await rejection(first.client.terminals.list(), ServerError);

      const second = sdk({ retryBudget: budget });
      server.script(TERMINALS, fail(503));
      await second.client.terminals.list();
      expect(second.sent).toHaveLength(2);
    });

    it('a retry after a timeout costs timeoutCost', async () => {
      const { client, sent } = sdk({ retryBudget: budget, timeout: 100 });
      server.script(TERMINALS, { kind: 'stall', ms: 5_000 }, { kind: 'stall', ms: 5_000 }, { kind: 'stall', ms: 5_000 });

      const error = await rejection(client.terminals.list(), TimeoutError);

      // The first retry takes all 10 tokens; the second is refused.
      expect(error.attempts).toBe(2);
      expect(sent).toHaveLength(2);
    });

    it('retryCost 0 makes retries free: the budget never blocks them', async () => {
      const { client, sent } = sdk({ retryBudget: { capacity: 10, retryCost: 0, timeoutCost: 0 } });
      server.script(TERMINALS, fail(503));

      await client.terminals.list();

      expect(sent).toHaveLength(2);
    });
  });

  describe('hooks.onRetry', () => {
    it('sees attempt, error, delayMs, method, path and idempotencyKey; backoff is full jitter capped at 8 s', async () => {
      // random() = 0.001: delays are 0.001 * min(500 * 2^n, 8000), rounded.
      vi.spyOn(Math, 'random').mockReturnValue(0.001);
      const { client, sent, retries } = sdk({ maxRetries: 6 });
      server.script(SESSION, fail(503), fail(503), fail(500), fail(502), fail(504), fail(408));

      await client.sessions.create(sessionParams);

      expect(sent).toHaveLength(7);
      const key = oneKey(sent);
      expect(server.runs.get(key)).toBe(1);
      expect(retries.map((retry) => retry.delayMs)).toEqual([1, 1, 2, 4, 8, 8]);
      expect(retries[0]).toEqual({
        method: 'POST',
        path: `${PREFIX}/payment/session`,
        idempotencyKey: key,
        attempt: 1,
        delayMs: 1,
        error: expect.any(ServerError),
      });
      expect(retries.map((retry) => retry.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(retries.map((retry) => (retry.error as ApiError).status)).toEqual([503, 503, 500, 502, 504, 408]);
    });

    it('for a GET, idempotencyKey is undefined', async () => {
      const { client, retries } = sdk();
      server.script(TERMINALS, fail(503));

      await client.terminals.list();

      expect(retries).toEqual([
        {
          method: 'GET',
          path: `${PREFIX}/pos/terminals`,
          idempotencyKey: undefined,
          attempt: 1,
          delayMs: 0,
          error: expect.any(ServerError),
        },
      ]);
    });
  });

  describe('stale keep-alive socket', () => {
    it('a GET reset before any response byte is resent once for free, even with maxRetries 0', async () => {
      const { client, sent, retries } = sdk({ maxRetries: 0 });
      await client.terminals.list(); // opens a keep-alive connection
      server.script(TERMINALS, { kind: 'reset' });

      const terminals = await client.terminals.list();

      expect(terminals).toHaveLength(1);
      expect(sent).toHaveLength(3);
      expect(retries).toHaveLength(1);
      expect(retries[0]?.delayMs).toBe(0);
      const error = retries[0]?.error;
      expect(error).toBeInstanceOf(ConnectionError);
      expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain((error as ConnectionError).code);
    });

    it('a keyed write reset is resent once for free with the same key, even with maxRetries 0', async () => {
      const { client, sent } = sdk({ maxRetries: 0 });
      server.script(SESSION, { kind: 'reset' });

      await client.sessions.create(sessionParams);

      expect(sent).toHaveLength(2);
      const key = oneKey(sent);
      serverSawOnly(SESSION, key);
      expect(server.runs.get(key)).toBe(1);
      ranAtMostOnce(key);
    });

    it('only once: a second reset fails the call with a ConnectionError', async () => {
      const { client, sent } = sdk({ maxRetries: 0 });
      server.script(SESSION, { kind: 'reset' }, { kind: 'reset' });

      const error = await rejection(client.sessions.create(sessionParams), ConnectionError);

      expect(error).not.toBeInstanceOf(TimeoutError);
      expect(error.attempts).toBe(2);
      expect(sent).toHaveLength(2);
      expect(error.idempotencyKey).toBe(oneKey(sent));
      expect(operationsRun()).toBe(0);
    });

    it('the free resend does not use up maxRetries', async () => {
      const { client, sent } = sdk({ maxRetries: 1 });
      server.script(REFUND, { kind: 'reset' }, fail(503));

      await client.modifications.refund(refundParams);

      expect(sent).toHaveLength(3);
      const key = oneKey(sent);
      expect(server.runs.get(key)).toBe(1);
    });
  });

  describe('POS charge (recover: false)', () => {
    it('is not resent after a reset, even with retries left', async () => {
      const { client, sent, retries } = sdk({ maxRetries: 2 });
      server.script(CHARGE, { kind: 'reset' });

      const error = await rejection(client.pos.createPayment(chargeParams, { recover: false }), ConnectionError);

      expect(error.notSent).toBe(false);
      expect(error.attempts).toBe(1);
      expect(sent).toHaveLength(1);
      expect(error.idempotencyKey).toBe(oneKey(sent));
      expect(retries).toHaveLength(0);
      expect(server.posPayments).toHaveLength(0);
    });

    it('is not resent after a reset that follows the charge: it ran once', async () => {
      const { client, sent } = sdk();
      server.script(CHARGE, { kind: 'reset-after' });

      const error = await rejection(client.pos.createPayment(chargeParams, { recover: false }), ConnectionError);

      expect(error.attempts).toBe(1);
      expect(sent).toHaveLength(1);
      const key = oneKey(sent);
      expect(server.runs.get(key)).toBe(1);
      expect(server.posPayments).toHaveLength(1);
    });

    it('is not resent after a stall past the timeout', async () => {
      const { client, sent } = sdk();
      server.script(CHARGE, { kind: 'stall', ms: 5_000 });

      const error = await rejection(client.pos.createPayment(chargeParams, { recover: false, timeout: 100 }), TimeoutError);

      expect(error.timeoutMs).toBe(100);
      expect(error.attempts).toBe(1);
      expect(sent).toHaveLength(1);
      const key = oneKey(sent);
      expect(error.idempotencyKey).toBe(key);
      expect(server.runs.get(key)).toBe(1);
    });

    it('is not resent after a truncated body', async () => {
      const { client, sent } = sdk();
      server.script(CHARGE, { kind: 'truncate' });

      await rejection(client.pos.createPayment(chargeParams, { recover: false }), ConnectionError);

      expect(sent).toHaveLength(1);
      expect(server.runs.get(oneKey(sent))).toBe(1);
    });

    it.each([
      [500, undefined],
      [502, PROXY_PAGE],
      [503, undefined],
      [504, undefined],
      [408, undefined],
    ] as const)('is not resent after a %i', async (status, body) => {
      const { client, sent } = sdk();
      server.script(CHARGE, fail(status, { headers: { 'retry-after': '0' }, ...(body === undefined ? {} : { body }) }));

      const error = await rejection(client.pos.createPayment(chargeParams, { recover: false }), ApiError);

      expect(error.status).toBe(status);
      expect(error.attempts).toBe(1);
      expect(sent).toHaveLength(1);
      expect(server.seen(CHARGE)).toHaveLength(1);
      expect(server.posPayments).toHaveLength(0);
    });

    it('is retried after a 429, with the same key, and charged once', async () => {
      const { client, sent, retries } = sdk();
      server.script(CHARGE, fail(429, { headers: { 'retry-after': '0' } }));

      const payment = await client.pos.createPayment(chargeParams, { recover: false });

      expect(payment.status).toBe('success');
      expect(sent).toHaveLength(2);
      const key = oneKey(sent);
      serverSawOnly(CHARGE, key);
      expect(server.runs.get(key)).toBe(1);
      ranAtMostOnce(key);
      expect(server.posPayments).toHaveLength(1);
      expect(retries[0]?.error).toBeInstanceOf(RateLimitError);
    });

    it('is retried when the connection was refused (nothing was sent), with the same key, and charged once', async () => {
      const port = await refusedPort();
      let opened: { close(): Promise<void> } | undefined;
      const { client, sent, retries } = sdk({
        baseUrl: `http://127.0.0.1:${port}`,
        hooks: {
          onRetry: async () => {
            opened ??= await relay(port);
          },
        },
      });
      try {
        const payment = await client.pos.createPayment(chargeParams, { recover: false });

        expect(payment.status).toBe('success');
        expect(sent).toHaveLength(2);
        const key = oneKey(sent);
        expect(server.seen(CHARGE)).toHaveLength(1);
        serverSawOnly(CHARGE, key);
        expect(server.runs.get(key)).toBe(1);
        const error = retries[0]?.error;
        expect(error).toBeInstanceOf(ConnectionError);
        expect((error as ConnectionError).notSent).toBe(true);
        expect((error as ConnectionError).code).toBe('ECONNREFUSED');
      } finally {
        await opened?.close();
      }
    });

    it('a charge that keeps being refused fails after maxRetries with a ConnectionError', async () => {
      const port = await refusedPort();
      const { client, sent } = sdk({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 2 });

      const error = await rejection(client.pos.createPayment(chargeParams, { recover: false }), ConnectionError);

      expect(error.notSent).toBe(true);
      expect(error.attempts).toBe(3);
      expect(sent).toHaveLength(3);
      expect(error.idempotencyKey).toBe(oneKey(sent));
    });
  });

  describe('abort', () => {
    it('an abort during a request rejects at once with the abort reason', async () => {
      const controller = new AbortController();
      const reason = new Error('cancelled by the caller');
      const { client, sent, retries } = sdk();
      server.script(SESSION, { kind: 'stall', ms: 5_000 });
      setTimeout(() => controller.abort(reason), 50);

      const started = performance.now();
      const error = await rejectionOf(client.sessions.create(sessionParams, { signal: controller.signal }));

      expect(error).toBe(reason);
      expect(performance.now() - started).toBeLessThan(2_500);
      expect(retries).toHaveLength(0);
      expect(sent).toHaveLength(1);
      ranAtMostOnce(oneKey(sent));
    });

    it('rejects with a non-Error reason as given', async () => {
      const controller = new AbortController();
      const { client } = sdk({ hooks: { onRetry: () => controller.abort('stop') } });
      server.script(TERMINALS, fail(503, { headers: { 'retry-after': '30' } }));

      const error = await rejectionOf(client.terminals.list({}, { signal: controller.signal }));

      expect(error).toBe('stop');
    });

    it('a signal already aborted sends nothing', async () => {
      const { client, sent } = sdk();
      const reason = new Error('too late');

      const error = await rejectionOf(client.sessions.create(sessionParams, { signal: AbortSignal.abort(reason) }));

      expect(error).toBe(reason);
      expect(sent).toHaveLength(0);
      expect(server.requests).toHaveLength(0);
    });

    it('a body that stalls after the headers: TimeoutError at the timeout, not after the stall', async () => {
      const { client } = sdk({ maxRetries: 0, timeout: 150 });
      server.script(TERMINALS, { kind: 'stall-body', ms: 5_000 });

      const started = performance.now();
      const error = await rejection(client.terminals.list(), TimeoutError);

      expect(error.timeoutMs).toBe(150);
      expect(error.attempts).toBe(1);
      expect(performance.now() - started).toBeLessThan(2_500);
    });

    it('an abort while the body is read rejects with the reason at once', async () => {
      const { client } = sdk({ maxRetries: 0 });
      server.script(TERMINALS, { kind: 'stall-body', ms: 5_000 });
      const controller = new AbortController();
      const reason = new Error('user left');
      setTimeout(() => controller.abort(reason), 100);

      const started = performance.now();
      const error = await rejectionOf(client.terminals.list({}, { signal: controller.signal }));

      expect(error).toBe(reason);
      expect(performance.now() - started).toBeLessThan(2_500);
    });

    it('TimeoutError, ConnectionError and an abort are distinct', async () => {
      const { client } = sdk({ maxRetries: 0, timeout: 100 });

      server.script(TERMINALS, { kind: 'stall', ms: 5_000 });
      const timeout = await rejection(client.terminals.list(), TimeoutError);
      expect(timeout.name).toBe('TimeoutError');
      expect(timeout).not.toBeInstanceOf(ConnectionError);

      server.script(TERMINALS, { kind: 'reset' }, { kind: 'reset' });
      const connection = await rejection(client.terminals.list(), ConnectionError);
      expect(connection.name).toBe('ConnectionError');
      expect(connection).not.toBeInstanceOf(TimeoutError);

      const controller = new AbortController();
      server.script(TERMINALS, { kind: 'stall', ms: 5_000 });
      setTimeout(() => controller.abort(), 20);
      const aborted = await rejectionOf(client.terminals.list({}, { signal: controller.signal, timeout: 5_000 }));
      expect(aborted).toBeInstanceOf(DOMException);
      expect((aborted as DOMException).name).toBe('AbortError');
      expect(aborted).not.toBeInstanceOf(PaymentServiceError);
    });
  });

  describe('idempotency keys across attempts and calls', () => {
    it('errors carry attempts and the key that was sent', async () => {
      const { client, sent } = sdk();
      server.script(SESSION, { kind: 'reset-after' }, fail(503), fail(502, { body: PROXY_PAGE }), fail(500));

      const error = await rejection(client.sessions.create(sessionParams, { maxRetries: 2 }), ServerError);

      // Free resend after the reset, then two counted retries.
      expect(error.attempts).toBe(4);
      expect(sent).toHaveLength(4);
      const key = oneKey(sent);
      expect(error.idempotencyKey).toBe(key);
      expect(error.method).toBe('POST');
      expect(error.path).toBe(`${PREFIX}/payment/session`);
      serverSawOnly(SESSION, key);
      ranAtMostOnce(key);
    });

    it('.withResponse() exposes the key that was sent, after retries', async () => {
      const { client, sent } = sdk();
      server.script(REFUND, fail(503), { kind: 'stall', ms: 5_000 });

      const { idempotencyKey, response } = await client.modifications.refund(refundParams, { timeout: 500 }).withResponse();

      expect(response.status).toBe(202);
      expect(sent).toHaveLength(3);
      expect(idempotencyKey).toBe(oneKey(sent));
      expect(server.runs.get(idempotencyKey ?? '')).toBe(1);
    });

    it("the caller's idempotencyKey is used on every attempt", async () => {
      const { client, sent } = sdk();
      const idempotencyKey = 'order-42-attempt-1';
      server.script(SESSION, { kind: 'reset-after' }, fail(503));

      const result = await client.sessions.create(sessionParams, { idempotencyKey }).withResponse();

      expect(result.idempotencyKey).toBe(idempotencyKey);
      expect(sent).toHaveLength(3);
      expect(oneKey(sent)).toBe(idempotencyKey);
      serverSawOnly(SESSION, idempotencyKey);
      expect(server.runs.get(idempotencyKey)).toBe(1);
      ranAtMostOnce(idempotencyKey);
    });

    it('a new call gets a new key; its retries keep it', async () => {
      const { client, sent } = sdk();
      server.script(SESSION, fail(503));
      const first = await client.sessions.create(sessionParams).withResponse();
      server.script(SESSION, fail(503));
      const second = await client.sessions.create(sessionParams).withResponse();

      expect(sent).toHaveLength(4);
      const firstKey = oneKey(sent.slice(0, 2));
      const secondKey = oneKey(sent.slice(2));
      expect(first.idempotencyKey).toBe(firstKey);
      expect(second.idempotencyKey).toBe(secondKey);
      expect(firstKey).not.toBe(secondKey);
      expect(server.runs.get(firstKey)).toBe(1);
      expect(server.runs.get(secondKey)).toBe(1);
      expect(first.data.sessionId).not.toBe(second.data.sessionId);
    });
  });
});
