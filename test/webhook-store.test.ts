/**
 * Exactly-once webhook callbacks: `webhookEventKey`, `memoryWebhookStore` and the `store`,
 * `eventKey`, `leaseMs` and `confirm` options of `createWebhookHandler`. Deliveries are fetch
 * `Request`s handed to the handler; the API behind `confirm` is msw.
 */
import { createHash } from 'node:crypto';
import * as fc from 'fast-check';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { canonicalJson } from '../src/helpers/webhook-key.js';
import {
  type AuthorisationEvent,
  ConfigurationError,
  type ConfirmedPosPayment,
  type ConfirmedRefund,
  type ConfirmedSessionPayment,
  createWebhookHandler,
  memoryWebhookStore,
  type PaymentClient,
  parseWebhook,
  type RefundEvent,
  type WebhookClaim,
  type WebhookConfirmer,
  type WebhookContext,
  type WebhookEvent,
  type WebhookHandlerOptions,
  WebhookNotConfirmedError,
  type WebhookStore,
  webhookEventKey,
} from '../src/index.js';
import { client, failure, listing, respond, success, useMsw } from './support/msw.js';
import { REFUND_WEBHOOK } from './support/webhook-events.js';

useMsw();

const POS_ID = 'SHOP1-POSXT-1700000000';
const POS_PATH = '/external/v1/test/pos/payments';

function authorisation(data: Record<string, unknown> = {}) {
  return {
    event_code: 'AUTHORISATION',
    data: { amount: 1050, currency: 'EUR', paymentReference: POS_ID, paymentStatus: 'AUTHORISED', customReference: 'order-42', ...data },
  };
}

const chargeback = { event_code: 'CHARGEBACK', data: { paymentReference: 'SHOP1-PXTT-42', amount: 1050, nested: { b: 1, a: [2, 'x'] } } };

function delivery(body: unknown): Request {
  return new Request('http://127.0.0.1/webhooks', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function answer(response: Response): Promise<{ status: number; body: unknown; retryAfter: string | null }> {
  return { status: response.status, body: await response.json(), retryAfter: response.headers.get('retry-after') };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** A clock the test moves by hand. */
function clock(start = 1_000_000) {
  let time = start;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

describe('webhookEventKey', () => {
  it('keys an AUTHORISATION by payment reference and status, absent status meaning AUTHORISED', () => {
    expect(webhookEventKey(parseWebhook(authorisation()))).toBe(`AUTHORISATION:${POS_ID}:AUTHORISED`);
    expect(webhookEventKey(parseWebhook(authorisation({ paymentStatus: undefined })))).toBe(`AUTHORISATION:${POS_ID}:AUTHORISED`);
    expect(webhookEventKey(parseWebhook(authorisation({ paymentStatus: 'REFUSED' })))).toBe(`AUTHORISATION:${POS_ID}:REFUSED`);
    // A redelivery with other descriptive fields is still the same event.
    expect(webhookEventKey(parseWebhook(authorisation({ description: 'again', amount: 1 })))).toBe(`AUTHORISATION:${POS_ID}:AUTHORISED`);
  });

  it('keys a REFUND by refund reference and status, absent status meaning success', () => {
    expect(webhookEventKey(parseWebhook(REFUND_WEBHOOK))).toBe('REFUND:SHOP1-RFXT-7:success');
    expect(webhookEventKey(parseWebhook({ ...REFUND_WEBHOOK, data: { ...REFUND_WEBHOOK.data, status: null } }))).toBe(
      'REFUND:SHOP1-RFXT-7:success',
    );
  });

  it('keys any other code by the event as canonical JSON, whatever the field order', () => {
    const canonical = '{"data":{"amount":1050,"nested":{"a":[2,"x"],"b":1},"paymentReference":"SHOP1-PXTT-42"},"event_code":"CHARGEBACK"}';
    expect(canonicalJson(parseWebhook(chargeback))).toBe(canonical);
    expect(webhookEventKey(parseWebhook(chargeback))).toBe(`CHARGEBACK:${canonical}`);
    const reordered = {
      data: { nested: { a: [2, 'x'], b: 1 }, amount: 1050, paymentReference: 'SHOP1-PXTT-42' },
      event_code: 'CHARGEBACK',
    };
    expect(webhookEventKey(parseWebhook(reordered))).toBe(`CHARGEBACK:${canonical}`);
    expect(webhookEventKey(parseWebhook({ ...chargeback, data: { ...chargeback.data, amount: 1051 } }))).not.toBe(
      `CHARGEBACK:${canonical}`,
    );
  });

  it('gives equal keys to equal events only, for any JSON data', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue()), (a, b) => {
        const key = (data: object) => webhookEventKey(parseWebhook({ event_code: 'DISPUTE', data }));
        const same =
          canonicalJson(parseWebhook({ event_code: 'DISPUTE', data: a })) ===
          canonicalJson(parseWebhook({ event_code: 'DISPUTE', data: b }));
        expect(key(a) === key(b)).toBe(same);
        expect(key(a)).toBe(key(JSON.parse(JSON.stringify(a)) as object));
      }),
      { numRuns: 200 },
    );
  });
});

describe('memoryWebhookStore', () => {
  it('claims a free key, reports it busy for the rest of the lease, then done once completed', async () => {
    const time = clock();
    const store = memoryWebhookStore({ now: time.now });
    const first = await store.claim('k', 1000);
    expect(first).toEqual({ status: 'claimed', token: expect.any(String) });
    time.advance(400);
    expect(await store.claim('k', 1000)).toEqual({ status: 'busy', retryAfterMs: 600 });
    await store.complete('k', (first as { token: string }).token);
    expect(await store.claim('k', 1000)).toEqual({ status: 'done' });
    time.advance(10 ** 9);
    expect(await store.claim('k', 1000)).toEqual({ status: 'done' });
  });

  it('frees a released key, ignores a complete or release by another token, and hands an expired lease to the next claim', async () => {
    const time = clock();
    const store = memoryWebhookStore({ now: time.now });
    const first = (await store.claim('k', 1000)) as { token: string };
    await store.release('k', 'not-the-token');
    await store.complete('k', 'not-the-token');
    expect((await store.claim('k', 1000)).status).toBe('busy');
    await store.release('k', first.token);
    const second = (await store.claim('k', 1000)) as { status: string; token: string };
    expect(second.status).toBe('claimed');
    expect(second.token).not.toBe(first.token);
    time.advance(1000);
    const third = (await store.claim('k', 1000)) as { status: string; token: string };
    expect(third.status).toBe('claimed');
    // The expired claim's late complete must not mark the key done under the new claim.
    await store.complete('k', second.token);
    expect((await store.claim('k', 1000)).status).toBe('busy');
    await store.complete('k', third.token);
    expect(await store.claim('k', 1000)).toEqual({ status: 'done' });
    // Keys are independent.
    expect((await store.claim('other', 1000)).status).toBe('claimed');
  });

  it('refuses malformed keys, tokens and leases with a TypeError naming them', async () => {
    const store = memoryWebhookStore();
    await expect(store.claim('', 1000)).rejects.toThrow(/key must be a non-empty string/);
    await expect(store.claim('x'.repeat(501), 1000)).rejects.toThrow(/at most 500 characters/);
    await expect(store.claim('k', 0)).rejects.toThrow(/lease must be a positive integer/);
    await expect(store.claim('k', 1.5)).rejects.toThrow(TypeError);
    await expect(store.complete('k', '')).rejects.toThrow(/token must be a non-empty string/);
    await expect(store.release(42 as unknown as string, 't')).rejects.toThrow(/key must be/);
  });
});

describe('createWebhookHandler with a store', () => {
  it('runs the callback once for many concurrent deliveries of one event: the others get 409 with Retry-After, never 200', async () => {
    const gate = deferred();
    const started = deferred();
    const onAuthorisation = vi.fn(async () => {
      started.resolve();
      await gate.promise;
    });
    const handler = createWebhookHandler({ store: memoryWebhookStore(), onAuthorisation, leaseMs: 30_000 });
    const deliveries = Array.from({ length: 50 }, () => handler(delivery(authorisation())));
    let settled = 0;
    for (const response of deliveries) void response.then(() => (settled += 1));
    await started.promise;
    // Every delivery but the running one answers while its callback is still running.
    await vi.waitFor(() => expect(settled).toBe(49));
    gate.resolve();
    const answers = await Promise.all(deliveries.map((response) => response.then(answer)));
    expect(answers.filter((item) => item.status === 200)).toEqual([{ status: 200, body: { received: true }, retryAfter: null }]);
    const conflicts = answers.filter((item) => item.status === 409);
    expect(conflicts).toHaveLength(49);
    for (const conflict of conflicts) {
      expect(conflict.retryAfter).toMatch(/^[1-9]\d*$/);
      expect(Number(conflict.retryAfter)).toBeLessThanOrEqual(30);
      expect(conflict.body).toEqual({ received: false, error: expect.stringMatching(/in progress/) });
    }
    expect(onAuthorisation).toHaveBeenCalledTimes(1);
    expect(await answer(await handler(delivery(authorisation())))).toEqual({
      status: 200,
      body: { received: true, duplicate: true },
      retryAfter: null,
    });
    expect(onAuthorisation).toHaveBeenCalledTimes(1);
  });

  it('answers the busy deliveries before the running callback ends', async () => {
    const gate = deferred();
    const onAuthorisation = vi.fn(() => gate.promise);
    const handler = createWebhookHandler({ store: memoryWebhookStore(), onAuthorisation });
    const running = handler(delivery(authorisation()));
    await vi.waitFor(() => expect(onAuthorisation).toHaveBeenCalledTimes(1));
    const second = await answer(await handler(delivery(authorisation())));
    expect(second.status).toBe(409);
    expect(second.retryAfter).toBe('60');
    gate.resolve();
    expect((await running).status).toBe(200);
  });

  it('releases the claim when the callback throws (500), so that the next delivery runs it', async () => {
    const onError = vi.fn();
    let calls = 0;
    const onRefund = vi.fn(async () => {
      calls += 1;
      if (calls === 1) throw new Error('database down');
    });
    const handler = createWebhookHandler({ store: memoryWebhookStore(), onRefund, onError });
    expect(await answer(await handler(delivery(REFUND_WEBHOOK)))).toEqual({ status: 500, body: { received: false }, retryAfter: null });
    expect(onError).toHaveBeenCalledWith(new Error('database down'), expect.objectContaining({ event_code: 'REFUND' }));
    expect((await handler(delivery(REFUND_WEBHOOK))).status).toBe(200);
    expect((await answer(await handler(delivery(REFUND_WEBHOOK)))).body).toEqual({ received: true, duplicate: true });
    expect(onRefund).toHaveBeenCalledTimes(2);
  });

  it('releases the claim and answers 500 when the callback throws and onError throws too', async () => {
    const onError = vi.fn(() => {
      throw new Error('logger down');
    });
    const onRefund = vi.fn().mockRejectedValueOnce(new Error('database down'));
    const handler = createWebhookHandler({ store: memoryWebhookStore(), onRefund, onError });
    expect((await handler(delivery(REFUND_WEBHOOK))).status).toBe(500);
    expect((await handler(delivery(REFUND_WEBHOOK))).status).toBe(200);
    expect(onRefund).toHaveBeenCalledTimes(2);
    expect(onError).toHaveBeenCalledTimes(1);
  });

  it('lets the next delivery run an event whose claim outlived its lease (a process that died mid-callback)', async () => {
    const time = clock();
    const store = memoryWebhookStore({ now: time.now });
    const stuck = deferred();
    const onAuthorisation = vi.fn().mockImplementationOnce(() => stuck.promise);
    const handler = createWebhookHandler({ store, onAuthorisation, leaseMs: 5_000 });
    const dying = handler(delivery(authorisation()));
    await vi.waitFor(() => expect(onAuthorisation).toHaveBeenCalledTimes(1));
    time.advance(4_000);
    const during = await answer(await handler(delivery(authorisation())));
    expect(during).toMatchObject({ status: 409, retryAfter: '1' });
    time.advance(1_000);
    expect((await handler(delivery(authorisation()))).status).toBe(200);
    expect(onAuthorisation).toHaveBeenCalledTimes(2);
    // The first one finishing late does not undo or repeat anything.
    stuck.resolve();
    expect((await dying).status).toBe(200);
    expect((await answer(await handler(delivery(authorisation())))).body).toEqual({ received: true, duplicate: true });
    expect(onAuthorisation).toHaveBeenCalledTimes(2);
  });

  it('keys by eventKey when given, and hands the key to the callback', async () => {
    const keys: string[] = [];
    const handler = createWebhookHandler({
      store: memoryWebhookStore(),
      eventKey: (event) => `order:${String(event.data.customReference)}`,
      onAuthorisation: (_event, _request, context) => {
        keys.push(context.key);
      },
    });
    expect((await handler(delivery(authorisation()))).status).toBe(200);
    const other = await answer(await handler(delivery(authorisation({ paymentReference: 'SHOP1-POSXT-1700000001' }))));
    expect(other.body).toEqual({ received: true, duplicate: true });
    expect(keys).toEqual(['order:order-42']);
  });

  it('gives the default key to the callback, store or not', async () => {
    const contexts: WebhookContext[] = [];
    for (const store of [undefined, memoryWebhookStore()]) {
      const handler = createWebhookHandler({
        store,
        onUnknown: (_event, _request, context) => {
          contexts.push(context);
        },
      });
      expect((await handler(delivery(chargeback))).status).toBe(200);
    }
    const key = webhookEventKey(parseWebhook(chargeback));
    expect(contexts).toEqual([
      { key, transaction: expect.any(Function) },
      { key, transaction: expect.any(Function) },
    ]);
  });

  it('stores a key longer than 500 characters as its SHA-256, and still runs the event once', async () => {
    const contexts: WebhookContext[] = [];
    const handler = createWebhookHandler({
      store: memoryWebhookStore(),
      onUnknown: (_event, _request, context) => {
        contexts.push(context);
      },
    });
    const big = { event_code: 'CHARGEBACK', data: { paymentReference: 'SHOP1-PXTT-42', note: 'x'.repeat(600) } };
    expect((await answer(await handler(delivery(big)))).body).toEqual({ received: true });
    expect((await answer(await handler(delivery(big)))).body).toEqual({ received: true, duplicate: true });
    const digest = createHash('sha256')
      .update(webhookEventKey(parseWebhook(big)))
      .digest('hex');
    expect(contexts).toEqual([{ key: `sha256:${digest}`, transaction: expect.any(Function) }]);
  });

  it('answers 500 without running the callback when the store or eventKey fails, and 200 when only complete fails', async () => {
    const onError = vi.fn();
    const onAuthorisation = vi.fn();
    const broken = (overrides: Partial<WebhookStore>): WebhookStore => ({ ...memoryWebhookStore(), ...overrides });
    const claimFails = createWebhookHandler({
      store: broken({ claim: () => Promise.reject(new Error('connection refused')) }),
      onAuthorisation,
      onError,
    });
    expect((await claimFails(delivery(authorisation()))).status).toBe(500);
    const nonsense = createWebhookHandler({
      store: broken({ claim: async () => ({ status: 'maybe' }) as unknown as WebhookClaim }),
      onAuthorisation,
      onError,
    });
    expect((await nonsense(delivery(authorisation()))).status).toBe(500);
    const keyFails = createWebhookHandler({
      store: memoryWebhookStore(),
      eventKey: () => {
        throw new Error('no key');
      },
      onAuthorisation,
      onError,
    });
    expect((await keyFails(delivery(authorisation()))).status).toBe(500);
    expect(onAuthorisation).not.toHaveBeenCalled();
    const completeFails = createWebhookHandler({
      store: broken({ complete: () => Promise.reject(new Error('lost the connection')) }),
      onAuthorisation,
      onError,
    });
    expect((await completeFails(delivery(authorisation()))).status).toBe(200);
    expect(onAuthorisation).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls.map(([error]) => (error as Error).message)).toEqual([
      'connection refused',
      'The webhook store answered a claim with neither claimed, done nor busy',
      'no key',
      'lost the connection',
    ]);
  });

  it('answers 409 with Retry-After through the Node adapter too', async () => {
    const gate = deferred();
    const onAuthorisation = vi.fn(() => gate.promise);
    const handler = createWebhookHandler({ store: memoryWebhookStore(), onAuthorisation, leaseMs: 2_500 });
    const running = handler(delivery(authorisation()));
    await vi.waitFor(() => expect(onAuthorisation).toHaveBeenCalledTimes(1));
    const headers: Record<string, string> = {};
    const res = {
      statusCode: 0,
      body: '',
      setHeader: (name: string, value: string) => (headers[name] = value),
      end: (body: string) => (res.body = body),
    };
    await handler.node({ method: 'POST', body: JSON.stringify(authorisation()) }, res);
    expect(res.statusCode).toBe(409);
    expect(headers['retry-after']).toBe('3');
    gate.resolve();
    await running;
  });

  it('refuses malformed store, leaseMs, eventKey and confirm options', () => {
    const onRefund = () => undefined;
    const cases: [Partial<WebhookHandlerOptions>, string][] = [
      [{ store: {} as WebhookStore }, 'store'],
      [{ store: { claim: () => undefined } as unknown as WebhookStore }, 'store'],
      [{ leaseMs: 0 }, 'leaseMs'],
      [{ leaseMs: 1.5 }, 'leaseMs'],
      [{ eventKey: 'key' as unknown as () => string }, 'eventKey'],
      [{ confirm: {} as WebhookConfirmer }, 'confirm'],
    ];
    for (const [options, option] of cases) {
      expect(() => createWebhookHandler({ onRefund, ...options })).toThrow(expect.objectContaining({ name: 'ConfigurationError', option }));
      expect(() => createWebhookHandler({ onRefund, ...options })).toThrow(ConfigurationError);
    }
  });
});

describe('createWebhookHandler with confirm', () => {
  const payment = {
    posPaymentId: POS_ID,
    paymentReference: POS_ID,
    poiId: 'V400m-TEST-000001',
    amount: { value: 1050, currency: 'EUR' },
    customReference: 'order-42',
  };

  function servePos(status: 'success' | 'failed'): void {
    respond('get', POS_PATH, () => success(listing('posPayments', [{ ...payment, status }], { cursor: null, hasMore: false, total: 1 })));
  }

  it('confirms once claimed and hands the callback the record and the outcome', async () => {
    servePos('failed');
    const seenContexts: unknown[] = [];
    const handler = createWebhookHandler({
      store: memoryWebhookStore(),
      confirm: client({ maxRetries: 0 }),
      onAuthorisation: (_event, _request, context) => {
        seenContexts.push(context);
      },
    });
    expect((await handler(delivery(authorisation({ paymentStatus: 'REFUSED' })))).status).toBe(200);
    expect(seenContexts).toEqual([
      {
        key: `AUTHORISATION:${POS_ID}:REFUSED`,
        confirmed: {
          kind: 'posPayment',
          outcome: 'refused',
          event: parseWebhook(authorisation({ paymentStatus: 'REFUSED' })),
          record: expect.objectContaining({ posPaymentId: POS_ID, status: 'failed' }),
        },
        transaction: expect.any(Function),
      },
    ]);
  });

  it('answers 422 to an event the API does not confirm, runs nothing, and releases the claim for the next delivery', async () => {
    servePos('failed');
    const onError = vi.fn();
    const onAuthorisation = vi.fn();
    const handler = createWebhookHandler({ store: memoryWebhookStore(), confirm: client({ maxRetries: 0 }), onAuthorisation, onError });
    const refused = await answer(await handler(delivery(authorisation())));
    expect(refused).toEqual({
      status: 422,
      body: { received: false, error: 'The API does not confirm this webhook (mismatch)' },
      retryAfter: null,
    });
    expect(onError).toHaveBeenCalledWith(expect.any(WebhookNotConfirmedError), expect.anything());
    expect(onAuthorisation).not.toHaveBeenCalled();
    // Once the API shows the payment, the next delivery runs: the failed confirmation left no claim behind.
    servePos('success');
    expect((await handler(delivery(authorisation()))).status).toBe(200);
    expect(onAuthorisation).toHaveBeenCalledTimes(1);
  });

  it('answers 500 when the API cannot be asked, and releases the claim', async () => {
    respond('get', POS_PATH, () => failure(503, undefined, 'maintenance'));
    const onAuthorisation = vi.fn();
    const handler = createWebhookHandler({ store: memoryWebhookStore(), confirm: client({ maxRetries: 0 }), onAuthorisation });
    expect(await answer(await handler(delivery(authorisation())))).toEqual({ status: 500, body: { received: false }, retryAfter: null });
    servePos('success');
    expect((await handler(delivery(authorisation()))).status).toBe(200);
    expect(onAuthorisation).toHaveBeenCalledTimes(1);
  });

  it('passes events the API cannot confirm (unknown codes) to onUnknown without a confirmation', async () => {
    const contexts: unknown[] = [];
    const handler = createWebhookHandler({
      confirm: client({ maxRetries: 0 }),
      onUnknown: (_event, _request, context) => {
        contexts.push(context);
      },
    });
    expect((await handler(delivery(chargeback))).status).toBe(200);
    expect(contexts).toEqual([{ key: webhookEventKey(parseWebhook(chargeback)), transaction: expect.any(Function) }]);
  });

  it('types the confirmation by event and accepts a PaymentClient', () => {
    expectTypeOf<PaymentClient>().toExtend<WebhookConfirmer>();
    createWebhookHandler({
      confirm: client(),
      onAuthorisation: (event, _request, context) => {
        expectTypeOf(event).toEqualTypeOf<AuthorisationEvent>();
        expectTypeOf(context.confirmed).toEqualTypeOf<ConfirmedPosPayment | ConfirmedSessionPayment | undefined>();
      },
      onRefund: (event, _request, context) => {
        expectTypeOf(event).toEqualTypeOf<RefundEvent>();
        expectTypeOf(context.confirmed).toEqualTypeOf<ConfirmedRefund | undefined>();
      },
      onUnknown: (_event, _request, context) => {
        expectTypeOf(context.key).toEqualTypeOf<string>();
        expectTypeOf(context.confirmed).toEqualTypeOf<undefined>();
      },
    });
    expectTypeOf(webhookEventKey).parameter(0).toEqualTypeOf<WebhookEvent>();
    expectTypeOf<WebhookStore['claim']>().returns.toEqualTypeOf<Promise<WebhookClaim>>();
  });
});
