/**
 * End-to-end: the SDK against the sandbox over real HTTP on 127.0.0.1, for every endpoint and every
 * Test simulation of the service reference; raw requests where the SDK refuses client-side. The
 * in-process adapters (`handle`, msw `handlers`) are in the last sections.
 */
import type { RequestHandler } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeRedirectData,
  IdempotencyConflictError,
  InvalidRequestError,
  NotFoundError,
  PaymentClient,
  PermissionDeniedError,
  RedirectDataError,
  TerminalBusyError,
  TerminalCommunicationError,
} from '../../src/index.js';
import { createSandbox, type ManualClock, manualClock } from '../../src/sandbox/index.js';
import {
  clientFor,
  failureOf,
  ISO_Z,
  openPage,
  paidSession,
  RECORD_TIMESTAMP,
  raw,
  type Started,
  sessionParams,
  submitForm,
  tick,
  URL_KO,
  URL_OK,
  useSandboxes,
} from './support.js';

const _START = Date.UTC(2026, 0, 1); // manualClock's default start
const EUR = (value: number) => ({ value, currency: 'EUR' as const });

const { start, adopt } = useSandboxes();

describe('every endpoint: documented success status and envelope', () => {
  it('answers the 13 endpoints with their success statuses and { success: true, data }', async () => {
    const clock = manualClock();
    const { sandbox } = await start({ clock });
    const ok = (result: { status: number; body: { success?: unknown; data?: unknown } }, status: number) => {
      expect(result.status).toBe(status);
      expect(result.body.success).toBe(true);
      expect(result.body.data).toBeDefined();
    };
    const create = (isPreAuth: boolean) => raw(sandbox, 'POST', '/payment/session', { body: { ...sessionParams, isPreAuth } });
    const pay = async (isPreAuth: boolean) => {
      const created = await create(isPreAuth);
      ok(created, 201);
      expect(created.headers.get('content-type')).toMatch(/^application\/json/);
      const answer = await submitForm(created.body.data.paymentUrl);
      expect(answer.target?.startsWith(URL_OK)).toBe(true);
      const session = await raw(sandbox, 'GET', `/payment/session/${created.body.data.sessionId}`);
      ok(session, 200);
      return session.body.data as { sessionId: string; paymentReference: string };
    };

    const sale = await pay(false);
    ok(await raw(sandbox, 'GET', '/payment/sessions'), 200);
    ok(
      await raw(sandbox, 'POST', '/payment/refund', { body: { paymentReference: sale.paymentReference, amount: EUR(100), reason: 'r' } }),
      202,
    );
    const preAuth1 = await pay(true);
    ok(await raw(sandbox, 'POST', '/payment/capture', { body: { paymentReference: preAuth1.paymentReference, amount: EUR(100) } }), 202);
    const preAuth2 = await pay(true);
    ok(await raw(sandbox, 'POST', '/payment/cancel', { body: { paymentReference: preAuth2.paymentReference } }), 202);
    const preAuth3 = await pay(true);
    const extended = await raw(sandbox, 'POST', '/payment/extend', { body: { paymentReference: preAuth3.paymentReference } });
    // The reference does not state the status of extend: any 2xx with the success envelope.
    expect(extended.status).toBeGreaterThanOrEqual(200);
    expect(extended.status).toBeLessThan(300);
    expect(extended.body.success).toBe(true);
    ok(await raw(sandbox, 'GET', `/payment/session/${sale.sessionId}/modifications`), 200);
    ok(await raw(sandbox, 'GET', '/modifications'), 200);
    ok(await raw(sandbox, 'GET', '/pos/terminals'), 200);
    const pos = await raw(sandbox, 'POST', '/pos/payment', { body: { poiId: 'V400m-TEST-000001', amount: EUR(1000) } });
    ok(pos, 200);
    ok(await raw(sandbox, 'GET', `/pos/payment/${pos.body.data.posPaymentId}/modifications`), 200);
    ok(await raw(sandbox, 'GET', '/pos/payments'), 200);
  });

  it('answers failures with { success: false, error: { message, code, statusCode, traceId } }', async () => {
    const { sandbox } = await start();
    const result = await raw(sandbox, 'POST', '/payment/session', { body: { urlOk: URL_OK, urlKo: URL_KO } });
    expect(result.status).toBe(400);
    const error = failureOf(result);
    expect(error).toEqual({ message: expect.any(String), code: 12001, statusCode: 400, traceId: expect.any(String) });
    expect(error.traceId).not.toBe('');
  });
});

describe('online payments (Test)', () => {
  let ctx: Started;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = manualClock();
    ctx = await start({ clock });
  });

  it('creates a pending session with the documented record and identifier formats', async () => {
    const { data, response } = await ctx.test.sessions.create({ ...sessionParams }).withResponse();
    expect(response.status).toBe(201);
    expect(data.sessionId).toMatch(new RegExp(`^${ctx.sandbox.webcode}-EXTT-\\d+$`));
    expect(data.paymentUrl).toMatch(new RegExp(`^${ctx.baseUrl}/pay-external-test/[^/]+$`));
    expect(data).toMatchObject({
      status: 'pending',
      amount: { value: 2599, currency: 'EUR' },
      description: 'Order 42',
      customReference: 'order-42',
      isPreAuth: false,
      createdAt: '2026-01-01 00:00:00',
    });

    const session = await ctx.test.sessions.retrieve(data.sessionId);
    expect(session).toMatchObject({
      sessionId: data.sessionId,
      status: 'pending',
      amount: { value: 2599, currency: 'EUR' },
      countryCode: 'ES',
      shopperLocale: 'es-ES',
      description: 'Order 42',
      customReference: 'order-42',
      isPreAuth: false,
      urlOk: URL_OK,
      urlKo: URL_KO,
      createdAt: '2026-01-01 00:00:00',
    });
    expect(session.paymentReference ?? undefined).toBeUndefined();
    expect(session.completedAt ?? undefined).toBeUndefined();
  });

  it('keeps the optional fields as sent', async () => {
    const created = await ctx.test.sessions.create({
      ...sessionParams,
      countryCode: 'FR',
      shopperLocale: 'fr-FR',
      deliverAt: '2026-02-01T10:00:00Z',
      isPreAuth: true,
    });
    expect(created.isPreAuth).toBe(true);
    const session = await ctx.test.sessions.retrieve(created.sessionId);
    expect(session).toMatchObject({ countryCode: 'FR', shopperLocale: 'fr-FR', isPreAuth: true });
  });

  it('completes on payment: redirect to urlOk with data decoded by the Test client secret', async () => {
    const created = await ctx.test.sessions.create({ ...sessionParams });
    const page = await openPage(created.paymentUrl);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<form');
    expect((await ctx.test.sessions.retrieve(created.sessionId)).status).toBe('pending');

    const answer = await submitForm(created.paymentUrl);
    // A 303 straight to urlOk: a completed payment needs no page (and no Refresh, no meta refresh).
    expect(answer.status).toBe(303);
    expect(answer.headers.get('refresh')).toBeNull();
    const target = new URL(answer.target ?? '');
    expect(`${target.origin}${target.pathname}`).toBe(URL_OK);
    const token = target.searchParams.get('data') ?? '';
    const data = await decodeRedirectData(token, ctx.sandbox.clientSecrets.test);

    const session = await ctx.test.sessions.retrieve(created.sessionId);
    expect(session.status).toBe('completed');
    expect(session.paymentReference).toMatch(new RegExp(`^${ctx.sandbox.webcode}-PXTT-\\d+$`));
    expect(session.paymentStatus).toBe('AUTHORISED');
    expect(session.completedAt).toMatch(RECORD_TIMESTAMP);
    expect(session.attempts).toEqual([
      { paymentReference: session.paymentReference, status: 'authorised', createdAt: expect.stringMatching(RECORD_TIMESTAMP) },
    ]);
    expect(data).toMatchObject({ paymentReference: session.paymentReference, customReference: 'order-42' });
    const amount = typeof data.amount === 'object' && data.amount !== null ? data.amount.value : data.amount;
    expect(amount).toBe(2599);

    // Not forgeable without the secret: the Live secret does not verify it.
    await expect(decodeRedirectData(token, ctx.sandbox.clientSecrets.live)).rejects.toBeInstanceOf(RedirectDataError);

    // Completed never changes again, whatever the page receives next.
    const again = await submitForm(created.paymentUrl, { holderName: 'DECLINED' });
    expect(again.target?.startsWith(URL_OK)).toBe(true);
    await submitForm(created.paymentUrl, { action: 'cancel' });
    const after = await ctx.test.sessions.retrieve(created.sessionId);
    expect(after.status).toBe('completed');
    expect(after.paymentReference).toBe(session.paymentReference);

    const listed = await ctx.test.sessions.list({ status: 'completed' }).toArray();
    expect(listed.find((item) => item.sessionId === created.sessionId)).toMatchObject({
      status: 'completed',
      paymentReference: session.paymentReference,
      paymentStatus: 'AUTHORISED',
      completedAt: expect.stringMatching(RECORD_TIMESTAMP),
      createdAt: expect.stringMatching(RECORD_TIMESTAMP),
    });
  });

  it.each(['DECLINED', 'declined', 'CARD_EXPIRED', 'INVALID_CARD', 'NOT_ENOUGH_BALANCE', 'CVC_DECLINED', 'Fraud', 'ERROR'])(
    'fails for cardholder %s: redirect to urlKo without data',
    async (holderName) => {
      const created = await ctx.test.sessions.create({ ...sessionParams });
      const answer = await submitForm(created.paymentUrl, { holderName });
      expect(answer.target).toBe(URL_KO);
      expect(new URL(answer.target ?? '').searchParams.has('data')).toBe(false);
      const session = await ctx.test.sessions.retrieve(created.sessionId);
      expect(session.status).toBe('failed');
      expect(session.paymentReference ?? undefined).toBeUndefined();
    },
  );

  it('cancels when the customer cancels: redirect to urlKo', async () => {
    const created = await ctx.test.sessions.create({ ...sessionParams });
    const answer = await submitForm(created.paymentUrl, { action: 'cancel' });
    expect(answer.target).toBe(URL_KO);
    expect((await ctx.test.sessions.retrieve(created.sessionId)).status).toBe('cancelled');
  });

  it('answers 422 with the form and a message per field for invalid card data; the session stays pending', async () => {
    // An English-speaking shopper: the page follows shopperLocale (the default, es-ES, is Spanish).
    const created = await ctx.test.sessions.create({ ...sessionParams, shopperLocale: 'en-GB' });
    const answer = await submitForm(created.paymentUrl, {
      cardNumber: '4111111111111112', // fails the Luhn check
      expiryMonth: '13',
      cvc: '12',
      holderName: 'Jo',
    });
    expect(answer.status).toBe(422);
    expect(answer.target).toBeUndefined();
    expect(answer.html).toContain('<form');
    expect(answer.html).toMatch(/card number is not valid/i);
    expect(answer.html).toMatch(/expiry month/i);
    expect(answer.html).toMatch(/security code/i);
    expect(answer.html).toMatch(/cardholder name/i);
    expect((await ctx.test.sessions.retrieve(created.sessionId)).status).toBe('pending');

    for (const fields of [{ cardNumber: '411111111111' }, { expiryYear: '20' }, { cvc: '1234' }]) {
      expect((await submitForm(created.paymentUrl, fields)).status).toBe(422);
    }
    // An Amex number needs 4 digits of CVC.
    expect((await submitForm(created.paymentUrl, { cardNumber: '378282246310005', cvc: '123' })).status).toBe(422);
    expect((await ctx.test.sessions.retrieve(created.sessionId)).status).toBe('pending');
    // And it can still be paid.
    expect((await submitForm(created.paymentUrl, { cardNumber: '378282246310005', cvc: '1234' })).target?.startsWith(URL_OK)).toBe(true);
  });

  it('expires 300 s after the customer first opens paymentUrl, on the injectable clock', async () => {
    const created = await ctx.test.sessions.create({ ...sessionParams });
    const never = await ctx.test.sessions.create({ ...sessionParams });
    // The countdown starts at the first opening, not at creation.
    await clock.advance(1_000_000);
    expect((await ctx.test.sessions.retrieve(created.sessionId)).status).toBe('pending');
    await openPage(created.paymentUrl);
    await clock.advance(299_000);
    expect((await ctx.test.sessions.retrieve(created.sessionId)).status).toBe('pending');
    // Reopening does not restart the countdown.
    await openPage(created.paymentUrl);
    await clock.advance(1_000);
    expect((await ctx.test.sessions.retrieve(created.sessionId)).status).toBe('expired');

    const late = await submitForm(created.paymentUrl);
    expect(late.target).toBe(URL_KO);
    expect((await openPage(created.paymentUrl)).target).toBe(URL_KO);
    const session = await ctx.test.sessions.retrieve(created.sessionId);
    expect(session.status).toBe('expired');
    expect(session.paymentReference ?? undefined).toBeUndefined();
    const expired = await ctx.test.sessions.list({ status: 'expired' }).toArray();
    expect(expired.map((item) => item.sessionId)).toContain(created.sessionId);

    // Never opened: pending indefinitely.
    await clock.advance(86_400_000);
    expect((await ctx.test.sessions.retrieve(never.sessionId)).status).toBe('pending');
  });

  it('answers 404 for an unknown session (sandbox choice)', async () => {
    const result = await raw(ctx.sandbox, 'GET', `/payment/session/${ctx.sandbox.webcode}-EXTT-1`);
    expect(result.status).toBe(404);
    expect(failureOf(result).statusCode).toBe(404);
    await expect(ctx.test.sessions.retrieve(`${ctx.sandbox.webcode}-EXTT-1`)).rejects.toBeInstanceOf(NotFoundError);
    const unknown = `${ctx.sandbox.webcode}-EXTT-2`;
    await expect(ctx.test.sessions.listModifications(unknown)).rejects.toMatchObject({
      name: 'NotFoundError',
      code: 19404,
      message: `sessionId does not name a session of this webcode in Test: ${unknown} not found`,
    });
  });
});

describe('Live environment', () => {
  it('uses the Live identifier formats, /pay-external/, and the Live client secret; data is isolated', async () => {
    const ctx = await start();
    const { sandbox, live, test } = ctx;
    const created = await live.sessions.create({ ...sessionParams, isPreAuth: true });
    expect(created.sessionId).toMatch(new RegExp(`^${sandbox.webcode}-EXT-\\d+$`));
    expect(created.paymentUrl).toMatch(new RegExp(`^${ctx.baseUrl}/pay-external/[^/]+$`));
    const answer = await submitForm(created.paymentUrl);
    const token = new URL(answer.target ?? '').searchParams.get('data') ?? '';
    const data = await decodeRedirectData(token, sandbox.clientSecrets.live);
    await expect(decodeRedirectData(token, sandbox.clientSecrets.test)).rejects.toBeInstanceOf(RedirectDataError);
    const session = await live.sessions.retrieve(created.sessionId);
    expect(session.paymentReference).toMatch(new RegExp(`^${sandbox.webcode}-PXT-\\d+$`));
    expect(data.paymentReference).toBe(session.paymentReference);

    const capture = await live.modifications.capture({ paymentReference: session.paymentReference ?? '', amount: EUR(1000) });
    expect(capture.captureReference).toMatch(new RegExp(`^${sandbox.webcode}-CTX-\\d+$`));
    const refund = await live.modifications.refund({ paymentReference: session.paymentReference ?? '', amount: EUR(500), reason: 'x' });
    expect(refund.refundReference).toMatch(new RegExp(`^${sandbox.webcode}-RFX-\\d+$`));
    const other = await paidSession(live, { isPreAuth: true });
    const cancel = await live.modifications.cancel({ paymentReference: other.paymentReference });
    expect(cancel.cancelReference).toMatch(new RegExp(`^${sandbox.webcode}-CAX-\\d+$`));
    const pos = await live.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1000) });
    expect(pos.posPaymentId).toMatch(new RegExp(`^${sandbox.webcode}-POSX-\\d+$`));

    // Isolation: Test does not see Live records.
    expect((await raw(sandbox, 'GET', `/payment/session/${created.sessionId}`)).status).toBe(404);
    expect((await test.sessions.list().firstPage()).total).toBe(0);
    expect((await test.pos.list().firstPage()).total).toBe(0);
    expect((await test.modifications.list().firstPage()).total).toBe(0);
    expect((await live.modifications.list().firstPage()).total).toBe(3);
  });
});

describe('authentication', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start({
      extraKeys: [
        { key: 'sk_test_far', environment: 'test', ipAllowList: ['10.1.2.3'] },
        { key: 'sk_test_near', environment: 'test', ipAllowList: ['10.1.2.3', '127.0.0.1'] },
        { key: 'sk_test_other', environment: 'test', webcode: 'OTHER1' },
      ],
    });
  });

  const expect11008 = (result: Awaited<ReturnType<typeof raw>>) => {
    expect(result.status).toBe(403);
    expect(failureOf(result)).toMatchObject({ code: 11008, statusCode: 403 });
  };

  it('answers 403 / 11008 for a missing key, on GET and POST', async () => {
    expect11008(await raw(ctx.sandbox, 'GET', '/pos/terminals', { key: null }));
    expect11008(await raw(ctx.sandbox, 'POST', '/payment/session', { key: null, body: { ...sessionParams } }));
    expect(ctx.sandbox.records.sessions()).toHaveLength(0);
  });

  it('answers 403 / 11008 for an unknown key', async () => {
    expect11008(await raw(ctx.sandbox, 'GET', '/payment/sessions', { key: 'sk_test_nope' }));
  });

  it('answers 403 / 11008 for a key of one environment on the other environment paths', async () => {
    expect11008(await raw(ctx.sandbox, 'GET', '/payment/sessions', { env: 'test', key: ctx.sandbox.keys.live }));
    expect11008(await raw(ctx.sandbox, 'GET', '/payment/sessions', { env: 'live', key: ctx.sandbox.keys.test }));
    expect11008(
      await raw(ctx.sandbox, 'POST', '/payment/session', { env: 'live', key: ctx.sandbox.keys.test, body: { ...sessionParams } }),
    );
    // Through the SDK: a Test key on a Live client.
    const wrong = new PaymentClient({
      apiKey: ctx.sandbox.keys.test,
      webcode: ctx.sandbox.webcode,
      baseUrl: ctx.baseUrl,
      environment: 'live',
      maxRetries: 0,
    });
    const error = await wrong.terminals.list().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect((error as PermissionDeniedError).code).toBe(11008);
    expect(ctx.sandbox.records.sessions()).toHaveLength(0);
  });

  it('answers 403 / 11008 for a webcode that does not match the key (query and body)', async () => {
    expect11008(await raw(ctx.sandbox, 'GET', '/pos/terminals', { webcode: 'OTHER1' }));
    expect11008(await raw(ctx.sandbox, 'POST', '/payment/session', { webcode: 'OTHER1', body: { ...sessionParams } }));
    expect11008(await raw(ctx.sandbox, 'GET', '/pos/terminals', { key: 'sk_test_other' }));
    const mismatched = clientFor(ctx.sandbox, 'test', { webcode: 'WRONG' });
    await expect(mismatched.sessions.list().firstPage()).rejects.toMatchObject({ name: 'PermissionDeniedError', status: 403, code: 11008 });
    // The key bound to OTHER1 works with OTHER1.
    expect((await raw(ctx.sandbox, 'GET', '/pos/terminals', { key: 'sk_test_other', webcode: 'OTHER1' })).status).toBe(200);
  });

  it('answers 403 / 19403 (sandbox choice) for a client address outside the key allow-list', async () => {
    const result = await raw(ctx.sandbox, 'GET', '/pos/terminals', { key: 'sk_test_far' });
    expect(result.status).toBe(403);
    const error = failureOf(result);
    expect(error.code).toBe(19403);
    expect(error.statusCode).toBe(403);
    const sdk = clientFor(ctx.sandbox, 'test', { apiKey: 'sk_test_far' });
    const caught = await sdk.terminals.list().catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(PermissionDeniedError);
    expect((caught as PermissionDeniedError).code).toBe(19403);
    // 127.0.0.1 in the list: allowed.
    expect(await clientFor(ctx.sandbox, 'test', { apiKey: 'sk_test_near' }).terminals.list()).toHaveLength(3);
  });
});

describe('validation', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });

  const session = (body: Record<string, unknown>) => raw(ctx.sandbox, 'POST', '/payment/session', { body: { ...sessionParams, ...body } });
  const expectInvalid = async (promise: Promise<Awaited<ReturnType<typeof raw>>>, code: number, field: RegExp) => {
    const result = await promise;
    expect(result.status).toBe(400);
    const error = failureOf(result);
    expect(error.code).toBe(code);
    expect(error.statusCode).toBe(400);
    expect(error.message).toMatch(field);
  };

  it('answers 12001 naming the field for a missing or invalid value', async () => {
    await expectInvalid(session({ amount: undefined }), 12001, /amount/);
    await expectInvalid(session({ amount: { value: 100 } }), 12001, /currency/);
    await expectInvalid(session({ amount: { value: 100, currency: 'JPY' } }), 12001, /currency/);
    await expectInvalid(session({ amount: { value: 100, currency: 'eur' } }), 12001, /currency/);
    await expectInvalid(session({ amount: { value: 10.5, currency: 'EUR' } }), 12001, /amount\.value/);
    await expectInvalid(session({ urlOk: undefined }), 12001, /urlOk/);
    await expectInvalid(session({ urlKo: 'not a url' }), 12001, /urlKo/);
    await expectInvalid(session({ description: 'd'.repeat(256) }), 12001, /description/);
    await expectInvalid(session({ customReference: 'c'.repeat(101) }), 12001, /customReference/);
    await expectInvalid(session({ shopperLocale: 'es-ES-x-abcdef' }), 12001, /shopperLocale/);
    await expectInvalid(session({ isPreAuth: 'yes' }), 12001, /isPreAuth/);
    // The limits themselves are accepted.
    expect((await session({ description: 'd'.repeat(255), customReference: 'c'.repeat(100) })).status).toBe(201);
    expect(ctx.sandbox.records.sessions()).toHaveLength(1);
  });

  it('answers 12002 for a deliverAt not in ISO 8601', async () => {
    await expectInvalid(session({ deliverAt: 'tomorrow' }), 12002, /deliverAt/);
    await expectInvalid(session({ deliverAt: '01/02/2026 10:00' }), 12002, /deliverAt/);
    expect((await session({ deliverAt: '2026-02-01T10:00:00+01:00' })).status).toBe(201);
  });

  it('answers 12006 for a malformed countryCode and 12009 for an unsupported country', async () => {
    await expectInvalid(session({ countryCode: 'ESP' }), 12006, /countryCode/);
    await expectInvalid(session({ countryCode: 'es' }), 12006, /countryCode/);
    await expectInvalid(session({ countryCode: 'ZZ' }), 12009, /ZZ|country/i);
    // Through the SDK, which lets a well-formed code through to the service.
    const error = await ctx.test.sessions.create({ ...sessionParams, countryCode: 'ZZ' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).code).toBe(12009);
  });

  it('answers 12001 for invalid POS parameters', async () => {
    const pos = (body: Record<string, unknown>) =>
      raw(ctx.sandbox, 'POST', '/pos/payment', { body: { poiId: 'V400m-TEST-000001', amount: EUR(1000), ...body } });
    await expectInvalid(pos({ poiId: undefined }), 12001, /poiId/);
    await expectInvalid(pos({ amount: { value: 0, currency: 'EUR' } }), 12001, /amount/);
    await expectInvalid(pos({ amount: { value: -5, currency: 'EUR' } }), 12001, /amount/);
    await expectInvalid(pos({ amount: { value: 1000, currency: 'CHF' } }), 12001, /currency/);
    await expectInvalid(pos({ description: 'd'.repeat(256) }), 12001, /description/);
    expect(ctx.sandbox.records.posPayments()).toHaveLength(0);
  });

  it('answers 12001 for a body that is not JSON (sandbox choice)', async () => {
    const result = await raw(ctx.sandbox, 'POST', '/payment/session', { rawBody: '{not json' });
    expect(result.status).toBe(400);
    expect(failureOf(result).code).toBe(12001);
  });
});

describe('idempotency', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });

  it('replays the stored response for the same key and body without running the operation again', async () => {
    const first = await ctx.test.sessions.create({ ...sessionParams }, { idempotencyKey: 'order-1-try-1' }).withResponse();
    const count = ctx.sandbox.records.counts().sessions;
    const second = await ctx.test.sessions.create({ ...sessionParams }, { idempotencyKey: 'order-1-try-1' }).withResponse();
    expect(second.response.status).toBe(201);
    expect(second.data).toEqual(first.data);
    expect(ctx.sandbox.records.sessions()).toHaveLength(count);
    // Raw: same body in another key order is the same request (sandbox choice).
    const reordered = await raw(ctx.sandbox, 'POST', '/payment/session', {
      idempotencyKey: 'order-1-try-1',
      rawBody: JSON.stringify({
        urlKo: URL_KO,
        customReference: 'order-42',
        description: 'Order 42',
        urlOk: URL_OK,
        amount: { currency: 'EUR', value: 2599 },
        webcode: ctx.sandbox.webcode,
      }),
    });
    expect(reordered.status).toBe(201);
    expect(reordered.body.data.sessionId).toBe(first.data.sessionId);
    expect(ctx.sandbox.records.sessions()).toHaveLength(count);
  });

  it('answers 409 with the documented message for the same key and a different body', async () => {
    await ctx.test.sessions.create({ ...sessionParams }, { idempotencyKey: 'k-body' });
    const count = ctx.sandbox.records.counts().sessions;
    const result = await raw(ctx.sandbox, 'POST', '/payment/session', {
      idempotencyKey: 'k-body',
      body: { ...sessionParams, amount: EUR(1) },
    });
    expect(result.status).toBe(409);
    expect(failureOf(result)).toMatchObject({ message: 'Idempotency key reused with a different request body.', statusCode: 409 });
    const error = await ctx.test.sessions
      .create({ ...sessionParams, description: 'other' }, { idempotencyKey: 'k-body' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IdempotencyConflictError);
    expect((error as IdempotencyConflictError).reason).toBe('body-mismatch');
    expect(ctx.sandbox.records.sessions()).toHaveLength(count);
  });

  it('answers 409 with the documented message for the same key on another endpoint', async () => {
    await ctx.test.sessions.create({ ...sessionParams }, { idempotencyKey: 'k-endpoint' });
    const result = await raw(ctx.sandbox, 'POST', '/pos/payment', {
      idempotencyKey: 'k-endpoint',
      body: { poiId: 'V400m-TEST-000001', amount: EUR(1000) },
    });
    expect(result.status).toBe(409);
    expect(failureOf(result)).toMatchObject({ message: 'Idempotency key already used for a different endpoint.', statusCode: 409 });
    const error = await ctx.test.pos
      .createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1000) }, { idempotencyKey: 'k-endpoint' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IdempotencyConflictError);
    expect((error as IdempotencyConflictError).reason).toBe('endpoint-mismatch');
    expect(ctx.sandbox.records.posPayments()).toHaveLength(0);
  });

  it('keeps the records of each environment apart', async () => {
    const before = ctx.sandbox.records.counts().sessions;
    const test = await ctx.test.sessions.create({ ...sessionParams }, { idempotencyKey: 'k-env' });
    const live = await ctx.live.sessions.create({ ...sessionParams }, { idempotencyKey: 'k-env' });
    expect(live.sessionId).not.toBe(test.sessionId);
    expect(live.sessionId).toContain('-EXT-');
    expect(ctx.sandbox.records.sessions()).toHaveLength(before + 2);
    // A key used in Live on one endpoint is free in Test for another endpoint.
    const pos = await ctx.live.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1000) }, { idempotencyKey: 'k-env-2' });
    expect(pos.status).toBe('success');
    const session = await ctx.test.sessions.create({ ...sessionParams }, { idempotencyKey: 'k-env-2' });
    expect(session.sessionId).toContain('-EXTT-');
  });

  it('never charges or refunds twice for a replayed POS payment or refund', async () => {
    const before = ctx.sandbox.records.counts().posPayments;
    const params = { poiId: 'S1F2-TEST-000002', amount: EUR(4200) };
    const first = await ctx.test.pos.createPayment(params, { idempotencyKey: 'pos-once' });
    const second = await ctx.test.pos.createPayment(params, { idempotencyKey: 'pos-once' });
    expect(second).toEqual(first);
    expect(ctx.sandbox.records.posPayments()).toHaveLength(before + 1);

    const refund1 = await ctx.test.modifications.refund(
      { paymentReference: first.posPaymentId, amount: EUR(1000) },
      { idempotencyKey: 'refund-once' },
    );
    const refund2 = await ctx.test.modifications.refund(
      { paymentReference: first.posPaymentId, amount: EUR(1000) },
      { idempotencyKey: 'refund-once' },
    );
    expect(refund2.refundReference).toBe(refund1.refundReference);
    expect(ctx.sandbox.records.modifications().filter((record) => record.paymentReference === first.posPaymentId)).toHaveLength(1);
  });

  it('does not store a failed request, so it may be sent again as it was (sandbox choice)', async () => {
    const bad = await raw(ctx.sandbox, 'POST', '/payment/session', {
      idempotencyKey: 'k-failed',
      body: { ...sessionParams, countryCode: 'ZZ' },
    });
    expect(bad.status).toBe(400);
    const fixed = await raw(ctx.sandbox, 'POST', '/payment/session', { idempotencyKey: 'k-failed', body: { ...sessionParams } });
    expect(fixed.status).toBe(201);
  });
});

describe('POS terminals and payments (Test)', () => {
  let ctx: Started;
  beforeAll(async () => {
    ctx = await start();
  });

  it('lists the three boarded terminals, or the two online ones with syncFromProvider', async () => {
    const all = await ctx.test.terminals.list();
    expect(all.map((terminal) => terminal.poiId)).toEqual(['V400m-TEST-000001', 'S1F2-TEST-000002', 'P400Plus-TEST-000003']);
    expect(all).toEqual([
      expect.objectContaining({ poiId: 'V400m-TEST-000001', name: 'Terminal Test 1 - Mostrador', model: 'V400m', status: 'boarded' }),
      expect.objectContaining({ poiId: 'S1F2-TEST-000002', name: 'Terminal Test 2 - Terraza', model: 'S1F2', status: 'boarded' }),
      expect.objectContaining({ poiId: 'P400Plus-TEST-000003', name: 'Terminal Test 3 - Almacen', model: 'P400Plus', status: 'boarded' }),
    ]);
    for (const terminal of all) {
      expect(terminal.createdAt).toMatch(ISO_Z);
      expect(terminal.updatedAt).toMatch(ISO_Z);
    }
    expect(await ctx.test.terminals.list({ syncFromProvider: false })).toHaveLength(3);
    const online = await ctx.test.terminals.list({ syncFromProvider: true });
    expect(online.map((terminal) => terminal.poiId)).toEqual(['V400m-TEST-000001', 'S1F2-TEST-000002']);
  });

  it('succeeds for an ordinary amount ending, with a pspReference', async () => {
    const { data, response } = await ctx.test.pos
      .createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1234), description: 'Table 4', customReference: 'tab-4', isPreAuth: false })
      .withResponse();
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      poiId: 'V400m-TEST-000001',
      amount: { value: 1234, currency: 'EUR' },
      status: 'success',
      isPreAuth: false,
      description: 'Table 4',
      customReference: 'tab-4',
    });
    expect(data.posPaymentId).toMatch(new RegExp(`^${ctx.sandbox.webcode}-POSXT-\\d+$`));
    expect(data.paymentReference).toBe(data.posPaymentId);
    expect(data.pspReference).toEqual(expect.any(String));
    expect(data.createdAt).toMatch(RECORD_TIMESTAMP);
    expect(data.recovered).toBeUndefined();
    // customReference is present only when it was sent.
    const plain = await raw(ctx.sandbox, 'POST', '/pos/payment', { body: { poiId: 'S1F2-TEST-000002', amount: EUR(500) } });
    expect(plain.body.data.status).toBe('success');
    expect('customReference' in plain.body.data).toBe(false);
  });

  it('fails for an amount ending in 77: 200, failed, declined', async () => {
    const { data, response } = await ctx.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1077) }).withResponse();
    expect(response.status).toBe(200);
    expect(data.status).toBe('failed');
    expect(data.errorMessage).toMatch(/declined/i);
  });

  it('times out for an amount ending in 99: 200, timeout, no pspReference, asynchronous webhook message', async () => {
    const { data, response } = await ctx.test.pos
      .createPayment({ poiId: 'S1F2-TEST-000002', amount: EUR(1099) }, { recover: false })
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.status).toBe('timeout');
    expect(data.pspReference ?? undefined).toBeUndefined();
    expect(data.errorMessage).toMatch(/asynchronously via webhook/i);
  });

  it('answers 409 / 13005 (terminal busy) for an amount ending in 55', async () => {
    const result = await raw(ctx.sandbox, 'POST', '/pos/payment', { body: { poiId: 'V400m-TEST-000001', amount: EUR(1055) } });
    expect(result.status).toBe(409);
    expect(failureOf(result)).toMatchObject({ code: 13005, statusCode: 409 });
    await expect(ctx.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(2055) })).rejects.toBeInstanceOf(TerminalBusyError);
  });

  it('answers 400 / 12001 for a poiId outside the simulated list', async () => {
    const result = await raw(ctx.sandbox, 'POST', '/pos/payment', { body: { poiId: 'X-UNKNOWN-1', amount: EUR(1000) } });
    expect(result.status).toBe(400);
    const error = failureOf(result);
    expect(error.code).toBe(12001);
    expect(error.message).toMatch(/terminal|device not found/i);
    await expect(ctx.test.pos.createPayment({ poiId: 'X-UNKNOWN-1', amount: EUR(1000) })).rejects.toMatchObject({
      name: 'InvalidRequestError',
      code: 12001,
    });
  });

  it('answers 502 / 13004 "Error in POS payment response: Reject" for the offline terminal', async () => {
    const result = await raw(ctx.sandbox, 'POST', '/pos/payment', { body: { poiId: 'P400Plus-TEST-000003', amount: EUR(1000) } });
    expect(result.status).toBe(502);
    expect(failureOf(result)).toMatchObject({ code: 13004, statusCode: 502, message: 'Error in POS payment response: Reject' });
    const error = await ctx.test.pos.createPayment({ poiId: 'P400Plus-TEST-000003', amount: EUR(1000) }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TerminalCommunicationError);
  });

  it('lets the SDK recover a timeout into the final status once the payment completes later', async () => {
    const other = await start({ posTimeoutResolveMs: 150 });
    const result = await other.test.pos.createPayment(
      { poiId: 'V400m-TEST-000001', amount: EUR(3099) },
      { recover: { initialDelayMs: 0, pollIntervalMs: 50, maxWaitMs: 3_000 } },
    );
    expect(result.status).toBe('success');
    expect(result.recovered).toBe(true);
    expect(result.pspReference).toEqual(expect.any(String));
    expect(other.sandbox.records.posPayments()).toHaveLength(1);
  });

  it('resolves a timeout after posTimeoutResolveMs on the clock; GET /pos/payments shows the final status', async () => {
    const clock = manualClock();
    const other = await start({ clock, posTimeoutResolveMs: 5_000 });
    const { data: payment, idempotencyKey: sentKey } = await other.test.pos
      .createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(4599) }, { recover: false })
      .withResponse();
    const key = sentKey ?? '';
    expect(key).not.toBe('');
    expect(payment.status).toBe('timeout');
    const find = async () => (await other.test.pos.list().toArray()).find((item) => item.posPaymentId === payment.posPaymentId);
    expect((await find())?.status).toBe('timeout');
    await clock.advance(4_999);
    expect((await find())?.status).toBe('timeout');
    await clock.advance(1);
    const final = await find();
    expect(final?.status).toBe('success');
    expect(final?.pspReference).toEqual(expect.any(String));
    // The SDK's wait confirms it from the listing.
    const waited = await other.test.pos.waitForFinalStatus(payment.posPaymentId, { pollIntervalMs: 10, maxWaitMs: 1_000 });
    expect(waited.status).toBe('success');
    // Resending with the charge's key returns the stored response, as documented, and charges nothing.
    const replay = await other.test.pos.createPayment(
      { poiId: 'V400m-TEST-000001', amount: EUR(4599) },
      { recover: false, idempotencyKey: key },
    );
    expect(replay).toMatchObject({ posPaymentId: payment.posPaymentId, status: 'timeout' });
    expect(other.sandbox.records.posPayments()).toHaveLength(1);
  });

  it('delays the answer 2 to 3 s by default, listing the payment as pending meanwhile', async () => {
    const clock = manualClock();
    const sandbox = createSandbox({ clock });
    adopt(sandbox);
    const request = (path: string, init: RequestInit = {}) =>
      sandbox.handle(
        new Request(`${sandbox.baseUrl}/external/v1/test${path}`, {
          ...init,
          headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json' },
        }),
      );
    let settled: Response | undefined;
    const pending = request('/pos/payment', {
      method: 'POST',
      body: JSON.stringify({ webcode: sandbox.webcode, poiId: 'V400m-TEST-000001', amount: EUR(1000) }),
    }).then((response) => {
      settled = response;
      return response;
    });
    for (let index = 0; index < 2_000 && sandbox.records.counts().posPayments === 0; index++) await tick();
    expect(sandbox.records.posPayments()).toHaveLength(1);
    const listed = (await (await request(`/pos/payments?webcode=${sandbox.webcode}&status=pending`)).json()) as {
      data: { meta: { total: number } };
    };
    expect(listed.data.meta.total).toBe(1);
    // The terminal is busy meanwhile (sandbox choice).
    const busy = await request('/pos/payment', {
      method: 'POST',
      body: JSON.stringify({ webcode: sandbox.webcode, poiId: 'V400m-TEST-000001', amount: EUR(2000) }),
    });
    expect(busy.status).toBe(409);
    await clock.advance(1_999);
    await tick();
    expect(settled).toBeUndefined();
    await clock.advance(1_001);
    const response = await pending;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: { status: string } }).data.status).toBe('success');
  });

  it('waits the configured posDelayMs on the real clock', async () => {
    const other = await start({ posDelayMs: 150 });
    const began = Date.now();
    await other.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1000) });
    expect(Date.now() - began).toBeGreaterThanOrEqual(140);
  });
});

describe('modifications', () => {
  let ctx: Started;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = manualClock();
    ctx = await start({ clock });
  });

  it('refunds an online payment: 202 pending, then success in the session and global listings', async () => {
    const paid = await paidSession(ctx.test);
    const { data, response } = await ctx.test.modifications
      .refund({ paymentReference: paid.paymentReference, amount: EUR(599), reason: 'Damaged item' })
      .withResponse();
    expect(response.status).toBe(202);
    expect(data).toEqual({
      refundReference: expect.stringMatching(new RegExp(`^${ctx.sandbox.webcode}-RFXT-\\d+$`)),
      paymentReference: paid.paymentReference,
      amount: { value: 599, currency: 'EUR' },
      status: 'pending',
      createdAt: expect.stringMatching(RECORD_TIMESTAMP),
    });
    const bySession = await ctx.test.sessions.listModifications(paid.sessionId);
    expect(bySession).toEqual([
      expect.objectContaining({
        operationReference: data.refundReference,
        operationType: 'refund',
        paymentReference: paid.paymentReference,
        sessionId: paid.sessionId,
        status: 'pending',
        amount: { value: 599, currency: 'EUR' },
        reason: 'Damaged item',
        requestedAt: expect.stringMatching(RECORD_TIMESTAMP),
        createdAt: expect.stringMatching(RECORD_TIMESTAMP),
      }),
    ]);

    await clock.advance(1_000);
    const resolved = await ctx.test.sessions.listModifications(paid.sessionId);
    expect(resolved[0]).toMatchObject({ status: 'success', resolvedAt: expect.stringMatching(RECORD_TIMESTAMP) });
    const global = await ctx.test.modifications.list({ type: 'refund', status: 'success' }).toArray();
    expect(global.map((record) => record.operationReference)).toContain(data.refundReference);
  });

  it('captures, extends and cancels pre-authorisations with the documented acknowledgements', async () => {
    const first = await paidSession(ctx.test, { isPreAuth: true });
    const capture = await ctx.test.modifications.capture({ paymentReference: first.paymentReference, amount: EUR(1000) }).withResponse();
    expect(capture.response.status).toBe(202);
    expect(capture.data).toEqual({
      captureReference: expect.stringMatching(new RegExp(`^${ctx.sandbox.webcode}-[A-Z]+-\\d+$`)),
      paymentReference: first.paymentReference,
      amount: { value: 1000, currency: 'EUR' },
      status: 'received',
      createdAt: expect.stringMatching(RECORD_TIMESTAMP),
    });

    const second = await paidSession(ctx.test, { isPreAuth: true });
    const extend = await ctx.test.modifications.extend({ paymentReference: second.paymentReference }).withResponse();
    expect(extend.response.status).toBeGreaterThanOrEqual(200);
    expect(extend.response.status).toBeLessThan(300);
    expect(extend.data.paymentReference).toBe(second.paymentReference);
    const cancel = await ctx.test.modifications.cancel({ paymentReference: second.paymentReference }).withResponse();
    expect(cancel.response.status).toBe(202);
    expect(cancel.data).toEqual({
      cancelReference: expect.stringMatching(new RegExp(`^${ctx.sandbox.webcode}-[A-Z]+-\\d+$`)),
      paymentReference: second.paymentReference,
      status: 'received',
      createdAt: expect.stringMatching(RECORD_TIMESTAMP),
    });

    const before = await ctx.test.sessions.listModifications(second.sessionId);
    expect(before.map((record) => [record.operationType, record.status])).toEqual([
      ['extend', 'received'],
      ['cancel', 'received'],
    ]);
    await clock.advance(1_000);
    for (const sessionId of [first.sessionId, second.sessionId]) {
      const records = await ctx.test.sessions.listModifications(sessionId);
      expect(records.length).toBeGreaterThan(0);
      for (const record of records)
        expect(record).toMatchObject({ status: 'success', resolvedAt: expect.stringMatching(RECORD_TIMESTAMP) });
    }
    const all = await ctx.test.modifications.list().toArray();
    for (const reference of [capture.data.captureReference, cancel.data.cancelReference]) {
      expect(all.find((record) => record.operationReference === reference)?.status).toBe('success');
    }
    // A captured pre-authorisation can then be refunded.
    const refund = await ctx.test.modifications.refund({ paymentReference: first.paymentReference, amount: EUR(1000), reason: 'r' });
    expect(refund.status).toBe('pending');
  });

  it('applies to POS payments through the same endpoints, listed under the POS payment and globally', async () => {
    const sale = await ctx.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(2000), customReference: 'pos-1' });
    const refund = await ctx.test.modifications.refund({ paymentReference: sale.posPaymentId, amount: EUR(2000), reason: 'Return' });
    expect(refund).toMatchObject({ paymentReference: sale.posPaymentId, status: 'pending' });

    const preAuth = await ctx.test.pos.createPayment({ poiId: 'S1F2-TEST-000002', amount: EUR(5000), isPreAuth: true });
    expect(preAuth.isPreAuth).toBe(true);
    const extend = await ctx.test.modifications.extend({ paymentReference: preAuth.posPaymentId });
    expect(extend.paymentReference).toBe(preAuth.posPaymentId);
    const capture = await ctx.test.modifications.capture({ paymentReference: preAuth.posPaymentId, amount: EUR(4000) });
    expect(capture.status).toBe('received');
    const preAuth2 = await ctx.test.pos.createPayment({ poiId: 'S1F2-TEST-000002', amount: EUR(3000), isPreAuth: true });
    const cancel = await ctx.test.modifications.cancel({ paymentReference: preAuth2.posPaymentId });
    expect(cancel.status).toBe('received');

    const byPos = await ctx.test.pos.listModifications(sale.posPaymentId);
    expect(byPos).toEqual([
      expect.objectContaining({ operationReference: refund.refundReference, sessionId: sale.posPaymentId, status: 'pending' }),
    ]);
    await clock.advance(1_000);
    expect((await ctx.test.pos.listModifications(sale.posPaymentId))[0]?.status).toBe('success');
    expect((await ctx.test.pos.listModifications(preAuth.posPaymentId)).map((record) => [record.operationType, record.status])).toEqual([
      ['extend', 'success'],
      ['capture', 'success'],
    ]);
    expect((await ctx.test.pos.listModifications(preAuth2.posPaymentId)).map((record) => record.status)).toEqual(['success']);
    const global = await ctx.test.modifications.list().toArray();
    for (const reference of [refund.refundReference, capture.captureReference, cancel.cancelReference]) {
      expect(global.find((record) => record.operationReference === reference)).toMatchObject({ status: 'success' });
    }
  });

  it('resolves after modificationResolveMs (default 200) on the clock', async () => {
    const paid = await paidSession(ctx.test);
    const refund = await ctx.test.modifications.refund({ paymentReference: paid.paymentReference, reason: 'all' });
    expect(refund.amount).toEqual({ value: 2599, currency: 'EUR' });
    await clock.advance(199);
    expect((await ctx.test.sessions.listModifications(paid.sessionId))[0]?.status).toBe('pending');
    await clock.advance(1);
    expect((await ctx.test.sessions.listModifications(paid.sessionId))[0]?.status).toBe('success');
  });

  it('refuses what the payment does not allow (sandbox choices)', async () => {
    const paid = await paidSession(ctx.test);
    // Not a pre-authorisation: no capture or cancel.
    await expect(ctx.test.modifications.capture({ paymentReference: paid.paymentReference })).rejects.toMatchObject({
      status: 400,
      code: 12001,
    });
    await expect(ctx.test.modifications.cancel({ paymentReference: paid.paymentReference })).rejects.toMatchObject({
      status: 400,
      code: 12001,
    });
    // No more than the amount.
    await expect(ctx.test.modifications.refund({ paymentReference: paid.paymentReference, amount: EUR(2600) })).rejects.toMatchObject({
      status: 400,
    });
    // A pre-authorisation is captured before it is refunded.
    const preAuth = await paidSession(ctx.test, { isPreAuth: true });
    await expect(ctx.test.modifications.refund({ paymentReference: preAuth.paymentReference })).rejects.toMatchObject({ status: 400 });
    // Unknown payment: 404 / 19404, a NotFoundError naming the field and the reference.
    const unknown = `${ctx.sandbox.webcode}-PXTT-999999`;
    for (const call of [
      () => ctx.test.modifications.refund({ paymentReference: unknown }),
      () => ctx.test.modifications.capture({ paymentReference: unknown }),
      () => ctx.test.modifications.cancel({ paymentReference: unknown }),
    ]) {
      const error = await call().then(
        () => expect.fail('resolved'),
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({
        status: 404,
        code: 19404,
        message: `paymentReference does not name a payment of this webcode in Test: ${unknown} not found`,
      });
    }
    // The request log's issue names the field too.
    const [logged] = (await ctx.sandbox.requests.list({ status: 404, operation: 'refund' })).items;
    expect(logged?.issues).toEqual([
      { path: 'paymentReference', message: `paymentReference does not name a payment of this webcode in Test: ${unknown} not found` },
    ]);
    // A failed POS payment is not refundable.
    const failed = await ctx.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1077) });
    await expect(ctx.test.modifications.refund({ paymentReference: failed.posPaymentId })).rejects.toMatchObject({ status: 400 });
  });
});

describe('listings', () => {
  let ctx: Started;
  let clock: ManualClock;
  const ids: string[] = [];
  beforeAll(async () => {
    clock = manualClock();
    ctx = await start({ clock, posTimeoutResolveMs: 86_400_000 });
    for (let index = 0; index < 25; index++) {
      ids.push((await ctx.test.sessions.create({ ...sessionParams, customReference: `n-${index}` })).sessionId);
      await clock.advance(1_000);
    }
    await ctx.live.sessions.create({ ...sessionParams });
  });

  it('pages sessions with cursors: take, hasMore, cursor null on the last page, total', async () => {
    const pages: { ids: string[]; meta: { cursor: string | null; hasMore: boolean; total: number } }[] = [];
    let cursor: string | undefined;
    do {
      const result = await raw(ctx.sandbox, 'GET', '/payment/sessions', { query: { take: '10', ...(cursor ? { cursor } : {}) } });
      expect(result.status).toBe(200);
      pages.push({ ids: result.body.data.payments.map((item: { sessionId: string }) => item.sessionId), meta: result.body.data.meta });
      cursor = result.body.data.meta.cursor ?? undefined;
    } while (cursor);
    expect(pages.map((page) => page.ids.length)).toEqual([10, 10, 5]);
    expect(pages.map((page) => page.meta.hasMore)).toEqual([true, true, false]);
    expect(pages.map((page) => page.meta.total)).toEqual([25, 25, 25]);
    expect(typeof pages[0]?.meta.cursor).toBe('string');
    expect(pages[2]?.meta.cursor).toBeNull();
    expect(pages.flatMap((page) => page.ids)).toEqual(ids);
    // The SDK walks the same pages.
    expect((await ctx.test.sessions.list({ take: 7 }).toArray()).map((item) => item.sessionId)).toEqual(ids);
    // The listing item has the documented fields.
    const first = (await ctx.test.sessions.list({ take: 1 }).firstPage()).items[0];
    expect(first).toMatchObject({
      sessionId: ids[0],
      status: 'pending',
      amount: { value: 2599, currency: 'EUR' },
      description: 'Order 42',
      customReference: 'n-0',
      isPreAuth: false,
      createdAt: '2026-01-01 00:00:00',
    });
    expect(first && 'completedAt' in first && 'paymentReference' in first && 'paymentStatus' in first).toBe(true);
  });

  it('defaults take to 20 and accepts 1..100 only', async () => {
    const page = await raw(ctx.sandbox, 'GET', '/payment/sessions');
    expect(page.body.data.payments).toHaveLength(20);
    expect(page.body.data.meta).toMatchObject({ hasMore: true, total: 25 });
    expect((await raw(ctx.sandbox, 'GET', '/payment/sessions', { query: { take: '1' } })).body.data.payments).toHaveLength(1);
    expect((await raw(ctx.sandbox, 'GET', '/payment/sessions', { query: { take: '100' } })).body.data.payments).toHaveLength(25);
    for (const take of ['0', '101', '-1', '2.5', 'ten']) {
      for (const path of ['/payment/sessions', '/pos/payments', '/modifications']) {
        const result = await raw(ctx.sandbox, 'GET', path, { query: { take } });
        expect(result.status, `${path} take=${take}`).toBe(400);
        expect(failureOf(result).code).toBe(12001);
      }
    }
  });

  it('filters sessions by status and keeps the environments apart', async () => {
    await submitForm((await raw(ctx.sandbox, 'POST', '/payment/session', { body: { ...sessionParams } })).body.data.paymentUrl);
    const completed = await ctx.test.sessions.list({ status: 'completed' }).firstPage();
    expect(completed.total).toBe(1);
    expect(completed.items[0]?.status).toBe('completed');
    expect((await ctx.test.sessions.list({ status: 'pending' }).firstPage()).total).toBe(25);
    expect((await ctx.live.sessions.list().firstPage()).total).toBe(1);
  });

  it('orders POS payments asc by default, desc on request, filters by status and creation dates', async () => {
    const t0 = clock.now();
    const made: string[] = [];
    for (const value of [1000, 1077, 1099, 2000]) {
      made.push((await ctx.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(value) }, { recover: false })).posPaymentId);
      await clock.advance(60_000);
    }
    const at = (offsetMs: number) => new Date(t0 + offsetMs);
    const listIds = async (params: Parameters<PaymentClient['pos']['list']>[0]) =>
      (await ctx.test.pos.list(params).toArray()).map((item) => item.posPaymentId);
    const recordFormat = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');

    expect(await listIds({})).toEqual(made);
    expect(await listIds({ order: 'asc' })).toEqual(made);
    expect(await listIds({ order: 'desc' })).toEqual([...made].reverse());
    expect(await listIds({ status: 'success' })).toEqual([made[0], made[3]]);
    expect(await listIds({ status: 'failed' })).toEqual([made[1]]);
    expect(await listIds({ status: 'timeout' })).toEqual([made[2]]);
    expect(await listIds({ status: 'pending' })).toEqual([]);
    expect(await listIds({ createdAtStart: at(60_000) })).toEqual(made.slice(1));
    expect(await listIds({ createdAtEnd: at(120_000) })).toEqual(made.slice(0, 3));
    expect(await listIds({ createdAtStart: at(60_000), createdAtEnd: at(120_000) })).toEqual(made.slice(1, 3));
    // The record format as a string filter; both ends inclusive.
    expect(await listIds({ createdAtStart: recordFormat(at(60_000)), createdAtEnd: recordFormat(at(120_000)) })).toEqual(made.slice(1, 3));
    expect((await ctx.test.pos.list({ take: 1 }).firstPage()).items[0]?.createdAt).toBe(recordFormat(at(0)));

    const first = await ctx.test.pos.list({ take: 3, order: 'desc' }).firstPage();
    expect(first).toMatchObject({ hasMore: true, total: 4, cursor: expect.any(String) });
    expect(first.items.map((item) => item.posPaymentId)).toEqual([made[3], made[2], made[1]]);
    const second = await ctx.test.pos.list({ take: 3, order: 'desc', cursor: first.cursor ?? '' }).firstPage();
    expect(second).toMatchObject({ hasMore: false, total: 4, cursor: null });
    expect(second.items.map((item) => item.posPaymentId)).toEqual([made[0]]);
    const filteredTotal = await ctx.test.pos.list({ status: 'success', take: 1 }).firstPage();
    expect(filteredTotal).toMatchObject({ total: 2, hasMore: true });
    expect((await raw(ctx.sandbox, 'GET', '/pos/payments', { query: { order: 'sideways' } })).status).toBe(400);
  });

  it('filters modifications by type and status, with cursors and total', async () => {
    const paid = [await paidSession(ctx.test), await paidSession(ctx.test), await paidSession(ctx.test, { isPreAuth: true })];
    await ctx.test.modifications.refund({ paymentReference: paid[0]?.paymentReference ?? '', amount: EUR(100), reason: 'a' });
    await ctx.test.modifications.refund({ paymentReference: paid[1]?.paymentReference ?? '', amount: EUR(100), reason: 'b' });
    await ctx.test.modifications.capture({ paymentReference: paid[2]?.paymentReference ?? '' });
    await clock.advance(1_000);
    await ctx.test.modifications.refund({ paymentReference: paid[0]?.paymentReference ?? '', amount: EUR(100), reason: 'c' });

    const refunds = await ctx.test.modifications.list({ type: 'refund' }).firstPage();
    expect(refunds.total).toBe(3);
    expect(refunds.items.every((record) => record.operationType === 'refund')).toBe(true);
    const succeeded = await ctx.test.modifications.list({ type: 'refund', status: 'success' }).firstPage();
    expect(succeeded.total).toBe(2);
    expect(succeeded.items.map((record) => record.reason)).toEqual(['a', 'b']);
    expect((await ctx.test.modifications.list({ status: 'pending' }).firstPage()).total).toBe(1);
    expect((await ctx.test.modifications.list({ type: 'capture' }).firstPage()).total).toBe(1);
    const paged = await ctx.test.modifications.list({ take: 2 }).firstPage();
    expect(paged).toMatchObject({ total: 4, hasMore: true });
    expect((await ctx.test.modifications.list({ take: 2 }).toArray()).length).toBe(4);
  });
});

describe('library: createSandbox', () => {
  it('answers fetch-standard requests in process through handle(), with no server', async () => {
    const sandbox = createSandbox({ posDelayMs: 0, extraKeys: [{ key: 'sk_ip', environment: 'test', ipAllowList: ['10.0.0.7'] }] });
    adopt(sandbox);
    expect(sandbox.baseUrl).toBe('http://sandbox.localhost');
    expect(sandbox.webcode).toBe('SANDBOX');
    expect(sandbox.keys).toEqual({ test: expect.any(String), live: expect.any(String) });
    expect(sandbox.clientSecrets.test).not.toBe(sandbox.clientSecrets.live);
    const headers = { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json' };
    const created = await sandbox.handle(
      new Request(`${sandbox.baseUrl}/external/v1/test/payment/session`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ webcode: sandbox.webcode, ...sessionParams }),
      }),
    );
    expect(created.status).toBe(201);
    const body = (await created.json()) as { success: boolean; data: { sessionId: string; paymentUrl: string } };
    expect(body.success).toBe(true);
    expect(body.data.paymentUrl.startsWith('http://sandbox.localhost/pay-external-test/')).toBe(true);
    expect(sandbox.records.sessions().map((session) => session.sessionId)).toEqual([body.data.sessionId]);

    const paid = await sandbox.handle(
      new Request(body.data.paymentUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          cardNumber: '4111111111111111',
          expiryMonth: '12',
          expiryYear: '99',
          cvc: '123',
          holderName: 'Ann Example',
          action: 'pay',
        }),
      }),
    );
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toMatch(new RegExp(`^${URL_OK.replace(/[.]/g, '\\.')}\\?data=`));
    expect(sandbox.records.sessions()[0]?.status).toBe('completed');

    const allowed = await sandbox.handle(
      new Request(`${sandbox.baseUrl}/external/v1/test/pos/terminals?webcode=SANDBOX`, { headers: { 'x-api-key': 'sk_ip' } }),
      {
        remoteAddress: '10.0.0.7',
      },
    );
    expect(allowed.status).toBe(200);
    const denied = await sandbox.handle(
      new Request(`${sandbox.baseUrl}/external/v1/test/pos/terminals?webcode=SANDBOX`, { headers: { 'x-api-key': 'sk_ip' } }),
      {
        remoteAddress: '10.0.0.8',
      },
    );
    expect(denied.status).toBe(403);
    expect((await sandbox.handle(new Request(`${sandbox.baseUrl}/nothing/here`))).status).toBe(404);
  });

  it('takes its webcode, keys and client secrets from the options', async () => {
    const { sandbox, test } = await start({
      webcode: 'SHOP9',
      keys: { test: 'tk_custom', live: 'lk_custom' },
      clientSecrets: { test: 'ts_custom', live: 'ls_custom' },
    });
    expect(sandbox.keys).toEqual({ test: 'tk_custom', live: 'lk_custom' });
    expect(sandbox.clientSecrets).toEqual({ test: 'ts_custom', live: 'ls_custom' });
    const paid = await paidSession(test);
    expect(paid.sessionId).toMatch(/^SHOP9-EXTT-\d+$/);
    expect(paid.paymentReference).toMatch(/^SHOP9-PXTT-\d+$/);
    await decodeRedirectData(new URL(paid.target).searchParams.get('data') ?? '', 'ts_custom');
    expect((await raw(sandbox, 'GET', '/pos/terminals', { key: 'sk_test_sandbox' })).status).toBe(403);
  });

  it('listens on 127.0.0.1 at the port asked for, and close() stops the server', async () => {
    const probe = createSandbox();
    const { baseUrl: first } = await probe.listen();
    const port = Number(new URL(first).port);
    await probe.close();
    const sandbox = createSandbox({ posDelayMs: 0 });
    const { baseUrl } = await sandbox.listen({ port, host: '127.0.0.1' });
    expect(baseUrl).toBe(`http://127.0.0.1:${port}`);
    expect(sandbox.baseUrl).toBe(baseUrl);
    expect(await clientFor(sandbox, 'test').terminals.list()).toHaveLength(3);
    await sandbox.close();
    await expect(fetch(`${baseUrl}/external/v1/test/pos/terminals?webcode=SANDBOX`)).rejects.toThrow();
  });

  it('answers 404 for an unknown path and 405 for a wrong method (sandbox choices)', async () => {
    const { sandbox } = await start();
    expect((await fetch(`${sandbox.baseUrl}/external/v1/test/nope`)).status).toBe(404);
    const wrongMethod = await fetch(`${sandbox.baseUrl}/external/v1/test/payment/session`, { headers: { 'x-api-key': sandbox.keys.test } });
    expect(wrongMethod.status).toBe(405);
    expect((await fetch(`${sandbox.baseUrl}/pay-external-test/unknown-token`)).status).toBe(404);
  });
});

describe('library: msw handlers, in process', () => {
  const sandbox = createSandbox({ posDelayMs: 0 });
  let server: ReturnType<typeof setupServer>;
  beforeAll(() => {
    server = setupServer(...(sandbox.handlers as RequestHandler[]));
    server.listen({ onUnhandledFrame: 'error' });
  });
  afterAll(async () => {
    server.close();
    await sandbox.close();
  });

  it('serves the SDK and the payment page at sandbox.baseUrl', async () => {
    const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl: sandbox.baseUrl, maxRetries: 0 });
    expect(await client.terminals.list({ syncFromProvider: true })).toHaveLength(2);
    const created = await client.sessions.create({ ...sessionParams });
    expect(created.paymentUrl.startsWith(`${sandbox.baseUrl}/pay-external-test/`)).toBe(true);
    const answer = await submitForm(created.paymentUrl);
    const token = new URL(answer.target ?? '').searchParams.get('data') ?? '';
    const data = await decodeRedirectData(token, sandbox.clientSecrets.test);
    const session = await client.sessions.retrieve(created.sessionId);
    expect(session.status).toBe('completed');
    expect(data.paymentReference).toBe(session.paymentReference);
    const pos = await client.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1000) });
    expect(pos.status).toBe('success');
    const refund = await client.modifications.refund({ paymentReference: pos.posPaymentId, reason: 'x' });
    expect(refund.status).toBe('pending');
    expect(sandbox.records.modifications()).toHaveLength(1);
  });
});
