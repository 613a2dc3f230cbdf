/**
 * The POS examples of examples/functions/ (an AWS Lambda handler, a Vercel route, a Cloudflare
 * Worker) against the sandbox over real HTTP on 127.0.0.1, each invocation a child process
 * (test/fixtures/pos-function.ts) SIGKILLed at its platform's limit, scaled down: the terminal takes
 * 3 s, the platform allows 2 s. The cashier's retry and the screen's status checks are new
 * processes. For every platform, whatever the first invocation lived to do (answer 202 before its
 * limit, die while the terminal works, die between saving the charge and sending it, a declined
 * card): one charge per attempt, never two successes, and the outcome learned and saved with the order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Order } from '../examples/functions/orders.ts';
import { sqliteOrderStore } from '../examples/functions/sqlite-order-store.ts';
import { posPaymentKey } from '../src/index.js';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import { posTestAmount, TEST_TERMINALS } from '../src/testing/index.js';
import {
  bundleRunner,
  chargesOf,
  type Invocation,
  type Invoked,
  invoke,
  killAll,
  overshoots,
  PLATFORMS,
  type Platform,
  sleep,
  type World,
} from './support/pos-functions.js';

/** Scaled down: a terminal of 3 s, a platform limit of 2 s, a margin of 400 ms before it. */
const TERMINAL_MS = 3_000;
const LIMIT_MS = 2_000;
const SETTINGS = {
  FN_MARGIN_MS: '400',
  FN_GRACE_MS: '1500',
  FN_RECOVER: JSON.stringify({ initialDelayMs: 200, pollIntervalMs: 200 }),
};
/** The bound of a deadline's overshoot (see test/pos-soak.test.ts): the SDK aims 100 ms before it. */
const OVERSHOOT_BOUND_MS = 500;
const poiId = TEST_TERMINALS.find((terminal) => terminal.online)?.poiId ?? '';

let world: World;
let store: ReturnType<typeof sqliteOrderStore>;
let bundle: Awaited<ReturnType<typeof bundleRunner>>;
let dir: string;

beforeAll(async () => {
  bundle = await bundleRunner();
  dir = mkdtempSync(join(tmpdir(), 'pos-functions-'));
  const sandbox: Sandbox = createSandbox({ posDelayMs: TERMINAL_MS, seed: 36 });
  await sandbox.listen();
  world = { runner: bundle.file, sandbox, ordersFile: join(dir, 'orders.db'), callsFile: join(dir, 'calls.jsonl') };
  store = sqliteOrderStore(world.ordersFile);
}, 60_000);

afterAll(async () => {
  killAll();
  store?.close();
  await world?.sandbox.close();
  bundle?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function newOrder(id: string, outcome: 'success' | 'failed' = 'success'): Promise<string> {
  const order: Order = { id, amountCents: posTestAmount(outcome, 1_500), currency: 'EUR', poiId, status: 'open', attempt: 0 };
  await store.save(order);
  return id;
}

const run = (platform: Platform, action: Invocation['action'], orderId: string, more: Partial<Invocation> = {}) =>
  invoke(world, { platform, action, orderId, limitMs: LIMIT_MS, settings: SETTINGS, ...more });

/** An invocation that lived: it answered, and before its limit (not killed), and exited 0. */
function answered(invoked: Invoked): NonNullable<Invoked['answer']> {
  expect({ killed: invoked.killed, exit: invoked.exit }, invoked.output).toEqual({ killed: undefined, exit: { code: 0, signal: null } });
  expect(invoked.answer, invoked.output).toBeDefined();
  return invoked.answer as NonNullable<Invoked['answer']>;
}

/** The cashier's screen: a status check (a new process) every 300 ms until the order is final (a bound of 40 checks). */
async function pollUntilFinal(platform: Platform, orderId: string): Promise<NonNullable<Invoked['answer']>> {
  for (let check = 0; check < 40; check++) {
    const status = answered(await run(platform, 'status', orderId));
    if (status.status === 200 && (status.body.status === 'paid' || status.body.status === 'failed')) return status;
    expect(status.status).toBe(202);
    await sleep(300);
  }
  throw new Error(`${orderId} not final after 40 status checks`);
}

/** The order charged once: one success in the sandbox, under the key of attempt 1, saved with the order. */
async function chargedOnce(orderId: string): Promise<void> {
  const charges = chargesOf(world.sandbox, orderId);
  expect(charges.all.map((payment) => [payment.customReference, payment.status])).toEqual([[`${orderId}/1`, 'success']]);
  const order = await store.load(orderId);
  expect(order).toMatchObject({ status: 'paid', attempt: 1, posPaymentId: charges.success[0]?.posPaymentId });
  expect(order?.charge?.idempotencyKey).toBe(posPaymentKey(orderId, 1));
  const keys = world.sandbox.records.idempotency({ environment: 'test' }).map((entry) => entry.key);
  expect(keys.filter((key) => key.startsWith(posPaymentKey(orderId, 1).slice(0, -1)))).toEqual([posPaymentKey(orderId, 1)]);
}

describe.each(PLATFORMS)('examples/functions: %s', (platform) => {
  it('answers 202 before its limit while the terminal works; the retry reuses the saved charge; the status route learns it: one charge', async () => {
    const orderId = await newOrder(`${platform}-answers`);
    const first = answered(await run(platform, 'charge', orderId));
    expect(first).toMatchObject({ status: 202, body: { status: 'pending', attempt: 1 } });
    // The cashier presses "charge" again: the same saved state, the same key, the same charge.
    const retry = answered(await run(platform, 'charge', orderId));
    expect([200, 202]).toContain(retry.status);
    expect(retry.body.attempt).toBe(1);
    expect(await pollUntilFinal(platform, orderId)).toMatchObject({ status: 200, body: { status: 'paid' } });
    await chargedOnce(orderId);
  });

  it('is SIGKILLed while the terminal works, before any answer; new processes check, retry and learn it: one charge', async () => {
    const orderId = await newOrder(`${platform}-killed`);
    // A platform cutting the function sooner than its deadline (a cold start that ate the margin).
    const first = await run(platform, 'charge', orderId, { kill: { phase: 'sending', afterMs: 300 } });
    expect({ killed: first.killed, signal: first.exit.signal, answer: first.answer }).toEqual({
      killed: 'sending',
      signal: 'SIGKILL',
      answer: undefined,
    });
    // Saved before sending: the state is there, and the charge is at the terminal.
    expect((await store.load(orderId))?.charge?.idempotencyKey).toBe(posPaymentKey(orderId, 1));
    expect(answered(await run(platform, 'status', orderId)).status).toBe(202);
    const retry = answered(await run(platform, 'charge', orderId));
    expect([200, 202]).toContain(retry.status);
    expect(await pollUntilFinal(platform, orderId)).toMatchObject({ status: 200, body: { status: 'paid' } });
    await chargedOnce(orderId);
  });

  it('is SIGKILLed after saving the charge, before sending it; the status route resends it after the grace period: one charge', async () => {
    const orderId = await newOrder(`${platform}-unsent`);
    const first = await run(platform, 'charge', orderId, {
      kill: { phase: 'saved', afterMs: 100 },
      settings: { ...SETTINGS, FN_HOLD_SAVE_MS: '1500' },
    });
    expect({ killed: first.killed, phases: first.phases.map(([name]) => name) }).toEqual({ killed: 'saved', phases: ['started', 'saved'] });
    expect(chargesOf(world.sandbox, orderId).all).toEqual([]);
    // No trace of it within the grace period: 202, nothing sent (checkPayment only reads).
    const early = answered(await run(platform, 'status', orderId));
    expect(early.status).toBe(202);
    await sleep(1_600);
    expect(await pollUntilFinal(platform, orderId)).toMatchObject({ status: 200, body: { status: 'paid' } });
    await chargedOnce(orderId);
  });

  it('a declined card is final; only then is the next press a new attempt with a new key', async () => {
    const orderId = await newOrder(`${platform}-declined`, 'failed');
    expect(answered(await run(platform, 'charge', orderId)).status).toBe(202);
    expect(await pollUntilFinal(platform, orderId)).toMatchObject({ status: 200, body: { status: 'failed', attempt: 1 } });
    expect(answered(await run(platform, 'charge', orderId)).body).toMatchObject({ status: 'pending', attempt: 2 });
    expect(await pollUntilFinal(platform, orderId)).toMatchObject({ status: 200, body: { status: 'failed', attempt: 2 } });
    const charges = chargesOf(world.sandbox, orderId);
    expect(charges.all.map((payment) => [payment.customReference, payment.status])).toEqual([
      [`${orderId}/1`, 'failed'],
      [`${orderId}/2`, 'failed'],
    ]);
    expect((await store.load(orderId))?.charge?.idempotencyKey).toBe(posPaymentKey(orderId, 2));
  });
});

it('every POS call with a deadline settled before it (within the bound)', () => {
  const measured = overshoots(world.callsFile);
  expect(measured.length).toBeGreaterThan(20);
  const worst = Math.max(...measured.map((call) => call.overshoot));
  console.log(`examples/functions: ${measured.length} POS calls with a deadline, latest settled ${worst} ms after its deadline`);
  expect(worst).toBeLessThanOrEqual(OVERSHOOT_BOUND_MS);
});
