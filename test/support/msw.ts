import { HttpResponse, http, type JsonBodyType } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { type ClientOptions, PaymentClient } from '../../src/index.js';

export const BASE_URL = 'https://pay.test.invalid';
export const API_KEY = 'sk_test_SENTINEL_9f8e7d6c5b4a';
export const WEBCODE = 'SHOP1';

/** Every request the fake service received, in order, with its body read as text. */
export interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

export const server = setupServer();
export const seen: Seen[] = [];

/** Installs msw for the file: unmatched requests fail the test instead of reaching the network. */
export function useMsw(): void {
  beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
  afterEach(() => {
    server.resetHandlers();
    seen.length = 0;
  });
  afterAll(() => server.close());
}

export function client(options: ClientOptions = {}): PaymentClient {
  return new PaymentClient({ apiKey: API_KEY, webcode: WEBCODE, baseUrl: BASE_URL, environment: 'test', ...options });
}

export function success(data: JsonBodyType, status = 200): Response {
  return HttpResponse.json({ success: true, data }, { status });
}

export function failure(status: number, code: number | undefined, message: string, headers?: HeadersInit): Response {
  const error = { message, ...(code === undefined ? {} : { code }), statusCode: status, traceId: 'trace-123' };
  return HttpResponse.json({ success: false, error }, { status, ...(headers ? { headers } : {}) });
}

type Method = 'get' | 'post';

/** Answers `method path` with `reply`, recording each request into `seen`. */
export function respond(method: Method, path: string, reply: (request: Request, count: number) => Response | Promise<Response>): void {
  let count = 0;
  server.use(
    http[method](`${BASE_URL}${path}`, async ({ request }) => {
      seen.push({ method: request.method, url: new URL(request.url), headers: request.headers, body: await request.clone().text() });
      count += 1;
      return reply(request, count);
    }),
  );
}

/** Listing body of `key` with `meta`. */
export function listing(key: string, items: unknown[], meta: { cursor: string | null; hasMore: boolean; total: number }) {
  return { [key]: items, meta };
}
