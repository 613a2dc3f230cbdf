/**
 * Shared helpers of the sandbox end-to-end tests: a sandbox on 127.0.0.1 with SDK clients, raw
 * requests for what the SDK refuses client-side, the payment form posted without a browser, and a
 * webhook receiver that can fail its first deliveries. Network: 127.0.0.1 only.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import { PaymentClient } from '../../src/index.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { TEST_CARDS } from '../../src/testing/index.js';

/** `YYYY-MM-DD HH:MM:SS`, the documented record timestamp format. */
export const RECORD_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
/** ISO 8601 with a `Z` suffix, the documented terminal timestamp format. */
export const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export const URL_OK = 'https://shop.example/ok';
export const URL_KO = 'https://shop.example/ko';

export interface Started {
  sandbox: Sandbox;
  baseUrl: string;
  /** SDK client on the Test paths with the Test key. */
  test: PaymentClient;
  /** SDK client on the Live paths with the Live key. */
  live: PaymentClient;
}

type Handle = Sandbox['handle'];

/** What the contract test (test/contract/sandbox-traffic.test.ts) puts around every sandbox of a suite, to record its traffic. */
export interface SandboxInstrument {
  /** Wraps the handler the server answers through. */
  handle(handle: Handle): Handle;
  /** Wraps the `fetch` webhook deliveries go out with. */
  fetch(fetch: typeof globalThis.fetch): typeof globalThis.fetch;
}

let instrument: SandboxInstrument | undefined;

/** From now on, every sandbox {@link startSandbox} makes is instrumented. */
export function instrumentSandboxes(given: SandboxInstrument): void {
  instrument = given;
}

/** A sandbox listening on 127.0.0.1 (free port) with Test and Live clients; `posDelayMs` 0 unless given. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Started> {
  const sandbox = createSandbox({
    posDelayMs: 0,
    ...options,
    ...(instrument ? { fetch: instrument.fetch(options.fetch ?? globalThis.fetch) } : {}),
  });
  // Before listen(): the server answers through whatever `handle` is then.
  if (instrument) sandbox.handle = instrument.handle(sandbox.handle);
  const { baseUrl } = await sandbox.listen();
  return { sandbox, baseUrl, test: clientFor(sandbox, 'test'), live: clientFor(sandbox, 'live') };
}

export function clientFor(
  sandbox: Sandbox,
  environment: 'test' | 'live',
  extra: { apiKey?: string; webcode?: string } = {},
): PaymentClient {
  return new PaymentClient({
    apiKey: extra.apiKey ?? sandbox.keys[environment],
    webcode: extra.webcode ?? sandbox.webcode,
    baseUrl: sandbox.baseUrl,
    environment,
    // Failures are asserted as they come: no SDK retries hiding them.
    maxRetries: 0,
  });
}

export interface RawResult {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * A raw request to the service paths: `path` is after `/external/v1` (and `/test` for `env: 'test'`).
 * `key: null` sends no `X-API-KEY`; `webcode: null` sends none.
 */
export async function raw(
  sandbox: Sandbox,
  method: 'GET' | 'POST',
  path: string,
  options: {
    env?: 'test' | 'live';
    key?: string | null;
    webcode?: string | null;
    query?: Record<string, string>;
    body?: Record<string, unknown>;
    rawBody?: string;
    idempotencyKey?: string;
  } = {},
): Promise<RawResult> {
  const env = options.env ?? 'test';
  const url = new URL(`${sandbox.baseUrl}/external/v1${env === 'test' ? '/test' : ''}${path}`);
  const webcode = options.webcode === undefined ? sandbox.webcode : options.webcode;
  if (method === 'GET') {
    if (webcode !== null) url.searchParams.set('webcode', webcode);
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
  }
  const headers: Record<string, string> = {};
  const key = options.key === undefined ? sandbox.keys[env] : options.key;
  if (key !== null) headers['x-api-key'] = key;
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  let body: string | undefined;
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    body = options.rawBody ?? JSON.stringify({ ...(webcode === null ? {} : { webcode }), ...options.body });
  }
  const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/** Asserts nothing; returns the failure envelope's `error` after checking its documented shape. */
export function failureOf(result: RawResult): { message: string; code?: number; statusCode: number; traceId: string } {
  const { body } = result;
  if (body?.success !== false || typeof body.error !== 'object') {
    throw new Error(`Expected a failure envelope, got ${result.status} ${JSON.stringify(body)}`);
  }
  return body.error;
}

export const sessionParams = {
  amount: { value: 2599, currency: 'EUR' },
  urlOk: URL_OK,
  urlKo: URL_KO,
  description: 'Order 42',
  customReference: 'order-42',
} as const;

export interface FormAnswer {
  status: number;
  headers: Headers;
  html: string;
  /**
   * Where the page sends the customer: the `Location` of a 303 (paid, cancelled), or the `href` of
   * the outcome page's "Return to the shop" link (declined, error, expired); none for the form.
   */
  target: string | undefined;
}

export interface CardForm {
  cardNumber: string;
  expiryMonth: string;
  expiryYear: string;
  cvc: string;
  holderName: string;
}

export const GOOD_CARD: CardForm = {
  cardNumber: TEST_CARDS.visa.number,
  expiryMonth: TEST_CARDS.visa.expiryMonth,
  expiryYear: TEST_CARDS.visa.expiryYear,
  cvc: TEST_CARDS.visa.cvc,
  holderName: 'Jane Tester',
};

/** Posts the hosted form to `paymentUrl`, as a browser would. */
export async function submitForm(paymentUrl: string, fields: Partial<CardForm> & { action?: 'pay' | 'cancel' } = {}): Promise<FormAnswer> {
  const form = new URLSearchParams({ ...GOOD_CARD, action: 'pay', ...fields });
  const response = await fetch(paymentUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    redirect: 'manual',
  });
  return answerOf(response);
}

/** Opens `paymentUrl` (GET), which starts the 300 s countdown. */
export async function openPage(paymentUrl: string): Promise<FormAnswer> {
  return answerOf(await fetch(paymentUrl, { redirect: 'manual' }));
}

async function answerOf(response: Response): Promise<FormAnswer> {
  const html = await response.text();
  const link = /<a\b(?=[^>]*\sdata-return[\s=>])[^>]*\shref="([^"]*)"/i.exec(html)?.[1];
  const decoded = link?.replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code))).replaceAll('&amp;', '&');
  const target = response.headers.get('location') ?? decoded;
  return { status: response.status, headers: response.headers, html, target };
}

/** Creates a Test session and pays it; returns the session id, the payment reference and the redirect target. */
export async function paidSession(
  client: PaymentClient,
  params: Record<string, unknown> = {},
): Promise<{ sessionId: string; paymentReference: string; paymentUrl: string; target: string }> {
  const session = await client.sessions.create({ ...sessionParams, ...params } as typeof sessionParams);
  const answer = await submitForm(session.paymentUrl);
  if (!answer.target?.startsWith(URL_OK)) throw new Error(`Payment did not succeed: ${answer.status} ${answer.target}`);
  const retrieved = await client.sessions.retrieve(session.sessionId);
  if (!retrieved.paymentReference) throw new Error('No paymentReference after payment');
  return {
    sessionId: session.sessionId,
    paymentReference: retrieved.paymentReference,
    paymentUrl: session.paymentUrl,
    target: answer.target,
  };
}

export interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
  json: any;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Deliveries answered 2xx. */
  accepted(): Received[];
  /** Resolves when `count` deliveries were accepted (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that answers 500 to its first `failFirst` deliveries, then 200. */
export async function startReceiver(options: { failFirst?: number; failStatus?: number } = {}): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const status = received.length < (options.failFirst ?? 0) ? (options.failStatus ?? 500) : 200;
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      received.push({ at: Date.now(), headers: request.headers, body, status, json });
      response.statusCode = status;
      response.end(status === 200 ? 'ok' : 'failing on purpose');
      for (const waiter of waiters.splice(0)) waiter();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const accepted = () => received.filter((item) => item.status === 200);
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    accepted,
    async waitFor(count, timeoutMs = 3_000) {
      const deadline = Date.now() + timeoutMs;
      while (accepted().length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`Receiver got ${accepted().length} accepted deliveries, expected ${count}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return accepted();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Lets pending I/O callbacks and promise chains run. */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Starts sandboxes and webhook receivers for one test file, and closes them all after it. */
export function useSandboxes(): {
  start(options?: SandboxOptions): Promise<Started>;
  receiver(options?: Parameters<typeof startReceiver>[0]): Promise<Receiver>;
  /** Closes `sandbox` (one made in the test itself) with the others. */
  adopt(sandbox: Sandbox): Sandbox;
} {
  const sandboxes: Sandbox[] = [];
  const receivers: Receiver[] = [];
  afterAll(async () => {
    await Promise.all(sandboxes.map((sandbox) => sandbox.close()));
    await Promise.all(receivers.map((receiver) => receiver.close()));
  });
  return {
    async start(options = {}) {
      const started = await startSandbox(options);
      sandboxes.push(started.sandbox);
      return started;
    },
    async receiver(options = {}) {
      const started = await startReceiver(options);
      receivers.push(started);
      return started;
    },
    adopt(sandbox) {
      sandboxes.push(sandbox);
      return sandbox;
    },
  };
}
