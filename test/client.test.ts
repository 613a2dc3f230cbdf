import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, PaymentClient, ServerError, TimeoutError, VERSION } from '../src/index.js';
import { API_KEY, BASE_URL, client, failure, respond, seen, success, useMsw } from './support/msw.js';

useMsw();

const terminals = [{ poiId: 'V400m-TEST-000001', status: 'boarded' }];
const TERMINALS_PATH = '/external/v1/test/pos/terminals';

function configError(make: () => unknown): ConfigurationError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('expected a ConfigurationError');
}

describe('configuration', () => {
  afterEach(() => vi.unstubAllEnvs());

  it.each([
    ['apiKey', { webcode: 'W', baseUrl: BASE_URL }, 'PAYMENT_SERVICE_API_KEY'],
    ['webcode', { apiKey: 'k', baseUrl: BASE_URL }, 'PAYMENT_SERVICE_WEBCODE'],
    ['baseUrl', { apiKey: 'k', webcode: 'W' }, 'PAYMENT_SERVICE_BASE_URL'],
  ])('names a missing %s and its environment variable', (option, options, variable) => {
    const error = configError(() => new PaymentClient(options));
    expect(error.option).toBe(option);
    expect(error.message).toContain(option);
    expect(error.message).toContain(variable);
  });

  it('falls back to PAYMENT_SERVICE_* variables', async () => {
    vi.stubEnv('PAYMENT_SERVICE_API_KEY', API_KEY);
    vi.stubEnv('PAYMENT_SERVICE_WEBCODE', 'ENVSHOP');
    vi.stubEnv('PAYMENT_SERVICE_BASE_URL', BASE_URL);
    vi.stubEnv('PAYMENT_SERVICE_ENVIRONMENT', 'live');
    respond('get', '/external/v1/pos/terminals', () => success(terminals));
    const fromEnv = new PaymentClient();
    expect(fromEnv.environment).toBe('live');
    await fromEnv.terminals.list();
    expect(seen[0]?.url.searchParams.get('webcode')).toBe('ENVSHOP');
    expect(seen[0]?.headers.get('x-api-key')).toBe(API_KEY);
  });

  it('prefers explicit options to the environment and defaults to test', () => {
    vi.stubEnv('PAYMENT_SERVICE_WEBCODE', 'ENVSHOP');
    const explicit = new PaymentClient({ apiKey: 'k', webcode: 'MINE', baseUrl: BASE_URL });
    expect(explicit.webcode).toBe('MINE');
    expect(explicit.environment).toBe('test');
  });

  it.each([
    ['environment', { environment: 'staging' }],
    ['baseUrl', { baseUrl: 'not a url' }],
    ['baseUrl', { baseUrl: 'ftp://pay.example.com' }],
    ['baseUrl', { baseUrl: 'https://user:pass@pay.example.com' }],
    ['baseUrl', { environment: 'live', baseUrl: 'http://pay.example.com' }],
    ['apiKey', { apiKey: '' }],
    ['apiKey', { apiKey: 'has space' }],
    ['webcode', { webcode: '  ' }],
    ['timeout', { timeout: 0 }],
    ['timeout', { timeout: 1.5 }],
    ['posTimeout', { posTimeout: -1 }],
    ['maxRetries', { maxRetries: -1 }],
    ['fetch', { fetch: 'nope' }],
    ['appInfo', { appInfo: { name: 'bad name' } }],
    ['validateResponses', { validateResponses: 'yes' }],
    ['hooks', { hooks: { beforeRequest: 42 } }],
  ])('rejects a malformed %s: %j', (option, overrides) => {
    const error = configError(() => new PaymentClient({ apiKey: 'k', webcode: 'W', baseUrl: BASE_URL, ...(overrides as object) }));
    expect(error.option).toBe(option);
  });

  it.each(['http://127.0.0.1:4010', 'http://localhost:4010', 'http://[::1]:4010', 'https://pay.example.com'])(
    'lets a live client use %s',
    (baseUrl) => {
      expect(new PaymentClient({ apiKey: 'k', webcode: 'W', environment: 'live', baseUrl }).baseUrl).toBe(baseUrl.replace(/\/$/, ''));
    },
  );

  it('lets a test client use plain http', () => {
    expect(new PaymentClient({ apiKey: 'k', webcode: 'W', baseUrl: 'http://sandbox.internal:4010' }).environment).toBe('test');
  });

  it('keeps VERSION equal to package.json', () => {
    expect(VERSION).toBe(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
  });
});

describe('transport options', () => {
  it('appends appInfo to the User-Agent', async () => {
    respond('get', TERMINALS_PATH, () => success(terminals));
    await client({ appInfo: { name: 'shop-adapter', version: '1.2.3' } }).terminals.list();
    expect(seen[0]?.headers.get('user-agent')).toMatch(new RegExp(`^payment-service-sdk/${VERSION} .* shop-adapter/1\\.2\\.3$`));
  });

  it('uses a custom fetch', async () => {
    const calls: string[] = [];
    const custom: typeof fetch = async (input, init) => {
      calls.push(input instanceof Request ? input.url : String(input));
      return fetch(input, init);
    };
    respond('get', TERMINALS_PATH, () => success(terminals));
    await client({ fetch: custom }).terminals.list();
    expect(calls).toEqual([`${BASE_URL}${TERMINALS_PATH}?webcode=SHOP1`]);
  });

  // Without beforeRequest/afterResponse hooks an attempt goes straight to fetch; with them, through
  // ky. A custom fetch is called the same way on both routes: fetch(request, { signal }).
  it.each([
    ['without hooks', {}],
    ['with hooks', { hooks: { afterResponse: () => undefined } }],
  ])('gives a custom fetch the request and the attempt signal, aborted at the timeout (%s)', async (_route, extra) => {
    const requests: Request[] = [];
    const signals: AbortSignal[] = [];
    const stalling: typeof fetch = (input, init) =>
      new Promise((_resolve, reject) => {
        if (!(input instanceof Request)) throw new Error('expected a Request');
        requests.push(input);
        const signal = init?.signal as AbortSignal;
        signals.push(signal);
        signal.addEventListener('abort', () => reject(signal.reason));
      });

    const error = await client({ fetch: stalling, timeout: 50, maxRetries: 0, ...extra })
      .terminals.list()
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(TimeoutError);
    expect(requests.map((request) => [request.method, request.url, request.headers.get('x-api-key')])).toEqual([
      ['GET', `${BASE_URL}${TERMINALS_PATH}?webcode=SHOP1`, API_KEY],
    ]);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
  });

  it('runs async hooks around each attempt and lets beforeRequest add headers', async () => {
    respond('get', TERMINALS_PATH, () => success(terminals));
    const order: string[] = [];
    const hooked = client({
      hooks: {
        beforeRequest: async (request) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          order.push(`before ${request.method}`);
          request.headers.set('x-trace', 'abc');
        },
        afterResponse: async (request, response) => {
          order.push(`after ${response.status} ${new URL(request.url).pathname}`);
        },
      },
    });
    await hooked.terminals.list();
    expect(order).toEqual(['before GET', `after 200 ${TERMINALS_PATH}`]);
    expect(seen[0]?.headers.get('x-trace')).toBe('abc');
  });

  it('sends the Request a beforeRequest hook returns instead', async () => {
    respond('get', TERMINALS_PATH, () => success(terminals));
    await client({
      hooks: {
        beforeRequest: (request) => new Request(request, { headers: { ...Object.fromEntries(request.headers), 'x-tenant': 't1' } }),
      },
    }).terminals.list();
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers.get('x-tenant')).toBe('t1');
    expect(seen[0]?.headers.get('x-api-key')).toBe(API_KEY);
  });

  it('uses the Response an afterResponse hook returns instead', async () => {
    respond('get', TERMINALS_PATH, () => success(terminals));
    const replaced = [{ poiId: 'V400m-TEST-000002', status: 'boarded' }];
    const result = await client({
      hooks: { afterResponse: () => Response.json({ success: true, data: replaced }) },
    }).terminals.list();
    expect(result).toEqual(replaced);
  });

  it('lets an afterResponse hook read the body without taking it from the SDK', async () => {
    respond('get', TERMINALS_PATH, () => success(terminals));
    const bodies: unknown[] = [];
    const result = await client({
      hooks: {
        afterResponse: async (_request, response) => {
          bodies.push(await response.json());
        },
      },
    }).terminals.list();
    expect(bodies).toEqual([{ success: true, data: terminals }]);
    expect(result).toEqual(terminals);
  });

  it('sends caller headers but never lets them replace the key', async () => {
    respond('get', TERMINALS_PATH, () => success(terminals));
    await client().terminals.list({}, { headers: { 'X-Request-Id': 'r1', 'X-API-KEY': 'other' } });
    expect(seen[0]?.headers.get('x-request-id')).toBe('r1');
    expect(seen[0]?.headers.get('x-api-key')).toBe(API_KEY);
  });

  it('logs one debug line per attempt with method, path, status, duration and attempt', async () => {
    respond('get', TERMINALS_PATH, () => success(terminals));
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    await client({ logger }).terminals.list();
    expect(logger.debug).toHaveBeenCalledTimes(1);
    const [line, details] = logger.debug.mock.calls[0] ?? [];
    expect(line).toContain(`GET ${TERMINALS_PATH} 200`);
    expect(details).toMatchObject({ method: 'GET', path: TERMINALS_PATH, status: 200, attempt: 1 });
    expect(typeof details.durationMs).toBe('number');
    expect(JSON.stringify(logger.debug.mock.calls)).not.toContain(API_KEY);
  });

  it('rejects with the abort reason when the signal aborts', async () => {
    respond('get', TERMINALS_PATH, async () => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      return success(terminals);
    });
    const controller = new AbortController();
    const reason = new Error('shopper left');
    setTimeout(() => controller.abort(reason), 20);
    await expect(client().terminals.list({}, { signal: controller.signal })).rejects.toBe(reason);
  });
});

describe('retries', () => {
  it('retries a GET on 503 and succeeds', async () => {
    respond('get', TERMINALS_PATH, (_request, count) =>
      count === 1 ? failure(503, undefined, 'busy', { 'retry-after': '0' }) : success(terminals),
    );
    await expect(client().terminals.list()).resolves.toHaveLength(1);
    expect(seen).toHaveLength(2);
  });

  it('resends a write with the same key and bytes', async () => {
    respond('post', '/external/v1/test/payment/cancel', (_request, count) =>
      count === 1
        ? failure(503, undefined, 'busy', { 'retry-after': '0' })
        : success({ cancelReference: 'SHOP1-CAX-1', status: 'received' }, 202),
    );
    await client().modifications.cancel({ paymentReference: 'SHOP1-PXTT-1' });
    expect(seen).toHaveLength(2);
    expect(seen[1]?.headers.get('idempotency-key')).toBe(seen[0]?.headers.get('idempotency-key'));
    expect(seen[1]?.body).toBe(seen[0]?.body);
  });

  it('gives each call its own key', async () => {
    respond('post', '/external/v1/test/payment/cancel', () => success({ cancelReference: 'SHOP1-CAX-1', status: 'received' }, 202));
    const sdk = client();
    await sdk.modifications.cancel({ paymentReference: 'SHOP1-PXTT-1' });
    await sdk.modifications.cancel({ paymentReference: 'SHOP1-PXTT-1' });
    expect(seen[0]?.headers.get('idempotency-key')).not.toBe(seen[1]?.headers.get('idempotency-key'));
  });

  it('never resends a POS charge after a 503', async () => {
    respond('post', '/external/v1/test/pos/payment', () => failure(503, undefined, 'busy', { 'retry-after': '0' }));
    const error = await client()
      .pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 100, currency: 'EUR' } }, { recover: false })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerError);
    expect(seen).toHaveLength(1);
  });

  it('stops at maxRetries and reports the attempts', async () => {
    respond('get', TERMINALS_PATH, () => failure(503, undefined, 'down', { 'retry-after': '0' }));
    const error = await client({ maxRetries: 1 })
      .terminals.list()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).attempts).toBe(2);
    expect(seen).toHaveLength(2);
  });

  it('takes maxRetries per call', async () => {
    respond('get', TERMINALS_PATH, () => failure(503, undefined, 'down', { 'retry-after': '0' }));
    await expect(client().terminals.list({}, { maxRetries: 0 })).rejects.toBeInstanceOf(ServerError);
    expect(seen).toHaveLength(1);
  });
});
