import { describe, expect, it } from 'vitest';
import type { Environment, PaymentClient } from '../src/index.js';
import { API_KEY, client, listing, respond, seen, success, useMsw, WEBCODE } from './support/msw.js';

useMsw();

const amount = { value: 1050, currency: 'EUR' } as const;
const meta = { cursor: null, hasMore: false, total: 1 };

interface Case {
  name: string;
  method: 'get' | 'post';
  path: string;
  status: number;
  data: unknown;
  call: (client: PaymentClient) => Promise<unknown>;
  /** Query parameters besides webcode (GET) or body fields besides webcode (POST). */
  sent: Record<string, unknown>;
}

/** Every endpoint, with identifiers in the formats of `environment`. */
function casesFor(environment: Environment): Case[] {
  const t = environment === 'test' ? 'T' : '';
  const sessionId = `SHOP1-EXT${t}-1700000000`;
  const paymentReference = `SHOP1-PXT${t}-1`;
  const posPaymentId = `SHOP1-POSX${t}-1700000000`;
  const session = { sessionId, status: 'pending', amount, createdAt: '2026-01-01 10:00:00' };
  const posPayment = { posPaymentId, paymentReference: posPaymentId, poiId: 'V400m-TEST-000001', amount, status: 'success' };
  const modification = { operationReference: `SHOP1-RFX${t}-1`, operationType: 'refund', paymentReference, status: 'success', amount };
  return [
    {
      name: 'sessions.create',
      method: 'post',
      path: '/payment/session',
      status: 201,
      data: { ...session, paymentUrl: 'https://pay.test.invalid/pay-external-test/tok' },
      call: (c) =>
        c.sessions.create({
          amount,
          urlOk: 'https://shop.example/ok',
          urlKo: 'https://shop.example/ko',
          countryCode: 'ES',
          shopperLocale: 'es-ES',
          deliverAt: '2026-02-01T10:00:00Z',
          description: 'Order 42',
          customReference: 'order-42',
          isPreAuth: true,
        }),
      sent: {
        amount,
        urlOk: 'https://shop.example/ok',
        urlKo: 'https://shop.example/ko',
        countryCode: 'ES',
        shopperLocale: 'es-ES',
        deliverAt: '2026-02-01T10:00:00Z',
        description: 'Order 42',
        customReference: 'order-42',
        isPreAuth: true,
      },
    },
    {
      name: 'sessions.retrieve',
      method: 'get',
      path: `/payment/session/${sessionId}`,
      status: 200,
      data: session,
      call: (c) => c.sessions.retrieve(sessionId),
      sent: {},
    },
    {
      name: 'sessions.list',
      method: 'get',
      path: '/payment/sessions',
      status: 200,
      data: listing('payments', [session], meta),
      call: (c) => c.sessions.list({ status: 'completed', take: 10 }).firstPage(),
      sent: { status: 'completed', take: '10' },
    },
    {
      name: 'sessions.listModifications',
      method: 'get',
      path: `/payment/session/${sessionId}/modifications`,
      status: 200,
      data: [modification],
      call: (c) => c.sessions.listModifications(sessionId),
      sent: {},
    },
    {
      name: 'pos.createPayment',
      method: 'post',
      path: '/pos/payment',
      status: 200,
      data: posPayment,
      call: (c) =>
        c.pos.createPayment({ poiId: 'V400m-TEST-000001', amount, description: 'Table 4', customReference: 't4', isPreAuth: false }),
      sent: { poiId: 'V400m-TEST-000001', amount, description: 'Table 4', customReference: 't4', isPreAuth: false },
    },
    {
      name: 'pos.list',
      method: 'get',
      path: '/pos/payments',
      status: 200,
      data: listing('posPayments', [posPayment], meta),
      call: (c) =>
        c.pos
          .list({
            status: 'timeout',
            createdAtStart: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
            createdAtEnd: '2026-01-03',
            order: 'desc',
            take: 5,
          })
          .firstPage(),
      sent: { status: 'timeout', created_at_start: '2026-01-02 03:04:05', created_at_end: '2026-01-03', order: 'desc', take: '5' },
    },
    {
      name: 'pos.listModifications',
      method: 'get',
      path: `/pos/payment/${posPaymentId}/modifications`,
      status: 200,
      data: { modifications: [modification] },
      call: (c) => c.pos.listModifications(posPaymentId),
      sent: {},
    },
    {
      name: 'modifications.refund',
      method: 'post',
      path: '/payment/refund',
      status: 202,
      data: {
        refundReference: `SHOP1-RFX${t}-1`,
        paymentReference: paymentReference,
        amount,
        status: 'pending',
        createdAt: '2026-01-01 10:00:00',
      },
      call: (c) => c.modifications.refund({ paymentReference: paymentReference, amount, reason: 'Damaged' }),
      sent: { paymentReference: paymentReference, amount, reason: 'Damaged' },
    },
    {
      name: 'modifications.capture',
      method: 'post',
      path: '/payment/capture',
      status: 202,
      data: { captureReference: 'SHOP1-CTX-1', paymentReference: paymentReference, amount, status: 'received' },
      call: (c) => c.modifications.capture({ paymentReference: paymentReference, amount }),
      sent: { paymentReference: paymentReference, amount },
    },
    {
      name: 'modifications.cancel',
      method: 'post',
      path: '/payment/cancel',
      status: 202,
      data: { cancelReference: 'SHOP1-CAX-1', paymentReference: paymentReference, status: 'received' },
      call: (c) => c.modifications.cancel({ paymentReference: paymentReference }),
      sent: { paymentReference: paymentReference },
    },
    {
      name: 'modifications.extend',
      method: 'post',
      path: '/payment/extend',
      status: 200,
      data: { paymentReference: paymentReference, status: 'received' },
      call: (c) => c.modifications.extend({ paymentReference: paymentReference }),
      sent: { paymentReference: paymentReference },
    },
    {
      name: 'modifications.list',
      method: 'get',
      path: '/modifications',
      status: 200,
      data: listing('modifications', [modification], meta),
      call: (c) => c.modifications.list({ type: 'refund', status: 'success', take: 20 }).firstPage(),
      sent: { type: 'refund', status: 'success', take: '20' },
    },
    {
      name: 'terminals.list',
      method: 'get',
      path: '/pos/terminals',
      status: 200,
      data: [{ poiId: 'V400m-TEST-000001', status: 'boarded', name: 'Terminal Test 1 - Mostrador', model: 'V400m' }],
      call: (c) => c.terminals.list({ syncFromProvider: true }),
      sent: { syncFromProvider: 'true' },
    },
  ];
}

const session = { sessionId: 'SHOP1-EXTT-1700000000', status: 'pending', amount, createdAt: '2026-01-01 10:00:00' };

const prefixes: Record<Environment, string> = { test: '/external/v1/test', live: '/external/v1' };

describe.each(['test', 'live'] as const)('every endpoint in %s', (environment) => {
  it.each(casesFor(environment))('$name sends the documented request and returns data', async (testCase) => {
    respond(testCase.method, prefixes[environment] + testCase.path, () => success(testCase.data as never, testCase.status));
    const result = await testCase.call(client({ environment }));

    expect(seen).toHaveLength(1);
    const [request] = seen;
    if (!request) throw new Error('no request');
    expect(request.method).toBe(testCase.method.toUpperCase());
    expect(request.url.pathname).toBe(prefixes[environment] + testCase.path);
    expect(request.headers.get('x-api-key')).toBe(API_KEY);
    expect(request.headers.get('user-agent')).toMatch(/^payment-service-sdk\/\d+\.\d+\.\d+/);

    if (testCase.method === 'get') {
      expect(request.body).toBe('');
      expect(request.headers.get('idempotency-key')).toBeNull();
      expect(Object.fromEntries(request.url.searchParams)).toEqual({ webcode: WEBCODE, ...testCase.sent });
    } else {
      expect(request.headers.get('content-type')).toBe('application/json');
      expect(request.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
      expect(request.url.search).toBe('');
      expect(JSON.parse(request.body)).toEqual({ webcode: WEBCODE, ...testCase.sent });
    }
    expect(result).toBeTruthy();
  });
});

describe('returned data', () => {
  it('unwraps data from the success envelope', async () => {
    respond('get', '/external/v1/test/payment/session/SHOP1-EXTT-1', () => success({ ...session, sessionId: 'SHOP1-EXTT-1' }));
    const retrieved = await client().sessions.retrieve('SHOP1-EXTT-1');
    expect(retrieved).toEqual({ ...session, sessionId: 'SHOP1-EXTT-1' });
  });

  it('.withResponse() exposes the response and the idempotency key', async () => {
    respond('post', '/external/v1/test/payment/refund', () =>
      success({ refundReference: 'SHOP1-RFXT-9', paymentReference: 'SHOP1-PXTT-1', amount, status: 'pending' }, 202),
    );
    const { data, response, idempotencyKey } = await client()
      .modifications.refund({ paymentReference: 'SHOP1-PXTT-1', amount }, { idempotencyKey: 'order-42-refund-1' })
      .withResponse();
    expect(data.refundReference).toBe('SHOP1-RFXT-9');
    expect(response.status).toBe(202);
    expect(idempotencyKey).toBe('order-42-refund-1');
    expect(seen[0]?.headers.get('idempotency-key')).toBe('order-42-refund-1');
  });

  it('encodes path ids', async () => {
    respond('get', '/external/v1/test/payment/session/:id', () => success(session));
    await client().sessions.retrieve('A/B?C');
    expect(seen[0]?.url.pathname).toBe('/external/v1/test/payment/session/A%2FB%3FC');
  });

  it('keeps a path prefix of baseUrl', async () => {
    respond('get', '/gateway/external/v1/test/pos/terminals', () => success([]));
    await client({ baseUrl: 'https://pay.test.invalid/gateway/' }).terminals.list();
    expect(seen[0]?.url.pathname).toBe('/gateway/external/v1/test/pos/terminals');
  });
});
