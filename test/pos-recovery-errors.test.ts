/**
 * Every error `pos.createPayment` throws once its charge may have left carries the charge's
 * `Idempotency-Key`, and every failure of recovery is a `PosPaymentPendingError` whose `state`
 * resumes it: the caller can always finish what was started, and never starts it again.
 * Over real HTTP on 127.0.0.1: the sandbox with its fault rules, and the scriptable fault server.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ConnectionError,
  IdempotencyConflictError,
  InvalidRequestError,
  PaymentClient,
  PermissionDeniedError,
  PosPaymentPendingError,
  RateLimitError,
  ServerError,
  TimeoutError,
} from '../src/index.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { clientFor, startSandbox } from './sandbox/support.js';
import { type Fault, type FaultServer, startFaultServer } from './support/fault-server.js';

// An amount the sandbox's Test terminal approves at once (one ending in 99 would end `timeout`).
const params = { poiId: 'V400m-TEST-000001', amount: { value: 1500, currency: 'EUR' }, customReference: 'table-9' } as const;
/** Recovery without its production waits; `maxWaitMs` bounds each run. */
const fast = { initialDelayMs: 0, pollIntervalMs: 5, maxWaitMs: 250 };

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`resolved instead of rejecting: ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** The error is a `PosPaymentPendingError` carrying the key and a state that can resume the charge. */
function expectResumable(error: unknown, key?: string): PosPaymentPendingError {
  expect(error).toBeInstanceOf(PosPaymentPendingError);
  const pending = error as PosPaymentPendingError;
  expect(pending.idempotencyKey).toEqual(key ?? expect.any(String));
  expect(pending.state).toMatchObject({ idempotencyKey: pending.idempotencyKey, params, sentAt: expect.any(String) });
  expect(pending.message).toContain('resume()');
  return pending;
}

describe('the issue: a reset after commit, then a 429 on the listing, with maxRetries: 0 (sandbox)', () => {
  let sandbox: Sandbox;
  let client: PaymentClient;
  beforeAll(async () => {
    ({ sandbox, test: client } = await startSandbox());
  });
  afterAll(() => sandbox.close());
  beforeEach(async () => {
    sandbox.faults.clear();
    await sandbox.reset();
  });

  const strike = () => {
    sandbox.faults.add({ environment: 'test', route: 'POST /pos/payment', effect: { type: 'reset', when: 'after-commit' } });
    sandbox.faults.add({ environment: 'test', route: 'GET /pos/payments', effect: { type: 'error', status: 429, when: 'before' } });
  };
  const payments = () => sandbox.records.posPayments({ environment: 'test' });

  it('throws PosPaymentPendingError with the key and the state, and resume() finishes the one charge', async () => {
    strike();
    const error = await rejection(client.pos.createPayment(params, { recover: fast }));
    const pending = expectResumable(error);
    // The sandbox made the payment; the SDK could not read it, and says so with what finishes it.
    expect(payments()).toHaveLength(1);
    expect(payments()[0]?.status).toBe('success');

    sandbox.faults.clear();
    const payment = await pending.resume({ pollIntervalMs: 5, maxWaitMs: 2_000 });
    expect(payment).toMatchObject({ status: 'success', recovered: true, posPaymentId: payments()[0]?.posPaymentId });
    expect(payments()).toHaveLength(1);
  });

  it('resumes from the saved state in another process (a new client), and never charges again', async () => {
    strike();
    const pending = expectResumable(await rejection(client.pos.createPayment(params, { recover: fast })));
    const saved = JSON.stringify(pending.state);

    sandbox.faults.clear();
    const other = clientFor(sandbox, 'test');
    const payment = await other.pos.resumeRecovery(JSON.parse(saved), { pollIntervalMs: 5, maxWaitMs: 2_000 });
    expect(payment).toMatchObject({ status: 'success', recovered: true, posPaymentId: payments()[0]?.posPaymentId });
    expect(payments()).toHaveLength(1);
  });
});

describe('every failure after the charge left carries the key and the state (fault server)', () => {
  let server: FaultServer;
  beforeAll(async () => {
    server = await startFaultServer();
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());
  afterEach(() => server.reset());

  const CHARGE = 'POST /pos/payment';
  const LIST = 'GET /pos/payments';
  // A listing that takes over 100 ms times out; the charge keeps its long `posTimeout`.
  const sdk = () =>
    new PaymentClient({
      apiKey: 'sk_test_pos',
      webcode: 'SHOP1',
      baseUrl: server.baseUrl,
      environment: 'test',
      maxRetries: 0,
      timeout: 100,
    });
  const many = (fault: Fault) => Array.from({ length: 200 }, () => fault);
  const key = () => server.seen(CHARGE)[0]?.idempotencyKey as string;

  /** Resumes with the faults cleared: the one payment is found, and no second charge runs. */
  async function resumesOnce(pending: PosPaymentPendingError): Promise<void> {
    server.clearFaults();
    const payment = await pending.resume({ pollIntervalMs: 5, maxWaitMs: 2_000 });
    expect(payment).toMatchObject({ status: 'success', recovered: true });
    expect(server.posPayments).toHaveLength(1);
    expect(server.runs.get(key())).toBe(1);
    expect(new Set(server.seen(CHARGE).map((request) => request.idempotencyKey)).size).toBe(1);
  }

  const listingFailures: [string, Fault, new (...args: never[]) => Error][] = [
    ['a 429', { kind: 'respond', status: 429, body: '{"success":false,"error":{"message":"Slow down","statusCode":429}}' }, RateLimitError],
    ['a 503', { kind: 'respond', status: 503, body: 'Service Unavailable' }, ServerError],
    ['a connection reset', { kind: 'reset' }, ConnectionError],
    ['a timeout', { kind: 'stall', ms: 5_000 }, TimeoutError],
  ];

  it.each(listingFailures)('outlives %s on every poll, then gives up with the key and the state', async (_label, fault) => {
    server.script(CHARGE, ...many({ kind: 'reset-after' }));
    server.script(LIST, ...many(fault));
    const error = await rejection(sdk().pos.createPayment(params, { recover: fast }));
    const pending = expectResumable(error, key());
    expect(pending.cause).toBeUndefined();
    // A reset comes before the server reads the request, so it is not in `seen`.
    if (fault.kind !== 'reset') expect(server.seen(LIST).length).toBeGreaterThan(0);
    await resumesOnce(pending);
  });

  it('stops on a failure it cannot outlive (403 on the listing) with PosPaymentPendingError, the failure as cause', async () => {
    server.script(CHARGE, ...many({ kind: 'reset-after' }));
    server.script(LIST, { kind: 'respond', status: 403, body: '{"success":false,"error":{"message":"Forbidden","statusCode":403}}' });
    const error = await rejection(sdk().pos.createPayment(params, { recover: fast }));
    const pending = expectResumable(error, key());
    expect(pending.cause).toBeInstanceOf(PermissionDeniedError);
    expect(pending.message).toContain('PermissionDeniedError');
    await resumesOnce(pending);
  });

  it('waits out the Retry-After of a 429 on the listing', async () => {
    server.script(CHARGE, ...many({ kind: 'reset-after' }));
    const slowDown = '{"success":false,"error":{"message":"Slow down","statusCode":429}}';
    server.script(LIST, ...many({ kind: 'respond', status: 429, headers: { 'retry-after': '1' }, body: slowDown }));
    const error = await rejection(sdk().pos.createPayment(params, { recover: { ...fast, maxWaitMs: 400 } }));
    expectResumable(error, key());
    // The first poll is refused with Retry-After 1 s, which is longer than the recovery has left:
    // it waits to its end and polls a last time. Polling every 5 ms, doubling, would poll 7 times.
    expect(server.seen(LIST)).toHaveLength(2);
  });

  it('turns an abort during recovery into PosPaymentPendingError, the signal’s reason as cause', async () => {
    server.script(CHARGE, ...many({ kind: 'reset-after' }));
    const controller = new AbortController();
    const reason = new Error('cashier cancelled');
    const call = sdk().pos.createPayment(params, { signal: controller.signal, recover: { ...fast, initialDelayMs: 5_000 } });
    setTimeout(() => controller.abort(reason), 50);
    const pending = expectResumable(await rejection(call), undefined);
    expect(pending.cause).toBe(reason);
    expect(pending.idempotencyKey).toBe(key());
    await resumesOnce(pending);
  });

  it('turns an abort while the charge is out into PosPaymentPendingError, also with recover: false', async () => {
    server.script(CHARGE, { kind: 'stall', ms: 5_000 });
    const controller = new AbortController();
    const reason = new Error('cashier cancelled');
    const call = sdk().pos.createPayment(params, { signal: controller.signal, recover: false });
    setTimeout(() => controller.abort(reason), 50);
    const pending = expectResumable(await rejection(call), undefined);
    expect(pending.cause).toBe(reason);
    expect(pending.idempotencyKey).toBe(key());
    await resumesOnce(pending);
  });

  it('throws the reason as is when the signal had aborted before anything was sent', async () => {
    const reason = new Error('already cancelled');
    await expect(sdk().pos.createPayment(params, { signal: AbortSignal.abort(reason), recover: fast })).rejects.toBe(reason);
    expect(server.seen(CHARGE)).toHaveLength(0);
  });

  it.each([
    ['400', 400, '{"success":false,"error":{"message":"Invalid terminal","code":12001,"statusCode":400}}', InvalidRequestError],
    [
      '409 idempotency conflict',
      409,
      '{"success":false,"error":{"message":"Idempotency key reused with a different request body.","statusCode":409}}',
      IdempotencyConflictError,
    ],
  ])(
    'throws a refusal of the resent charge (%s) as is: nothing was charged, and it carries the key',
    async (_label, status, body, type) => {
      server.script(CHARGE, { kind: 'reset' }, { kind: 'respond', status, body });
      const error = await rejection(sdk().pos.createPayment(params, { recover: fast }));
      expect(error).toBeInstanceOf(type);
      expect((error as InvalidRequestError).idempotencyKey).toBe(key());
      expect(server.posPayments).toHaveLength(0);
    },
  );

  it('carries the key on every error of the first attempt with recover: false', async () => {
    server.script(CHARGE, { kind: 'reset-after' });
    const error = await rejection(sdk().pos.createPayment(params, { recover: false }));
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).idempotencyKey).toBe(key());
  });
});
