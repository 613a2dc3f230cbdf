/**
 * The proof of exactly-once webhooks (issue 24): four processes of examples/webhook-shop/shop.ts
 * share one store (PostgreSQL, then Redis, then one SQLite file) and receive the sandbox's webhooks
 * over 127.0.0.1 for paid and declined sessions and POS payments. The sandbox sends every event to
 * all four, and its fault rules send three copies of each at once, delay some and hold others back
 * until after a later copy (reorder). One shop is killed with SIGKILL in the middle of a callback
 * and restarted on its port; its claim must expire and a redelivery must run the callback. Then
 * the shops' append-only log (no unique constraint) must hold exactly one line per confirmed
 * payment: `fulfil` for each authorised one, `refuse` for each refused POS payment, and none for a
 * declined session (which emits no webhook).
 *
 * Runs against the built package (`npm run build`). PROOF_PAYMENTS (default 200) sets the payments
 * of a run, PROOF_RUNS (default 1) the runs per store.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../src/index.js';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import { posTestAmount, TEST_TERMINALS } from '../src/testing/index.js';
import { postgresUrl, redisUrl, uniqueName } from './support/services.js';

const ROOT = resolve(import.meta.dirname, '..');
const SHOP = join(ROOT, 'examples/webhook-shop/shop.ts');
const PAYMENTS = Math.max(12, Number(process.env.PROOF_PAYMENTS ?? 200));
const RUNS = Math.max(1, Number(process.env.PROOF_RUNS ?? 1));
/** Longer than a callback takes on a loaded machine (a confirm is a few loopback requests, seconds when starved). */
const LEASE_MS = 15_000;
/** The lease of the claim the killed process holds: the time the test waits for a redelivery to run it. */
const SHORT_LEASE_MS = 2_000;
const SHOPS = 4;
const REORDERED = 3;
const SLOW_ORDER = 'order-slow';

interface Shop {
  child: ChildProcess;
  port: number;
  exited: Promise<void>;
  stderr: () => string;
}

const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts one shop process; resolves once it listens. */
function startShop(env: Record<string, string>, port = 0): Promise<Shop> {
  const child = spawn(process.execPath, [SHOP], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  let err = '';
  const exited = new Promise<void>((done) =>
    child.once('exit', () => {
      running.delete(child);
      done();
    }),
  );
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  return new Promise((ready, fail) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (listening) ready({ child, port: Number(listening[1]), exited, stderr: () => err });
    });
    void exited.then(() => fail(new Error(`shop exited before listening:\n${err}`)));
  });
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** What a run is made of, by order id: what the log must say about it. */
type Expected = Map<string, 'fulfil' | 'refuse' | 'nothing'>;

/** The payments of a run besides the slow order: `PAYMENTS` in all, in these proportions. */
function plan(run: number) {
  const count = (share: number) => Math.max(2, Math.round(PAYMENTS * share));
  const ids = (kind: string, length: number) => Array.from({ length }, (_, index) => `order-${run}-${kind}-${index}`);
  const [declined, posPaid, posRefused] = [count(0.1), count(0.27), count(0.13)];
  return {
    reordered: ids('held', REORDERED),
    paid: ids('paid', PAYMENTS - 1 - REORDERED - declined - posPaid - posRefused),
    declined: ids('declined', declined),
    posPaid: ids('pos', posPaid),
    posRefused: ids('posko', posRefused),
  };
}

/** Runs `work` over `items`, `lanes` at a time. */
async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T, lane: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (next < items.length) await work(items[next++] as T, lane);
    }),
  );
}

interface Outcome {
  lines: string[];
  /** What the shops wrote on stderr (their `onError`), shown when the check fails. */
  errors: string;
  expected: Expected;
  killedPid: number;
  deliveries: ReturnType<Sandbox['records']['deliveries']>;
}

/** Waits for the slow order's marker file: the pid of the shop whose callback hangs in it. */
async function hungPid(marker: string): Promise<number> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(10)) {
    if (existsSync(marker) && readFileSync(marker, 'utf8') !== '') return Number(readFileSync(marker, 'utf8'));
  }
  throw new Error('no shop ran the slow order');
}

/** One run against `store`: four shops, the payments, the faults and the kill; resolves with what the log holds. */
async function prove(store: string, name: string, run: number): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-proof-'));
  const logPath = join(dir, 'fulfilled.log');
  const marker = join(dir, 'slow.pid');
  const sandbox = createSandbox({ posDelayMs: 0, seed: 24 + run, webhookRetry: { attempts: 12, initialDelayMs: 1_000 } });
  const shops: Shop[] = [];
  const stopped: Shop[] = [];
  try {
    const { baseUrl } = await sandbox.listen();
    const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, maxRetries: 0 });
    const env = {
      PAYMENT_SERVICE_API_KEY: sandbox.keys.test,
      PAYMENT_SERVICE_WEBCODE: sandbox.webcode,
      PAYMENT_SERVICE_BASE_URL: baseUrl,
      PAYMENT_SERVICE_ENVIRONMENT: 'test',
      SHOP_STORE: store,
      SHOP_STORE_NAME: name,
      SHOP_LOG: logPath,
      SHOP_LEASE_MS: String(LEASE_MS),
    };
    // The first shop hangs in the slow order's callback, and claims with a short lease, so that the
    // test waits seconds, not a whole lease, for the claim of the killed process to end. It receives
    // nothing else before it is killed: no other delivery of its can outlive that short lease.
    const slow = { ...env, SHOP_LEASE_MS: String(SHORT_LEASE_MS), SHOP_SLOW_ORDER: SLOW_ORDER, SHOP_SLOW_MARKER: marker };
    shops.push(...(await Promise.all([startShop(slow), ...Array.from({ length: SHOPS - 1 }, () => startShop(env))])));
    const urls = shops.map((shop) => `http://127.0.0.1:${shop.port}/webhooks`);

    const expected: Expected = new Map();
    const sessionIds = new Map<string, string>();
    const paySession = async (order: string, holderName: string) => {
      const session = await client.sessions.create({
        amount: { value: 2_500, currency: 'EUR' },
        urlOk: 'https://shop.example/paid',
        urlKo: 'https://shop.example/failed',
        customReference: order,
      });
      sessionIds.set(order, session.sessionId);
      await sandbox.paySession('test', session.sessionId, { holderName });
    };

    // The slow order goes to the first shop alone, once: its callback hangs there, where the shop is
    // killed with SIGKILL, then started again on its port (with the long lease, and no hang).
    expected.set(SLOW_ORDER, 'fulfil');
    sandbox.webhookUrls = [urls[0] ?? ''];
    // Resolves after the first attempt, which hangs until the kill.
    const slowPaid = paySession(SLOW_ORDER, 'Jane Tester');
    const killedPid = await hungPid(marker);
    const [victim] = shops;
    expect(victim?.child.pid).toBe(killedPid);
    victim?.child.kill('SIGKILL');
    await victim?.exited;
    if (victim) stopped.push(victim);
    sandbox.webhookUrls = urls;
    // Started again while the payments below go on: meanwhile the sandbox finds its port closed, and retries.
    const restarted = startShop(env, victim?.port).then((shop) => {
      shops[0] = shop;
    });
    // The slow order again, three copies to each of the four at once, while the dead claim may still hold.
    sandbox.faults.add({ event: 'AUTHORISATION', times: 1, effect: { type: 'duplicate', copies: 3 } });
    await sandbox.emitEvent('test', 'AUTHORISATION', sessionIds.get(SLOW_ORDER) ?? '');

    // The next AUTHORISATIONs are held back until another copy of theirs was sent; of the rest, one
    // in five comes 300 ms late, the others three times at once. Each goes to all four shops.
    sandbox.faults.add({ event: 'AUTHORISATION', times: REORDERED, effect: { type: 'reorder' } });
    sandbox.faults.add({ event: 'AUTHORISATION', probability: 0.2, effect: { type: 'delay', ms: 300 } });
    sandbox.faults.add({ event: 'AUTHORISATION', effect: { type: 'duplicate', copies: 3 } });
    const orders = plan(run);
    for (const order of orders.reordered) {
      expected.set(order, 'fulfil');
      await paySession(order, 'Jane Tester');
    }
    for (const order of [...orders.paid, ...orders.posPaid]) expected.set(order, 'fulfil');
    for (const order of orders.posRefused) expected.set(order, 'refuse');
    for (const order of orders.declined) expected.set(order, 'nothing');
    const sessions = [
      ...orders.paid.map((order) => ({ order, holderName: 'Jane Tester' })),
      ...orders.declined.map((order) => ({ order, holderName: 'DECLINED' })),
    ];
    const pos = [
      ...orders.posPaid.map((order) => ({ order, amount: posTestAmount('success') })),
      ...orders.posRefused.map((order) => ({ order, amount: posTestAmount('failed') })),
    ];
    const onlineTerminals = TEST_TERMINALS.filter((terminal) => terminal.online);
    await Promise.all([
      inLanes(sessions, 4, ({ order, holderName }) => paySession(order, holderName)),
      inLanes(pos, onlineTerminals.length, async ({ order, amount }, lane) => {
        const poiId = onlineTerminals[lane]?.poiId ?? '';
        await client.pos.createPayment({ poiId, amount: { value: amount, currency: 'EUR' }, customReference: order });
      }),
    ]);
    await Promise.all([slowPaid, restarted]);
    // Another copy of each held event is sent, and the held one after it.
    for (const order of orders.reordered) await sandbox.emitEvent('test', 'AUTHORISATION', sessionIds.get(order) ?? '');

    // Until every expected line is there. Whenever no attempt is in flight, no callback is running
    // (each runs inside a delivery), so only retries are awaited, and the dead claim's lease: the
    // sandbox clock is moved ahead so that the retries come now, not seconds later.
    const wanted = [...expected.values()].filter((what) => what !== 'nothing').length;
    const lines = () => (existsSync(logPath) ? readFileSync(logPath, 'utf8').split('\n').filter(Boolean) : []);
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(50)) {
      await sandbox.webhooksSettled();
      if (lines().length >= wanted) break;
      await sandbox.advanceClock(1_000);
    }
    // Every remaining retry now: each must be answered 200 (a duplicate), none left pending.
    await sandbox.advanceClock(3_600_000);
    await sandbox.webhooksSettled();
    for (const shop of shops) shop.child.kill('SIGTERM');
    await Promise.all(shops.map((shop) => shop.exited));
    const errors = [...stopped, ...shops].map((shop) => shop.stderr()).join('');
    return { lines: lines(), errors, expected, killedPid, deliveries: sandbox.records.deliveries() };
  } finally {
    for (const shop of shops) shop.child.kill('SIGKILL');
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Checks a run: exactly one line per confirmed payment, none for the rest, and every delivery answered 200 in the end. */
function check({ lines, errors, expected, killedPid, deliveries }: Outcome): void {
  const seen = new Map<string, string[]>();
  for (const line of lines) {
    const [action = '', order = ''] = line.split(' ');
    seen.set(order, [...(seen.get(order) ?? []), action]);
  }
  const doubles = [...seen]
    .filter(([, actions]) => actions.length > 1)
    .map(([order]) => lines.filter((line) => line.split(' ')[1] === order));
  const missing = [...expected].filter(([order, what]) => what !== 'nothing' && !seen.has(order)).map(([order]) => order);
  const wrong = [...seen].filter(([order, [action]]) => (expected.get(order) ?? 'unknown') !== action);
  expect({ doubles, missing, wrong }, `the shops' stderr:\n${errors}`).toEqual({ doubles: [], missing: [], wrong: [] });
  expect(lines).toHaveLength([...expected.values()].filter((what) => what !== 'nothing').length);

  // The killed process never wrote the slow order's line: another run of the callback did.
  const slow = lines.find((line) => line.startsWith(`fulfil ${SLOW_ORDER} `)) ?? '';
  expect(killedPid).toBeGreaterThan(0);
  expect(slow.split(' ')[3]).not.toBe(String(killedPid));

  // The sender saw it all: duplicates answered 200, deliveries during a claim 409, and in the end
  // every delivery (held, delayed, copied, cut by the kill) acknowledged with a 2xx.
  const answers = deliveries.flatMap((delivery) => delivery.attempts.map((attempt) => attempt.status));
  expect(answers).toContain(409);
  expect(
    deliveries.filter((delivery) => delivery.attempts.some((attempt) => attempt.responseBody?.includes('"duplicate":true'))),
  ).not.toHaveLength(0);
  expect(
    deliveries.filter((delivery) => !delivery.delivered).map((delivery) => [delivery.id, delivery.event.data.customReference]),
  ).toEqual([]);
  expect(deliveries.filter((delivery) => delivery.fault !== null)).not.toHaveLength(0);
}

async function dropTable(url: string, table: string): Promise<void> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url });
  await pool.query(`DROP TABLE IF EXISTS ${table}`);
  await pool.end();
}

async function dropKeys(url: string, prefix: string): Promise<void> {
  const { createClient } = await import('redis');
  const client = await createClient({ url }).connect();
  const keys = await client.keys(`${prefix}*`);
  if (keys.length > 0) await client.del(keys);
  client.destroy();
}

const timeout = RUNS * (150_000 + PAYMENTS * 1_000);
const pgUrl = postgresUrl();
const redis = redisUrl();

describe.concurrent('exactly one side effect per webhook across four shop processes', () => {
  it.skipIf(!pgUrl)('sharing PostgreSQL', { timeout }, async () => {
    for (let run = 0; run < RUNS; run++) {
      const table = uniqueName('webhook_proof');
      try {
        check(await prove(pgUrl ?? '', table, run));
      } finally {
        await dropTable(pgUrl ?? '', table);
      }
    }
  });

  it.skipIf(!redis)('sharing Redis', { timeout }, async () => {
    for (let run = 0; run < RUNS; run++) {
      const prefix = uniqueName('webhook_proof');
      try {
        check(await prove(redis ?? '', prefix, run));
      } finally {
        await dropKeys(redis ?? '', prefix);
      }
    }
  });

  it('sharing one SQLite file', { timeout }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-proof-db-'));
    try {
      for (let run = 0; run < RUNS; run++) check(await prove(`sqlite:${join(dir, 'events.db')}`, uniqueName('webhook_proof'), run));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
