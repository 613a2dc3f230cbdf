/**
 * The SDK never follows a redirect: over real HTTP on 127.0.0.1, an API origin answers every 3xx
 * with a `Location` on a second origin (another port), which records anything it receives.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type ClientOptions, PaymentClient } from '../src/index.js';

const SENTINEL_KEY = 'sk_test_REDIRECT_SENTINEL_5a4b3c2d1e';
const CODES = [301, 302, 303, 307, 308] as const;

interface Received {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A server on 127.0.0.1 that records each request and answers it with `reply`. */
async function recordingServer() {
  const received: Received[] = [];
  let answer = { code: 200, location: '' };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
      });
      response.writeHead(answer.code, answer.location ? { location: answer.location, 'content-type': 'text/plain' } : {});
      response.end(answer.location ? `Moved to ${answer.location}` : '{"success":true,"data":{}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    received,
    answer(code: number, location: string) {
      answer = { code, location };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let api: Awaited<ReturnType<typeof recordingServer>>;
let elsewhere: Awaited<ReturnType<typeof recordingServer>>;

beforeAll(async () => {
  api = await recordingServer();
  elsewhere = await recordingServer();
});
afterEach(() => {
  api.received.length = 0;
  elsewhere.received.length = 0;
});
afterAll(async () => {
  await api.close();
  await elsewhere.close();
});

function client(options: ClientOptions = {}): PaymentClient {
  return new PaymentClient({ apiKey: SENTINEL_KEY, webcode: 'SHOP1', baseUrl: api.origin, environment: 'test', maxRetries: 3, ...options });
}

/** Requests a caller-supplied `fetch` was handed, to check their redirect mode. */
const handed: Request[] = [];
const callerFetch: typeof fetch = (input, init) => {
  if (input instanceof Request) handed.push(input);
  return fetch(input, init);
};

const routes: [string, () => ClientOptions][] = [
  ['the global fetch', () => ({})],
  ['a fetch supplied by the caller', () => ({ fetch: callerFetch })],
  ['ky, when hooks are set', () => ({ hooks: { beforeRequest: () => undefined, afterResponse: () => undefined } })],
  [
    'ky with hooks and a caller fetch, a hook replacing the request',
    () => ({
      fetch: callerFetch,
      hooks: {
        beforeRequest: async (request: Request) =>
          new Request(request.url, { method: request.method, headers: request.headers, body: request.body ? await request.text() : null }),
      },
    }),
  ],
];

const calls: [string, (sdk: PaymentClient) => Promise<unknown>][] = [
  ['GET sessions.retrieve', (sdk) => sdk.sessions.retrieve('SHOP1-EXTT-1700000001')],
  [
    'POST sessions.create',
    (sdk) =>
      sdk.sessions.create({ amount: { value: 2599, currency: 'EUR' }, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' }),
  ],
];

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => {
      throw new Error('the call resolved');
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe.each(routes)('through %s', (_route, options) => {
  describe.each(calls)('%s', (method, call) => {
    it.each(CODES)(
      'a %i is not followed: an ApiError naming the status and the origin, not retried, the key sent nowhere else',
      async (code) => {
        handed.length = 0;
        api.answer(code, `${elsewhere.origin}/external/v1/test/payment/sessions?token=secret-path-token#frag`);

        const error = await rejection(call(client(options())));

        expect(elsewhere.received).toEqual([]);
        expect(api.received).toHaveLength(1);
        expect(api.received[0]?.method).toBe(method.split(' ')[0]);
        expect(error.status).toBe(code);
        expect(error.attempts).toBe(1);
        expect(error.message).toContain(`HTTP ${code}`);
        expect(error.message).toContain(`a redirect to ${elsewhere.origin},`);
        expect(error.message).not.toMatch(/external|secret-path-token|frag/);
        expect(JSON.stringify(error)).not.toContain('secret-path-token');
        expect(error.headers?.get('location')).toContain('secret-path-token');
        for (const shown of [error.message, JSON.stringify(error), inspect(error, { depth: 10, showHidden: true }), String(error.stack)]) {
          expect(shown).not.toContain(SENTINEL_KEY);
        }
        expect(handed).toHaveLength(options().fetch === callerFetch ? 1 : 0);
        for (const request of handed) expect(request.redirect).toBe('manual');
      },
    );
  });
});

describe('redirects', () => {
  it('a relative Location names the API origin itself, and is not followed either', async () => {
    api.answer(307, '/elsewhere?x=1');
    const error = await rejection(client().sessions.retrieve('SHOP1-EXTT-1700000001'));
    expect(api.received).toHaveLength(1);
    expect(error.status).toBe(307);
    expect(error.message).toContain(`a redirect to ${api.origin},`);
    expect(error.message).not.toContain('elsewhere');
  });

  it('a 3xx without a Location says so', async () => {
    api.answer(302, '');
    const error = await rejection(client().sessions.retrieve('SHOP1-EXTT-1700000001'));
    expect(error.status).toBe(302);
    expect(error.message).toContain('HTTP 302, a redirect without a Location');
  });

  it('an opaque redirect (what a browser gives for redirect: manual) is an ApiError with status 0, not retried', async () => {
    let calls = 0;
    const opaque: typeof fetch = async (input) => {
      calls += 1;
      expect((input as Request).redirect).toBe('manual');
      const response = new Response(null, { status: 200 });
      Object.defineProperties(response, { type: { value: 'opaqueredirect' }, status: { value: 0 }, ok: { value: false } });
      return response;
    };
    const error = await rejection(client({ fetch: opaque }).sessions.retrieve('SHOP1-EXTT-1700000001'));
    expect(calls).toBe(1);
    expect(error.status).toBe(0);
    expect(error.attempts).toBe(1);
    expect(error.message).toMatch(/redirect/);
    expect(error.message).not.toContain(SENTINEL_KEY);
  });
});
