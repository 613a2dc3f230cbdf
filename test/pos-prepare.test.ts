/**
 * Issue 36, items 1 to 4, against the sandbox over real HTTP on 127.0.0.1: a charge prepared
 * before it is sent, POS calls that return before their deadline whatever step they are in, a
 * look that never sends, and follow-ups of a charge whose answer never came.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createFollowUps,
  createWebhookHandler,
  DEADLINE_LEAD_MS,
  memoryFollowUpQueue,
  memoryWebhookStore,
  PaymentClient,
  PosPaymentPendingError,
  type PosRecoveryState,
  posPaymentKey,
  RequestValidationError,
} from '../src/index.js';
import { TEST_TERMINALS } from '../src/testing/index.js';
import { useSandboxes } from './sandbox/support.js';

const sandboxes = useSandboxes();
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const poiId = TEST_TERMINALS.find((terminal) => terminal.online)?.poiId ?? '';
const EUR = (value: number) => ({ value, currency: 'EUR' as const });
/** How late past its deadline a call may settle here: the lead absorbs a timer's lateness; a loaded CI machine may add more. */
const OVERSHOOT_BOUND_MS = 500;
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function until(done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (const end = Date.now() + 30_000; Date.now() < end; await sleep(20)) if (await done()) return;
  throw new Error(`timed out waiting for ${what}`);
}

/** A client of `baseUrl` that counts its requests by method and path. */
function countingClient(sandbox: { keys: { test: string }; webcode: string; baseUrl: string }) {
  const seen: string[] = [];
  const client = new PaymentClient({
    apiKey: sandbox.keys.test,
    webcode: sandbox.webcode,
    baseUrl: sandbox.baseUrl,
    environment: 'test',
    maxRetries: 0,
    fetch: ((request: Request, init?: RequestInit) => {
      seen.push(`${request.method} ${new URL(request.url).pathname}`);
      return globalThis.fetch(request, init);
    }) as typeof fetch,
  });
  return { client, seen };
}

/** Settles `call`, returning what it threw and how long after `deadline` it settled (negative: before). */
async function settle(call: Promise<unknown>, deadline: number): Promise<{ error: unknown; overshootMs: number }> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  return { error, overshootMs: Date.now() - deadline };
}

describe('posPaymentKey', () => {
  it('derives one key per order and attempt, distinct across both, as visible ASCII', () => {
    expect(posPaymentKey('order-1042')).toBe('pos-payment:order-1042:1');
    expect(posPaymentKey('order-1042', 2)).toBe('pos-payment:order-1042:2');
    expect(posPaymentKey('order-1042', 1)).toBe(posPaymentKey('order-1042'));
    expect(posPaymentKey('a:1', 2)).not.toBe(posPaymentKey('a', 12));
    expect(posPaymentKey('commande n°7 é')).toMatch(/^[\x21-\x7e]+$/);
  });

  it('refuses an empty or too long order id and an attempt that is not a positive integer, naming it', () => {
    for (const [orderId, attempt, path] of [
      ['', 1, 'orderId'],
      ['x'.repeat(250), 1, 'orderId'],
      ['o', 0, 'attempt'],
      ['o', 1.5, 'attempt'],
      [42 as unknown as string, 1, 'orderId'],
    ] as const) {
      const error = (() => {
        try {
          posPaymentKey(orderId, attempt);
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).toBeInstanceOf(RequestValidationError);
      expect((error as RequestValidationError).issues.map((issue) => issue.path)).toEqual([path]);
    }
  });
});

describe('pos.preparePayment and createPayment(state)', () => {
  it('makes the state, plain JSON, without sending anything; createPayment(state) sends it once under its key', async () => {
    const { sandbox } = await sandboxes.start();
    const { client, seen } = countingClient(sandbox);
    const params = { poiId, amount: EUR(1500), customReference: 'order-1' };
    const state = client.pos.preparePayment(params, { idempotencyKey: posPaymentKey('order-1') });
    expect(seen).toEqual([]);
    expect(state).toEqual({ idempotencyKey: 'pos-payment:order-1:1', params, sentAt: expect.any(String) });
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    expect(Math.abs(Date.parse(state.sentAt) - Date.now())).toBeLessThan(5_000);
    expect(sandbox.records.posPayments({ environment: 'test' })).toHaveLength(0);

    const saved = JSON.parse(JSON.stringify(state)) as PosRecoveryState; // as read back from the app's database
    const first = await client.pos.createPayment(saved);
    const again = await client.pos.createPayment(saved);
    expect(first.status).toBe('success');
    expect(again.posPaymentId).toBe(first.posPaymentId);
    expect(sandbox.records.posPayments({ environment: 'test' })).toHaveLength(1);
    expect(sandbox.records.idempotency({ environment: 'test' }).map((entry) => entry.key)).toEqual(['pos-payment:order-1:1']);
  });

  it('makes a fresh UUID key without one given, and refuses bad params or a key at odds with the state, sending nothing', async () => {
    const { sandbox } = await sandboxes.start();
    const { client, seen } = countingClient(sandbox);
    const state = client.pos.preparePayment({ poiId, amount: EUR(1500) });
    expect(state.idempotencyKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(() => client.pos.preparePayment({ poiId, amount: { value: 1.5, currency: 'EUR' } })).toThrow(RequestValidationError);
    expect(() => client.pos.preparePayment({ poiId, amount: EUR(100) }, { idempotencyKey: 'bad key' })).toThrow(RequestValidationError);
    const odd = await client.pos.createPayment(state, { idempotencyKey: 'another' }).catch((error: unknown) => error);
    expect(odd).toBeInstanceOf(RequestValidationError);
    expect((odd as RequestValidationError).issues[0]?.path).toBe('options.idempotencyKey');
    const broken = await client.pos.createPayment({ idempotencyKey: 'k', params: undefined }).catch((error: unknown) => error);
    expect(broken).toBeInstanceOf(RequestValidationError);
    expect(seen).toEqual([]);
  });
});

describe('deadline', () => {
  it('createPayment stops before its deadline while the terminal works, with the state; checkPayment then reads pending, then success', async () => {
    const { sandbox } = await sandboxes.start({ posDelayMs: 2_000 });
    const { client, seen } = countingClient(sandbox);
    const state = client.pos.preparePayment({ poiId, amount: EUR(1500), customReference: 'order-2' });
    const deadline = Date.now() + 600;
    const { error, overshootMs } = await settle(client.pos.createPayment(state, { deadline }), deadline);
    expect(error).toBeInstanceOf(PosPaymentPendingError);
    expect(overshootMs).toBeLessThanOrEqual(OVERSHOOT_BOUND_MS);
    const pending = error as PosPaymentPendingError;
    expect(pending.state).toMatchObject({ idempotencyKey: state.idempotencyKey, params: state.params, sentAt: state.sentAt });
    expect((pending.cause as Error).name).toBe('DeadlineReached');

    seen.length = 0;
    const look = await client.pos.checkPayment(pending.state);
    expect(look.status).toBe('pending');
    expect(seen).toEqual(['GET /external/v1/test/pos/payments']);
    await until(async () => (await client.pos.checkPayment(state)).status === 'success', 'the charge to succeed');
    expect(seen.every((request) => request.startsWith('GET '))).toBe(true);
    expect(sandbox.records.posPayments({ environment: 'test' })).toHaveLength(1);
  });

  it('a deadline already reached sends nothing; the state reads unknown, and resumeRecovery starts it once', async () => {
    const { sandbox } = await sandboxes.start();
    const { client, seen } = countingClient(sandbox);
    const state = client.pos.preparePayment({ poiId, amount: EUR(1500), customReference: 'order-3' });
    const late = await client.pos.createPayment(state, { deadline: new Date(Date.now() + DEADLINE_LEAD_MS / 2) }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(PosPaymentPendingError);
    expect(seen).toEqual([]);
    expect(await client.pos.checkPayment(state)).toEqual({ status: 'unknown' });
    const done = await client.pos.resumeRecovery(state, { deadline: Date.now() + 20_000 });
    expect(done.status).toBe('success');
    expect((await client.pos.checkPayment(state)).status).toBe('success');
    expect(await client.pos.resumeRecovery(state)).toMatchObject({ posPaymentId: done.posPaymentId });
    expect(sandbox.records.posPayments({ environment: 'test' })).toHaveLength(1);
  });

  it('ends a Retry-After wait, a recovery poll and waitForFinalStatus before the deadline', async () => {
    const { sandbox } = await sandboxes.start();
    const client = new PaymentClient({
      apiKey: sandbox.keys.test,
      webcode: sandbox.webcode,
      baseUrl: sandbox.baseUrl,
      environment: 'test',
    });
    sandbox.faults.add({ route: 'POST /pos/payment', times: 1, effect: { type: 'error', status: 429, when: 'before', retryAfter: 30 } });
    let deadline = Date.now() + 700;
    let result = await settle(client.pos.createPayment({ poiId, amount: EUR(1500) }, { deadline }), deadline);
    expect(result.error).toBeInstanceOf(PosPaymentPendingError);
    expect(result.overshootMs).toBeLessThanOrEqual(OVERSHOOT_BOUND_MS);

    // Amount ending 99: the terminal answers `timeout`, recovery waits 10 s before its first step.
    deadline = Date.now() + 800;
    result = await settle(client.pos.createPayment({ poiId, amount: EUR(1599) }, { deadline }), deadline);
    expect(result.error).toBeInstanceOf(PosPaymentPendingError);
    expect(result.overshootMs).toBeLessThanOrEqual(OVERSHOOT_BOUND_MS);
    const id = (result.error as PosPaymentPendingError).posPaymentId as string;
    expect(id).toMatch(/-POSXT-/);

    deadline = Date.now() + 500;
    result = await settle(client.pos.waitForFinalStatus(id, { deadline, pollIntervalMs: 10_000 }), deadline);
    expect(result.error).toBeInstanceOf(PosPaymentPendingError);
    expect(result.overshootMs).toBeLessThanOrEqual(OVERSHOOT_BOUND_MS);
    const bad = await client.pos.waitForFinalStatus(id, { deadline: Number.NaN }).catch((e: unknown) => e);
    expect((bad as RequestValidationError).issues[0]?.path).toBe('options.deadline');
  });
});

describe('pos.checkPayment', () => {
  it('never takes an earlier attempt of the same order for this one', async () => {
    const { sandbox } = await sandboxes.start();
    const { client } = countingClient(sandbox);
    const params = { poiId, amount: EUR(1500), customReference: 'order-4' };
    const first = await client.pos.createPayment(client.pos.preparePayment(params, { idempotencyKey: posPaymentKey('order-4', 1) }));
    expect(first.status).toBe('success');
    await sleep(1_100); // record timestamps have whole seconds
    const second = client.pos.preparePayment(params, { idempotencyKey: posPaymentKey('order-4', 2) });
    expect(await client.pos.checkPayment(second)).toEqual({ status: 'unknown' });
    expect((await client.pos.checkPayment({ ...second, posPaymentId: first.posPaymentId })).status).toBe('success');
    const refused = await client.pos.checkPayment({}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RequestValidationError);
  });
});

describe('followUps.track({ pos: state })', () => {
  it('finishes a charge whose process died before sending, and acts on its outcome once with the webhook', async () => {
    const { sandbox } = await sandboxes.start({ posDelayMs: 300 });
    const client = new PaymentClient({
      apiKey: sandbox.keys.test,
      webcode: sandbox.webcode,
      baseUrl: sandbox.baseUrl,
      environment: 'test',
    });
    const store = memoryWebhookStore();
    const effects: string[] = [];
    const onAuthorisation = (_event: unknown, _request: Request, context: { key: string }) => void effects.push(context.key);
    const handler = createWebhookHandler({ store, confirm: client, onAuthorisation });
    const server = createServer((req, res) => void handler.node(req, res));
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    stops.push(() => new Promise((closed) => server.close(() => closed())));
    sandbox.webhookUrls = [`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`];

    const followUps = createFollowUps({ client, store, queue: memoryFollowUpQueue(), schedule: [50, 100], onAuthorisation });
    await followUps.start();
    stops.push(() => followUps.stop());
    const state = client.pos.preparePayment({ poiId, amount: EUR(1500), customReference: 'order-5' });
    await followUps.track({ pos: state }); // then the process died: nothing was sent
    await until(() => effects.length > 0, 'the outcome to be acted on');
    await sandbox.webhooksSettled();
    await sleep(500);
    expect(effects).toHaveLength(1);
    const [payment] = sandbox.records.posPayments({ environment: 'test' });
    expect(payment?.status).toBe('success');
    expect(effects[0]).toContain(payment?.posPaymentId);
    await expect(followUps.track({ pos: { sentAt: 'x' } } as never)).rejects.toThrow(TypeError);
  });
});
