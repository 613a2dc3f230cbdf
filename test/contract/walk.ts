/**
 * One walk of the SDK through every endpoint of the service in one environment, as an integrator's
 * code would call them: successes, the documented failures a well-formed request can still get
 * (unknown records, a key of the other environment, what the payment does not allow, a busy or
 * offline terminal, a reused idempotency key), idempotent replays and cursor pagination. The
 * contract tests run it through Prism's validating proxy and under ajv. Every call is asserted, so a
 * walk that silently stopped doing something would fail.
 */
import { expect } from 'vitest';
import {
  ApiError,
  type Environment,
  IdempotencyConflictError,
  InvalidRequestError,
  type PaymentClient,
  PermissionDeniedError,
  TerminalBusyError,
  TerminalCommunicationError,
} from '../../src/index.js';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/index.js';
import { POS_TEST_ENDINGS, TEST_TERMINALS } from '../../src/testing/index.js';

const EUR = (value: number) => ({ value, currency: 'EUR' as const });
const [ONLINE, SECOND, OFFLINE] = TEST_TERMINALS;

/** The sandbox the walk needs: modifications resolve when it moves the clock, a POS `timeout` completes soon. */
export const WALK_SANDBOX_OPTIONS = {
  posDelayMs: 0,
  modificationResolveMs: 60_000,
  posTimeoutResolveMs: 100,
} as const satisfies SandboxOptions;

export interface WalkContext {
  /** Started with {@link WALK_SANDBOX_OPTIONS}. */
  sandbox: Sandbox;
  environment: Environment;
  /** The client under test, on `environment`'s paths with its key. */
  client: PaymentClient;
  /** A client on the same paths with the other environment's key (403 / 11008). */
  wrongKey: PaymentClient;
}

/** The error `promise` rejects with; fails when it resolves. */
async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** Walks the 13 endpoints of `environment` with `client`. A unique `tag` keeps idempotency keys apart between walks. */
export async function walkEveryEndpoint({ sandbox, environment, client, wrongKey }: WalkContext, tag: string): Promise<void> {
  const t = environment === 'test' ? 'T' : '';
  const webcode = sandbox.webcode;
  const settle = () => sandbox.advanceClock(WALK_SANDBOX_OPTIONS.modificationResolveMs);

  // POST /payment/session with every optional field; GET /payment/session/{sessionId}.
  const session = await client.sessions.create({
    amount: EUR(2599),
    urlOk: 'https://shop.example/ok',
    urlKo: 'https://shop.example/ko',
    countryCode: 'ES',
    shopperLocale: 'es-ES',
    deliverAt: '2030-02-01T10:00:00Z',
    description: 'Order 42',
    customReference: `order-${tag}`,
  });
  expect(session.status).toBe('pending');
  expect((await client.sessions.retrieve(session.sessionId)).status).toBe('pending');
  await sandbox.paySession(environment, session.sessionId);
  const paid = await client.sessions.retrieve(session.sessionId);
  expect(paid).toMatchObject({ status: 'completed', paymentStatus: 'AUTHORISED' });
  const paymentReference = paid.paymentReference ?? '';

  // An idempotent replay answers the stored response, marked; another body with the key is a conflict.
  const key = `refund-${tag}`;
  const refund = await client.modifications.refund({ paymentReference, amount: EUR(1000), reason: 'Return' }, { idempotencyKey: key });
  expect(refund.status).toBe('pending');
  const replay = await client.modifications
    .refund({ paymentReference, amount: EUR(1000), reason: 'Return' }, { idempotencyKey: key })
    .withResponse();
  expect(replay.data.refundReference).toBe(refund.refundReference);
  expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
  expect(await rejection(client.modifications.refund({ paymentReference, amount: EUR(999) }, { idempotencyKey: key }))).toBeInstanceOf(
    IdempotencyConflictError,
  );
  // More than what is left to refund, and a capture of a payment that is no pre-authorisation: 400.
  expect(await rejection(client.modifications.refund({ paymentReference, amount: EUR(5000) }))).toBeInstanceOf(InvalidRequestError);
  expect(await rejection(client.modifications.capture({ paymentReference }))).toBeInstanceOf(InvalidRequestError);

  // Pre-authorisations: capture one; extend, then cancel another.
  const preAuths: string[] = [];
  for (const value of [3000, 4000]) {
    const made = await client.sessions.create({
      amount: EUR(value),
      urlOk: 'https://shop.example/ok',
      urlKo: 'https://shop.example/ko',
      isPreAuth: true,
    });
    await sandbox.paySession(environment, made.sessionId);
    preAuths.push((await client.sessions.retrieve(made.sessionId)).paymentReference ?? '');
  }
  const [captured = '', extended = ''] = preAuths;
  expect((await client.modifications.capture({ paymentReference: captured, amount: EUR(2000) })).status).toBe('received');
  expect((await client.modifications.extend({ paymentReference: extended })).paymentReference).toBe(extended);
  expect((await client.modifications.cancel({ paymentReference: extended })).status).toBe('received');

  // GET /payment/session/{sessionId}/modifications, before and after they resolve.
  expect((await client.sessions.listModifications(session.sessionId)).map((record) => record.status)).toEqual(['pending']);
  await settle();
  expect((await client.sessions.listModifications(session.sessionId)).map((record) => record.status)).toEqual(['success']);

  // GET /pos/terminals, all of them and the online ones.
  expect((await client.terminals.list()).map((terminal) => terminal.poiId)).toEqual(TEST_TERMINALS.map((terminal) => terminal.poiId));
  expect((await client.terminals.list({ syncFromProvider: true })).length).toBe(2);

  // POST /pos/payment: success (replayed), declined, busy, offline; a timeout recovered by the SDK.
  const sale = { poiId: ONLINE.poiId, amount: EUR(2000), customReference: `pos-${tag}` };
  const charged = await client.pos.createPayment(sale, { idempotencyKey: `pos-${tag}` });
  expect(charged.status).toBe('success');
  expect(await client.pos.createPayment(sale, { idempotencyKey: `pos-${tag}` })).toEqual(charged);
  expect((await client.pos.createPayment({ poiId: SECOND.poiId, amount: EUR(1000 + POS_TEST_ENDINGS.failed) })).status).toBe('failed');
  expect(
    await rejection(client.pos.createPayment({ poiId: ONLINE.poiId, amount: EUR(1000 + POS_TEST_ENDINGS.busy) }, { recover: false })),
  ).toBeInstanceOf(TerminalBusyError);
  expect(await rejection(client.pos.createPayment({ poiId: OFFLINE.poiId, amount: EUR(1000) }, { recover: false }))).toBeInstanceOf(
    TerminalCommunicationError,
  );
  const late = await client.pos.createPayment(
    { poiId: SECOND.poiId, amount: EUR(3000 + POS_TEST_ENDINGS.timeout) },
    { recover: { initialDelayMs: 0, pollIntervalMs: 20, maxWaitMs: 5_000 } },
  );
  expect(late).toMatchObject({ status: 'success', recovered: true });

  // A POS refund; GET /pos/payment/{posPaymentId}/modifications.
  await client.modifications.refund({ paymentReference: charged.posPaymentId, reason: 'Return' });
  expect((await client.pos.listModifications(charged.posPaymentId)).map((record) => record.operationType)).toEqual(['refund']);

  // Listings, walked page by page with their cursors.
  const sessionPages: number[] = [];
  for await (const page of client.sessions.list({ take: 2 }).pages()) sessionPages.push(page.items.length);
  expect(sessionPages).toEqual([2, 1]);
  const completed = await client.sessions.list({ status: 'completed', take: 100 }).toArray();
  expect(completed.length).toBe(3);
  const payments = await client.pos.list({ take: 1, order: 'desc' }).toArray();
  expect(payments.length).toBe(3);
  expect(payments.map((payment) => payment.status).sort()).toEqual(['failed', 'success', 'success']);
  const refunds = await client.modifications.list({ type: 'refund', take: 1 }).toArray();
  expect(refunds.length).toBe(2);
  expect((await client.modifications.list({ status: 'success' }).toArray()).length).toBeGreaterThanOrEqual(4);

  // Unknown records, and the other environment's key: 404 and 403 / 11008.
  const notFound = { status: 404 };
  expect(await rejection(client.sessions.retrieve(`${webcode}-EXT${t}-1700000000`))).toMatchObject(notFound);
  expect(await rejection(client.sessions.listModifications(`${webcode}-EXT${t}-1700000000`))).toMatchObject(notFound);
  expect(await rejection(client.pos.listModifications(`${webcode}-POSX${t}-1700000000`))).toMatchObject(notFound);
  const unknownPayment = await rejection(client.modifications.refund({ paymentReference: `${webcode}-PXT${t}-999999` }));
  expect(unknownPayment).toBeInstanceOf(ApiError);
  expect(unknownPayment).toMatchObject(notFound);
  const denied = await rejection(wrongKey.sessions.retrieve(session.sessionId));
  expect(denied).toBeInstanceOf(PermissionDeniedError);
  expect(denied).toMatchObject({ status: 403, code: 11008 });
}
