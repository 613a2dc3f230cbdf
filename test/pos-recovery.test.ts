import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ClientOptions,
  ConnectionError,
  InvalidRequestError,
  PaymentClient,
  PosPaymentPendingError,
  TerminalBusyError,
  TerminalCommunicationError,
} from '../src/index.js';
import { type FaultServer, type FaultServerOptions, startFaultServer } from './support/fault-server.js';

type Options = ClientOptions;

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(() => server.close());

const CHARGE = 'POST /pos/payment';
const LIST = 'GET /pos/payments';
const params = { poiId: 'V400m-TEST-000001', amount: { value: 1099, currency: 'EUR' }, customReference: 'table-7' } as const;
const fast = { initialDelayMs: 10, pollIntervalMs: 10, maxWaitMs: 3_000 };

function sdk(options: Options = {}): PaymentClient {
  return new PaymentClient({ apiKey: 'sk_test_pos', webcode: 'SHOP1', baseUrl: server.baseUrl, environment: 'test', ...options });
}

function setup(options: FaultServerOptions): void {
  server.reset(options);
}

/** Completes the first POS payment once the service has recorded it, as a terminal answering late. */
function completeLater(status: 'success' | 'failed', afterMs = 30): Promise<string> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const record = server.posPayments[0];
      if (!record) return;
      clearInterval(timer);
      setTimeout(() => {
        server.complete(record.posPaymentId, status);
        resolve(record.posPaymentId);
      }, afterMs);
    }, 2);
  });
}

function onlyKey(): string {
  const keys = new Set(server.seen(CHARGE).map((request) => request.idempotencyKey));
  expect(keys.size).toBe(1);
  const [key] = keys;
  if (!key) throw new Error('no idempotency key');
  return key;
}

function expectChargedOnce(): void {
  const key = onlyKey();
  expect(server.runs.get(key)).toBe(1);
  expect(server.posPayments).toHaveLength(1);
  const bodies = new Set(server.seen(CHARGE).map((request) => request.body));
  expect(bodies.size).toBe(1);
}

describe('POS timeout recovery', () => {
  beforeEach(() => setup({}));

  it('returns a final result at once, without recovery', async () => {
    const payment = await sdk().pos.createPayment(params, { recover: fast });
    expect(payment.status).toBe('success');
    expect(payment.recovered).toBeUndefined();
    expect(server.seen(CHARGE)).toHaveLength(1);
    expect(server.seen(LIST)).toHaveLength(0);
  });

  it('turns a timeout into success through the stored response', async () => {
    setup({ posStatus: 'timeout', posReplay: 'current' });
    const completed = completeLater('success', 0);
    const payment = await sdk().pos.createPayment(params, { recover: fast });
    expect(payment).toMatchObject({ status: 'success', recovered: true, posPaymentId: await completed });
    expect(server.seen(CHARGE)).toHaveLength(2);
    expect(server.seen(LIST)).toHaveLength(0);
    expectChargedOnce();
  });

  it('turns a timeout into success by polling the listing over a narrow window', async () => {
    setup({ posStatus: 'timeout', posReplay: 'snapshot' });
    const completed = completeLater('success', 60);
    const { data, idempotencyKey, response } = await sdk().pos.createPayment(params, { recover: fast }).withResponse();
    expect(data).toMatchObject({ status: 'success', recovered: true, posPaymentId: await completed });
    expect(idempotencyKey).toBe(onlyKey());
    expect(response.status).toBe(200);
    const polls = server.seen(LIST);
    expect(polls.length).toBeGreaterThan(0);
    const first = polls[0]?.query;
    const start = Date.parse(`${first?.get('created_at_start')?.replace(' ', 'T')}Z`);
    const end = Date.parse(`${first?.get('created_at_end')?.replace(' ', 'T')}Z`);
    expect(end - start).toBeLessThanOrEqual(2 * 24 * 3_600_000 + 60_000);
    expect(first?.get('order')).toBe('desc');
    expectChargedOnce();
  });

  it('reports a declined payment that was pending as failed', async () => {
    setup({ posStatus: 'timeout', posReplay: 'snapshot' });
    void completeLater('failed');
    const payment = await sdk().pos.createPayment(params, { recover: fast });
    expect(payment).toMatchObject({ status: 'failed', recovered: true });
    expectChargedOnce();
  });

  it('recovers a connection dropped during the long call from the stored response', async () => {
    server.script(CHARGE, { kind: 'reset-after' });
    const payment = await sdk().pos.createPayment(params, { recover: fast });
    expect(payment).toMatchObject({ status: 'success', recovered: true });
    expect(server.seen(CHARGE)).toHaveLength(2);
    expectChargedOnce();
  });

  it('recovers a client-side timeout from the stored response', async () => {
    server.script(CHARGE, { kind: 'stall', ms: 5_000 });
    const payment = await sdk().pos.createPayment(params, { timeout: 100, recover: fast });
    expect(payment).toMatchObject({ status: 'success', recovered: true });
    expectChargedOnce();
  });

  it('recovers a 5xx answered after the charge, and never resends it blindly', async () => {
    setup({ posStatus: 'timeout', posReplay: 'snapshot' });
    server.script(CHARGE, { kind: 'respond', status: 503, body: 'Service Unavailable' });
    const payment = sdk().pos.createPayment(params, { recover: fast });
    // The 503 ran nothing; the recovery resend (same key, same bytes) is the first charge.
    void completeLater('success');
    await expect(payment).resolves.toMatchObject({ status: 'success', recovered: true });
    expectChargedOnce();
  });

  it('finds the payment without its id by terminal, amount and reference', async () => {
    setup({ posStatus: 'timeout', posReplay: 'snapshot' });
    server.script(CHARGE, { kind: 'reset-after' }, { kind: 'respond', status: 502, body: '<html>Bad Gateway</html>' });
    void completeLater('success');
    const payment = await sdk().pos.createPayment(params, { recover: fast });
    expect(payment).toMatchObject({ status: 'success', recovered: true, poiId: params.poiId });
    expectChargedOnce();
  });

  it('resends a charge that never arrived, while no answer has been read, and charges it once', async () => {
    // The charge and the recovery's first resend are both cut before the service reads them: nothing is listed.
    server.script(CHARGE, { kind: 'reset' }, { kind: 'reset' });
    const payment = await sdk().pos.createPayment(params, { recover: fast });
    expect(payment).toMatchObject({ status: 'success', recovered: true });
    expectChargedOnce();
  });

  it('lets an AUTHORISATION webhook end the wait early, confirmed by the API', async () => {
    setup({ posStatus: 'timeout', posReplay: 'snapshot' });
    const webhook = completeLater('success').then((posPaymentId) => ({
      event_code: 'AUTHORISATION',
      data: { paymentReference: posPaymentId, paymentStatus: 'AUTHORISED', amount: 1099, currency: 'EUR' },
    }));
    const started = Date.now();
    const payment = await sdk().pos.createPayment(params, {
      recover: { initialDelayMs: 60_000, pollIntervalMs: 60_000, maxWaitMs: 120_000, webhook },
    });
    expect(payment).toMatchObject({ status: 'success', recovered: true });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(server.seen(LIST).length).toBeGreaterThan(0);
    expectChargedOnce();
  });

  it('does not trust a webhook the API does not confirm', async () => {
    setup({ posStatus: 'timeout', posReplay: 'snapshot' });
    const webhook = Promise.resolve({
      event_code: 'AUTHORISATION',
      data: { paymentReference: 'SHOP1-POSXT-0000000000', paymentStatus: 'AUTHORISED' },
    });
    const error = await sdk()
      .pos.createPayment(params, { recover: { initialDelayMs: 5_000, pollIntervalMs: 20, maxWaitMs: 150, webhook } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PosPaymentPendingError);
    expectChargedOnce();
  });

  it('gives up after maxWait with PosPaymentPendingError, and resume() finishes later', async () => {
    setup({ posStatus: 'timeout', posReplay: 'snapshot' });
    const error = await sdk()
      .pos.createPayment(params, { recover: { initialDelayMs: 0, pollIntervalMs: 20, maxWaitMs: 100 } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PosPaymentPendingError);
    const pending = error as PosPaymentPendingError;
    const [record] = server.posPayments;
    expect(pending.posPaymentId).toBe(record?.posPaymentId);
    expect(pending.idempotencyKey).toBe(onlyKey());
    expect(pending.lastKnown?.status).toBe('timeout');
    expect(pending.message).toContain('resume()');

    server.complete(pending.posPaymentId ?? '', 'success');
    await expect(pending.resume({ pollIntervalMs: 10, maxWaitMs: 1_000 })).resolves.toMatchObject({ status: 'success', recovered: true });
    expectChargedOnce();
  });

  it('resumes from the saved state in another process (a new client)', async () => {
    setup({ posStatus: 'timeout', posReplay: 'snapshot' });
    const error = (await sdk()
      .pos.createPayment(params, { recover: { initialDelayMs: 0, pollIntervalMs: 20, maxWaitMs: 60 } })
      .catch((caught: unknown) => caught)) as PosPaymentPendingError;
    const saved = JSON.stringify(error.state);
    server.complete(error.posPaymentId ?? '', 'failed');

    const payment = await sdk().pos.resumeRecovery(JSON.parse(saved), { pollIntervalMs: 10, maxWaitMs: 1_000 });
    expect(payment).toMatchObject({ status: 'failed', recovered: true, posPaymentId: error.posPaymentId });
    expectChargedOnce();
  });

  it('waits for the final status of a payment known only by its id', async () => {
    setup({ posStatus: 'timeout' });
    const first = await sdk().pos.createPayment(params, { recover: false });
    expect(first.status).toBe('timeout');
    setTimeout(() => server.complete(first.posPaymentId, 'success'), 40);
    const final = await sdk().pos.waitForFinalStatus(first.posPaymentId, { pollIntervalMs: 10, maxWaitMs: 2_000 });
    expect(final).toMatchObject({ status: 'success', posPaymentId: first.posPaymentId });
    expectChargedOnce();
  });

  it('returns the timeout as is with recover: false', async () => {
    setup({ posStatus: 'timeout' });
    const payment = await sdk().pos.createPayment(params, { recover: false });
    expect(payment.status).toBe('timeout');
    expect(server.seen(CHARGE)).toHaveLength(1);
  });

  it.each([
    [
      '400 invalid terminal',
      400,
      '{"success":false,"error":{"message":"Invalid terminal","code":12001,"statusCode":400,"traceId":"t"}}',
      InvalidRequestError,
    ],
    [
      '409 terminal busy',
      409,
      '{"success":false,"error":{"message":"Terminal busy","code":13005,"statusCode":409,"traceId":"t"}}',
      TerminalBusyError,
    ],
    [
      '502 terminal offline',
      502,
      '{"success":false,"error":{"message":"Error in POS payment response: Reject","code":13004,"statusCode":502,"traceId":"t"}}',
      TerminalCommunicationError,
    ],
  ])('does not recover a %s: nothing was charged', async (_label, status, body, type) => {
    server.script(CHARGE, { kind: 'respond', status, body });
    await expect(sdk().pos.createPayment(params, { recover: fast })).rejects.toBeInstanceOf(type);
    expect(server.seen(CHARGE)).toHaveLength(1);
    expect(server.seen(LIST)).toHaveLength(0);
  });

  it('does not recover a refused connection: the charge never left', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const address = probe.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const error = await sdk({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 })
      .pos.createPayment(params, { recover: fast })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).notSent).toBe(true);
  });

  it('stops recovering when the signal aborts: PosPaymentPendingError, with its reason as cause', async () => {
    setup({ posStatus: 'timeout' });
    const controller = new AbortController();
    const reason = new Error('cashier cancelled');
    const call = sdk().pos.createPayment(params, { signal: controller.signal, recover: { initialDelayMs: 5_000 } });
    setTimeout(() => controller.abort(reason), 50);
    const error = await call.catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'PosPaymentPendingError', cause: reason, idempotencyKey: onlyKey() });
    expect(server.seen(CHARGE)).toHaveLength(1);
  });

  it('rejects malformed recovery settings before charging', async () => {
    await expect(sdk().pos.createPayment(params, { recover: { maxWaitMs: -1 } })).rejects.toMatchObject({
      name: 'RequestValidationError',
      issues: [{ path: 'options.recover.maxWaitMs', message: 'must be an integer >= 0' }],
    });
    expect(server.seen(CHARGE)).toHaveLength(0);
  });
});
