/**
 * parseWebhook and createWebhookHandler. The handler is exercised over real HTTP (node:http on
 * 127.0.0.1 and the global fetch), so msw is deliberately not installed in this file.
 */
import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import * as fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  type AuthorisationEvent,
  ConfigurationError,
  createWebhookHandler,
  isAuthorisationEvent,
  isRefundEvent,
  parseWebhook,
  type RefundEvent,
  type UnknownWebhookEvent,
  type WebhookEvent,
  type WebhookHandler,
  type WebhookHandlerOptions,
  WebhookParseError,
} from '../src/index.js';
import { REFUND_WEBHOOK } from './support/webhook-events.js';

const authorisation = {
  event_code: 'AUTHORISATION',
  data: {
    amount: 1050,
    currency: 'EUR',
    paymentReference: 'SHOP1-PXTT-42',
    paymentStatus: 'AUTHORISED',
    description: 'Order 42',
    customReference: 'order-42',
    paymentSource: 'external_api',
  },
};

const refund = REFUND_WEBHOOK;

const chargeback = {
  event_code: 'CHARGEBACK',
  data: { paymentReference: 'SHOP1-PXTT-42', nested: { list: [1, 'two', null, { deep: true }] } },
};

/** Runs parseWebhook and reports which of the two allowed outcomes happened; anything else fails the test. */
function outcome(input: unknown): 'event' | 'parse-error' {
  try {
    const event = parseWebhook(input);
    expect(typeof event).toBe('object');
    expect(typeof event.event_code).toBe('string');
    expect(typeof event.data).toBe('object');
    return 'event';
  } catch (error) {
    if (!(error instanceof WebhookParseError)) throw new Error(`parseWebhook threw ${String(error)}, not a WebhookParseError`);
    expect(error.name).toBe('WebhookParseError');
    expect(error.message.length).toBeGreaterThan(0);
    return 'parse-error';
  }
}

function parseError(input: unknown): WebhookParseError {
  try {
    parseWebhook(input);
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookParseError);
    return error as WebhookParseError;
  }
  throw new Error('parseWebhook accepted the input');
}

describe('parseWebhook', () => {
  const text = JSON.stringify(authorisation);

  it.each([
    ['a string', text],
    ['a Uint8Array', new TextEncoder().encode(text)],
    ['a Buffer', Buffer.from(text)],
    ['an ArrayBuffer', new TextEncoder().encode(text).buffer],
    ['a parsed object', structuredClone(authorisation)],
    ['a string with a byte order mark', `\uFEFF${text}`],
    ['bytes with a byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])],
  ])('reads an AUTHORISATION from %s, adding nothing', (_name, body) => {
    const event = parseWebhook(body);
    expect(event).toStrictEqual(authorisation);
    expect(isAuthorisationEvent(event)).toBe(true);
    if (!isAuthorisationEvent(event)) throw new Error('not narrowed');
    expect(event.data.amount).toBe(1050);
    expect(event.data.paymentReference).toBe('SHOP1-PXTT-42');
  });

  it('reads a REFUND', () => {
    const event = parseWebhook(JSON.stringify(refund));
    expect(event).toStrictEqual(refund);
    expect(isRefundEvent(event)).toBe(true);
    expect(isAuthorisationEvent(event)).toBe(false);
  });

  it('keeps an unknown event code, with its data intact', () => {
    for (const body of [JSON.stringify(chargeback), Buffer.from(JSON.stringify(chargeback)), structuredClone(chargeback)]) {
      const event = parseWebhook(body);
      expect(event).toStrictEqual(chargeback);
      expect(isAuthorisationEvent(event)).toBe(false);
      expect(isRefundEvent(event)).toBe(false);
    }
  });

  it('keeps unknown fields, accepts null and absent optional fields', () => {
    const body = {
      event_code: 'AUTHORISATION',
      deliveredAt: '2026-01-01T10:00:00Z',
      data: { paymentReference: 'SHOP1-POSXT-1700000000', description: null, sessionId: 'SHOP1-EXTT-1', risk: { score: 3 } },
    };
    expect(parseWebhook(JSON.stringify(body))).toStrictEqual(body);
    const minimalRefund = { event_code: 'REFUND', data: { paymentReference: 'SHOP1-PXTT-1', refundReference: 'SHOP1-RFXT-1' } };
    expect(parseWebhook(minimalRefund)).toStrictEqual(minimalRefund);
  });

  it('accepts values it does not know in open enums', () => {
    const body = {
      ...authorisation,
      data: { ...authorisation.data, paymentStatus: 'CAPTURED', currency: 'JPY', paymentSource: 'dashboard' },
    };
    expect(parseWebhook(body)).toStrictEqual(body);
  });

  it('returns a copy: later changes to the input do not reach the event', () => {
    const input = structuredClone(chargeback);
    const event = parseWebhook(input);
    input.data.nested.list.push(4);
    expect(event.data).toStrictEqual(chargeback.data);
  });

  it('drops __proto__ keys without touching any prototype', () => {
    const body = '{"event_code":"X","__proto__":{"polluted":1},"data":{"__proto__":{"polluted":2},"a":1}}';
    const event = parseWebhook(body);
    expect(event).toStrictEqual({ event_code: 'X', data: { a: 1 } });
    expect(Object.getPrototypeOf(event)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(event.data)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves out properties set to undefined, as JSON would', () => {
    expect(parseWebhook({ event_code: 'X', data: { a: 1, b: undefined } })).toStrictEqual({ event_code: 'X', data: { a: 1 } });
  });

  const cyclic: Record<string, unknown> = { event_code: 'X', data: {} };
  (cyclic.data as Record<string, unknown>).self = cyclic;
  const deep = JSON.parse(`{"event_code":"X","data":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`) as unknown;
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();

  it.each<[string, unknown, RegExp]>([
    ['not JSON', '{event_code: AUTHORISATION}', /not valid JSON/],
    ['truncated JSON', text.slice(0, 20), /not valid JSON/],
    ['an empty string', '', /empty/],
    ['only whitespace', ' \n\t ', /empty/],
    ['empty bytes', new Uint8Array(0), /empty/],
    ['undefined', undefined, /empty/],
    ['null', null, /empty/],
    ['JSON null', 'null', /JSON object/],
    ['a JSON array', '[{"event_code":"AUTHORISATION"}]', /not an array/],
    ['a JSON string', '"AUTHORISATION"', /not a string/],
    ['a JSON number', '42', /not a number/],
    ['a number', 42, /not a number/],
    ['a function', () => authorisation, /not a function/],
    ['a missing event_code', { data: {} }, /no event_code/],
    ['an empty event_code', { event_code: '', data: {} }, /no event_code/],
    ['a numeric event_code', { event_code: 1, data: {} }, /no event_code/],
    ['missing data', { event_code: 'AUTHORISATION' }, /has no data/],
    ['array data', { event_code: 'X', data: [] }, /data must be a JSON object, not an array/],
    ['string data', '{"event_code":"REFUND","data":"{}"}', /data must be a JSON object, not a string/],
    [
      'a fractional amount',
      { ...authorisation, data: { ...authorisation.data, amount: 10.5 } },
      /data\.amount must be an integer number of cents/,
    ],
    ['a string amount', { ...authorisation, data: { ...authorisation.data, amount: '1050' } }, /data\.amount/],
    ['an unsafe integer amount', { ...authorisation, data: { ...authorisation.data, amount: 2 ** 60 } }, /data\.amount/],
    ['no paymentReference', { event_code: 'AUTHORISATION', data: { amount: 1050 } }, /data\.paymentReference is required/],
    ['an empty paymentReference', { event_code: 'AUTHORISATION', data: { paymentReference: '' } }, /data\.paymentReference/],
    ['a REFUND without refundReference', { event_code: 'REFUND', data: { paymentReference: 'SHOP1-PXTT-1' } }, /data\.refundReference/],
    ['a numeric description', { ...authorisation, data: { ...authorisation.data, description: 5 } }, /data\.description must be a string/],
    ['invalid UTF-8 bytes', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), /not valid UTF-8/],
    ['a lone surrogate byte sequence', Buffer.from([0xed, 0xa0, 0x80]), /not valid UTF-8/],
    ['a cyclic object', cyclic, /refers back to itself/],
    ['nesting beyond 64 levels', deep, /nested more than 64 levels/],
    ['NaN in data', { event_code: 'X', data: { n: Number.NaN } }, /not a JSON number/],
    ['a bigint in data', { event_code: 'X', data: { n: 10n } }, /not a JSON value/],
    ['a symbol in data', { event_code: 'X', data: { s: Symbol('s') } }, /not a JSON value/],
    ['a Date in data', { event_code: 'X', data: { at: new Date(0) } }, /not a JSON object/],
    ['a Map as the body', new Map([['event_code', 'X']]), /non-plain object/],
    ['undefined in an array', { event_code: 'X', data: { list: [1, undefined] } }, /undefined/],
    ['a sparse array', { event_code: 'X', data: { list: new Array(3) } }, /undefined/],
  ])('refuses %s with a WebhookParseError', (_name, input, message) => {
    expect(parseError(input).message).toMatch(message);
  });

  it('wraps whatever a getter, a proxy or a thrown oddity raises', () => {
    const getter = {
      event_code: 'AUTHORISATION',
      get data(): never {
        throw new TypeError('getter exploded');
      },
    };
    const error = parseError(getter);
    expect(error.message).toMatch(/could not be read \(getter exploded\)/);
    expect(error.cause).toBeInstanceOf(TypeError);

    const hostile = new Proxy(
      {},
      {
        getPrototypeOf: () => {
          throw new Error('trap');
        },
        ownKeys: () => {
          throw new Error('trap');
        },
      },
    );
    const proxyError = new Proxy(
      {},
      {
        getPrototypeOf: () => {
          throw new Error('nested trap');
        },
      },
    );
    const throwsProxy = {
      event_code: 'X',
      get data(): never {
        throw proxyError;
      },
    };
    const throwsUndescribable = {
      event_code: 'X',
      get data(): never {
        throw {
          toString: () => {
            throw new Error('no');
          },
        };
      },
    };
    for (const input of [hostile, revoked.proxy, throwsProxy, throwsUndescribable, { event_code: 'X', data: hostile }]) {
      expect(outcome(input)).toBe('parse-error');
    }
  });

  it('never throws anything but WebhookParseError, whatever the value (property)', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withBoxedValues: true,
          withDate: true,
          withMap: true,
          withSet: true,
          withNullPrototype: true,
          withObjectString: true,
          withSparseArray: true,
          withTypedArray: true,
          withUnicodeString: true,
        }),
        (input) => {
          outcome(input);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never throws anything but WebhookParseError on arbitrary text and bytes (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (input) => void outcome(input)),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (input) => void outcome(input)),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.json(), (input) => void outcome(input)),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (input) => void outcome(input)),
      { numRuns: 300 },
    );
  });

  it('never throws anything but WebhookParseError on envelopes with arbitrary data (property)', () => {
    const code = fc.constantFrom('AUTHORISATION', 'REFUND', 'CHARGEBACK', '', 'authorisation');
    const data = fc.oneof(
      fc.anything({ withNullPrototype: true, withBigInt: true, withDate: true }),
      fc.record(
        {
          amount: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)),
          currency: fc.oneof(fc.constantFrom('EUR', 'GBP', 'USD'), fc.string()),
          paymentReference: fc.oneof(fc.constant('SHOP1-PXTT-1'), fc.string(), fc.integer()),
          refundReference: fc.oneof(fc.constant('SHOP1-RFXT-1'), fc.string()),
          status: fc.oneof(fc.constant('success'), fc.string(), fc.constant(null)),
        },
        { requiredKeys: [] },
      ),
    );
    const envelope = fc.record({ event_code: code, data });
    fc.assert(
      fc.property(envelope, (input) => void outcome(input)),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(envelope, (input) => void outcome(safeStringify(input))),
      { numRuns: 300 },
    );
  });

  it('reads a well-formed event the same from text, bytes and object, adding nothing (property)', () => {
    const event = fc.oneof(
      fc.record({
        event_code: fc.constant('AUTHORISATION'),
        data: fc.record(
          {
            amount: fc.integer({ min: 1, max: 10_000_000 }),
            currency: fc.constantFrom('EUR', 'GBP', 'USD'),
            paymentReference: fc.string({ minLength: 1 }),
            paymentStatus: fc.constant('AUTHORISED'),
            description: fc.option(fc.string(), { nil: null }),
            customReference: fc.string({ maxLength: 100 }),
            extra: fc.jsonValue(),
          },
          { requiredKeys: ['paymentReference'] },
        ),
      }),
      fc.record({
        event_code: fc.string({ minLength: 1 }).filter((value) => value !== 'AUTHORISATION' && value !== 'REFUND'),
        data: fc.dictionary(
          fc.string().filter((key) => key !== '__proto__'),
          fc.jsonValue(),
        ),
      }),
    );
    fc.assert(
      fc.property(event, (input) => {
        const json = JSON.stringify(input);
        // parseWebhook drops `__proto__` keys at any depth (nested values may generate them).
        const expected = JSON.parse(json, (key, value: unknown) => (key === '__proto__' ? undefined : value)) as unknown;
        expect(parseWebhook(json)).toStrictEqual(expected);
        expect(parseWebhook(new TextEncoder().encode(json))).toStrictEqual(expected);
        expect(parseWebhook(JSON.parse(json))).toStrictEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('narrows with the type guards', () => {
    const event = parseWebhook(authorisation);
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    if (isAuthorisationEvent(event)) {
      expectTypeOf(event.data.amount).toEqualTypeOf<number | null | undefined>();
      expectTypeOf(event.data.paymentReference).toEqualTypeOf<string>();
    }
    if (isRefundEvent(event)) expectTypeOf(event.data.refundReference).toEqualTypeOf<string>();
    expectTypeOf<UnknownWebhookEvent['data']>().toEqualTypeOf<Record<string, unknown>>();
  });
});

/** JSON.stringify that never throws (bigint, cycles): the property feeds whatever it returns. */
function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '{';
  }
}

// ---------------------------------------------------------------------------------------------
// createWebhookHandler
// ---------------------------------------------------------------------------------------------

interface Calls {
  authorisations: [AuthorisationEvent, Request][];
  refunds: [RefundEvent, Request][];
  unknown: [UnknownWebhookEvent, Request][];
  errors: [unknown, WebhookEvent][];
}

function recorder(overrides: Partial<WebhookHandlerOptions> = {}): { handler: WebhookHandler; calls: Calls } {
  const calls: Calls = { authorisations: [], refunds: [], unknown: [], errors: [] };
  const handler = createWebhookHandler({
    onAuthorisation: (event, request) => {
      calls.authorisations.push([event, request]);
    },
    onRefund: async (event, request) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      calls.refunds.push([event, request]);
    },
    onUnknown: (event, request) => {
      calls.unknown.push([event, request]);
    },
    onError: (error, event) => {
      calls.errors.push([error, event]);
    },
    ...overrides,
  });
  return { handler, calls };
}

const SECRET_FAILURE = 'database password is hunter2';

describe('createWebhookHandler', () => {
  it('refuses options without any event callback, or with a callback that is not a function', () => {
    expect(() => createWebhookHandler({})).toThrow(ConfigurationError);
    expect(() => createWebhookHandler({ onError: () => undefined })).toThrow(/at least one of onAuthorisation, onRefund and onUnknown/);
    expect(() => createWebhookHandler(undefined as unknown as WebhookHandlerOptions)).toThrow(ConfigurationError);
    expect(() => createWebhookHandler({ onRefund: 'yes' as unknown as () => void })).toThrow(/onRefund must be a function/);
    expect(() => createWebhookHandler({ onRefund: () => undefined, maxBodyBytes: 0 })).toThrow(/maxBodyBytes/);
  });

  it('has the fetch-standard signature plus .node', () => {
    const handler = createWebhookHandler({ onAuthorisation: () => undefined });
    expectTypeOf(handler).toExtend<(request: Request) => Promise<Response>>();
    expectTypeOf<[IncomingMessage, ServerResponse]>().toExtend<Parameters<typeof handler.node>>();
  });
});

/** The adapters under test: each posts `body` with `init` to a handler and returns the response. */
interface Adapter {
  name: string;
  send(handler: WebhookHandler, init: { method?: string; body?: BodyInit; headers?: Record<string, string> }): Promise<Response>;
}

let server: Server;
let baseUrl = '';
/** What the node server does with each request; set by each test through the adapter. */
let route: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();

beforeAll(async () => {
  server = createServer((req, res) => route(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  baseUrl = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function post(init: { method?: string; body?: BodyInit; headers?: Record<string, string> }): Promise<Response> {
  const streamed = init.body instanceof ReadableStream;
  return fetch(`${baseUrl}/webhooks/payments?source=test`, {
    method: init.method ?? 'POST',
    ...(init.body === undefined ? {} : { body: init.body }),
    headers: { 'x-delivery': 'd-1', ...init.headers },
    ...(streamed ? { duplex: 'half' } : {}),
  } as RequestInit);
}

/** Reads the whole body of a Node request, as express.json() / express.raw() would before the route. */
async function consume(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const adapters: Adapter[] = [
  {
    name: 'fetch',
    send: (handler, init) =>
      handler(
        new Request('http://localhost/webhooks/payments?source=test', {
          method: init.method ?? 'POST',
          ...(init.body === undefined ? {} : { body: init.body }),
          headers: { 'x-delivery': 'd-1', ...init.headers },
          ...(init.body instanceof ReadableStream ? { duplex: 'half' } : {}),
        } as RequestInit),
      ),
  },
  {
    name: 'node:http',
    send: (handler, init) => {
      route = (req, res) => void handler.node(req, res);
      return post(init);
    },
  },
  {
    name: 'Express-style, body parsed by express.json()',
    send: (handler, init) => {
      route = (req, res) => {
        void consume(req).then((raw) => {
          let body: unknown = {};
          try {
            body = raw.length ? JSON.parse(raw.toString('utf8')) : {};
          } catch {
            // express.json() would answer 400 itself; hand the raw text on instead.
            body = raw.toString('utf8');
          }
          void handler.node(Object.assign(req, { body }), res);
        });
      };
      return post(init);
    },
  },
  {
    name: 'Express-style, body read by express.raw()',
    send: (handler, init) => {
      route = (req, res) => {
        void consume(req).then((raw) => handler.node(Object.assign(req, { body: raw }), res));
      };
      return post(init);
    },
  },
];

describe.each(adapters)('webhook handler through the $name adapter', (adapter) => {
  it('answers 200 and hands the typed AUTHORISATION event and the request to onAuthorisation', async () => {
    const { handler, calls } = recorder();
    const response = await adapter.send(handler, { body: JSON.stringify(authorisation) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    expect(await response.json()).toEqual({ received: true });
    expect(calls.authorisations).toHaveLength(1);
    const [event, request] = calls.authorisations[0] ?? [];
    expect(event).toStrictEqual(authorisation);
    expect(request).toBeInstanceOf(Request);
    expect(request?.headers.get('x-delivery')).toBe('d-1');
    expect(new URL(request?.url ?? '').pathname).toBe('/webhooks/payments');
    expect(calls.refunds).toHaveLength(0);
    expect(calls.unknown).toHaveLength(0);
  });

  it('awaits an async onRefund before answering', async () => {
    const { handler, calls } = recorder();
    const response = await adapter.send(handler, { body: JSON.stringify(refund) });
    expect(response.status).toBe(200);
    expect(calls.refunds.map(([event]) => event)).toStrictEqual([refund]);
  });

  it('hands other event codes to onUnknown', async () => {
    const { handler, calls } = recorder();
    const response = await adapter.send(handler, { body: JSON.stringify(chargeback) });
    expect(response.status).toBe(200);
    expect(calls.unknown.map(([event]) => event)).toStrictEqual([chargeback]);
  });

  it('acknowledges events that have no callback', async () => {
    const handler = createWebhookHandler({ onRefund: () => undefined });
    for (const body of [authorisation, chargeback]) {
      const response = await adapter.send(handler, { body: JSON.stringify(body) });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ received: true });
    }
  });

  it('answers 400 with the reason to a malformed body, calling nothing', async () => {
    const { handler, calls } = recorder();
    for (const body of ['not json', JSON.stringify({ ...authorisation, data: { ...authorisation.data, amount: 10.5 } }), '[]']) {
      const response = await adapter.send(handler, { body });
      expect(response.status).toBe(400);
      const answer = (await response.json()) as { received: boolean; error: string };
      expect(answer.received).toBe(false);
      expect(answer.error).toMatch(/JSON|amount|array/);
    }
    expect(calls.authorisations).toHaveLength(0);
    expect(calls.errors).toHaveLength(0);
  });

  it('answers 500 when a callback throws, reports it to onError, and never echoes its message', async () => {
    const failure = new Error(SECRET_FAILURE);
    const { handler, calls } = recorder({
      onAuthorisation: () => {
        throw failure;
      },
      onRefund: () => Promise.reject(failure),
    });
    for (const body of [authorisation, refund]) {
      const response = await adapter.send(handler, { body: JSON.stringify(body) });
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({ received: false });
      expect(text).not.toContain('hunter2');
    }
    expect(calls.errors.map(([error]) => error)).toEqual([failure, failure]);
    expect(calls.errors.map(([, event]) => event)).toStrictEqual([authorisation, refund]);
  });

  it('still answers 500 when onError itself fails', async () => {
    const onError = vi.fn(() => Promise.reject(new Error('logger down')));
    const handler = createWebhookHandler({ onUnknown: () => Promise.reject(new Error(SECRET_FAILURE)), onError });
    const response = await adapter.send(handler, { body: JSON.stringify(chargeback) });
    expect(response.status).toBe(500);
    expect(onError).toHaveBeenCalledTimes(1);
  });
});

describe.each(adapters.slice(0, 2))('webhook handler through the $name adapter, raw body', (adapter) => {
  it('answers 405 with Allow: POST to other methods', async () => {
    const { handler, calls } = recorder();
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const response = await adapter.send(handler, { method, ...(method === 'GET' ? {} : { body: JSON.stringify(authorisation) }) });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(((await response.json()) as { received: boolean }).received).toBe(false);
    }
    expect(calls.authorisations).toHaveLength(0);
  });

  it('answers 400 to an empty body and to invalid UTF-8', async () => {
    const { handler } = recorder();
    const empty = await adapter.send(handler, {});
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: string }).error).toMatch(/empty/);
    const bytes = await adapter.send(handler, { body: new Uint8Array([0x7b, 0xff, 0x7d]) });
    expect(bytes.status).toBe(400);
    expect(((await bytes.json()) as { error: string }).error).toMatch(/UTF-8/);
  });

  it('reads a body that arrives in several chunks', async () => {
    const { handler, calls } = recorder();
    const bytes = new TextEncoder().encode(JSON.stringify(authorisation));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 10));
        controller.enqueue(bytes.slice(10, 40));
        controller.enqueue(bytes.slice(40));
        controller.close();
      },
    });
    const response = await adapter.send(handler, { body });
    expect(response.status).toBe(200);
    expect(calls.authorisations.map(([event]) => event)).toStrictEqual([authorisation]);
  });

  it('answers 413 to a body over maxBodyBytes, declared or streamed, without calling anything', async () => {
    const { handler, calls } = recorder({ maxBodyBytes: 64 });
    const big = JSON.stringify({ ...authorisation, data: { ...authorisation.data, description: 'x'.repeat(200) } });
    const declared = await adapter.send(handler, { body: big });
    expect(declared.status).toBe(413);
    const streamed = await adapter.send(handler, {
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          const bytes = new TextEncoder().encode(big);
          controller.enqueue(bytes.slice(0, 50));
          controller.enqueue(bytes.slice(50));
          controller.close();
        },
      }),
    });
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { error: string }).error).toMatch(/larger than 64 bytes/);
    expect(calls.authorisations).toHaveLength(0);
  });
});

describe('webhook handler edge cases', () => {
  it('fetch: answers 400 when the body was already read', async () => {
    const { handler } = recorder();
    const request = new Request('http://localhost/webhook', { method: 'POST', body: JSON.stringify(authorisation) });
    await request.text();
    const response = await handler(request);
    expect(response.status).toBe(400);
  });

  it('node: reads the stream when express.json() left an empty object for a body it did not parse', async () => {
    const { handler, calls } = recorder();
    route = (req, res) => void handler.node(Object.assign(req, { body: {} }), res);
    const response = await post({ body: JSON.stringify(authorisation), headers: { 'content-type': 'text/plain' } });
    expect(response.status).toBe(200);
    expect(calls.authorisations.map(([event]) => event)).toStrictEqual([authorisation]);
  });

  it('node: takes a body pre-parsed to a string (express.text())', async () => {
    const { handler, calls } = recorder();
    route = (req, res) => {
      void consume(req).then((raw) => handler.node(Object.assign(req, { body: raw.toString('utf8') }), res));
    };
    const response = await post({ body: JSON.stringify(refund) });
    expect(response.status).toBe(200);
    expect(calls.refunds.map(([event]) => event)).toStrictEqual([refund]);
  });

  it('node: writes nothing when another middleware already answered', async () => {
    const { handler } = recorder();
    let handled: Promise<void> | undefined;
    route = (req, res) => {
      void consume(req).then((raw) => {
        res.statusCode = 204;
        res.end();
        handled = handler.node(Object.assign(req, { body: raw }), res);
      });
    };
    const response = await post({ body: JSON.stringify(authorisation) });
    expect(response.status).toBe(204);
    await expect(handled).resolves.toBeUndefined();
  });

  it('node: works with a minimal structural request and response', async () => {
    const { handler, calls } = recorder();
    const written: { status?: number; headers: Record<string, string>; body?: string } = { headers: {} };
    async function* chunks(): AsyncGenerator<string> {
      yield JSON.stringify(chargeback).slice(0, 5);
      yield JSON.stringify(chargeback).slice(5);
    }
    await handler.node(
      { method: 'POST', [Symbol.asyncIterator]: chunks },
      {
        statusCode: 0,
        setHeader(name, value) {
          written.headers[name] = value;
        },
        end(body) {
          written.status = this.statusCode;
          written.body = body;
        },
      },
    );
    expect(written.status).toBe(200);
    expect(written.body).toBe('{"received":true}');
    expect(calls.unknown.map(([event]) => event)).toStrictEqual([chargeback]);
  });

  it('node: answers 400 when reading the stream fails', async () => {
    const { handler } = recorder();
    let status = 0;
    await handler.node(
      {
        method: 'POST',
        [Symbol.asyncIterator]: async function* (): AsyncGenerator<Uint8Array> {
          yield new Uint8Array([0x7b]);
          throw new Error('aborted');
        },
      },
      {
        statusCode: 0,
        setHeader: () => undefined,
        end() {
          status = this.statusCode;
        },
      },
    );
    expect(status).toBe(400);
  });
});
