/**
 * The proof of issue 32: for each of pg-boss (PostgreSQL store) and BullMQ (Redis store), three app
 * processes (test/fixtures/follow-up-app.ts: createWebhookHandler + createFollowUps + the queue +
 * the store) share the queue and the store, against one sandbox on 127.0.0.1 whose webhooks go to
 * all three. The orders: sessions paid, declined, cancelled, expired (the sandbox clock moved) and
 * never opened; POS payments that succeed, fail, and time out then complete late; refunds of
 * sessions and of POS payments. Side effects are counted in an append-only log (one line per
 * callback run, no unique anything). Scenarios:
 * (a) every webhook dropped: every final outcome acted on exactly once through follow-ups, and
 *     every never-opened session reaches onStale at the horizon;
 * (b) webhooks on, duplicated and reordered by fault rules, follow-ups on: exactly once per outcome;
 * (c) one process SIGKILLed mid-callback and started again: nothing doubled, nothing missing;
 * (d) pg-boss only: effects written through `context.transaction` (rows of a PostgreSQL table) while
 *     a process is SIGKILLed every 2 s for PROOF_KILL_MS (default a minute): 0 doubles.
 * PROOF_ORDERS scales the orders of (a)-(c) (default 1: 40 orders a scenario).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../src/index.js';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import { posTestAmount, TEST_TERMINALS } from '../src/testing/index.js';
import { openPage, submitForm } from './sandbox/support.js';
import { bundleScript, type Child, ROOT, runChild, sleep, until } from './support/follow-up-queues.js';
import { postgresUrl, redisUrl, uniqueName } from './support/services.js';

const SCALE = Math.max(1, Number(process.env.PROOF_ORDERS ?? 1));
const KILL_MS = Number(process.env.PROOF_KILL_MS ?? 60_000);
const APPS = 3;
const HORIZON_MS = 8_000;
const pgUrl = postgresUrl();
const redis = redisUrl();
const EUR = (value: number) => ({ value, currency: 'EUR' as const });
const poiIds = TEST_TERMINALS.filter((terminal) => terminal.online).map((terminal) => terminal.poiId);

let bundle: { file: string; remove(): void } | undefined;
const children = new Set<Child>();
beforeAll(async () => {
  bundle = await bundleScript(join(ROOT, 'test/fixtures/follow-up-app.ts'));
}, 60_000);
afterAll(() => {
  for (const child of children) child.process.kill('SIGKILL');
  bundle?.remove();
});

type Engine = 'pg-boss' | 'bullmq';

/** One run's world: the sandbox, its client, the apps, the log. */
class World {
  readonly apps: { child: Child; url: string }[] = [];
  readonly name = uniqueName('proof').toLowerCase();
  readonly log: string;
  readonly expected = new Set<string>();
  private next = 0;
  constructor(
    readonly engine: Engine,
    readonly sandbox: Sandbox,
    readonly client: PaymentClient,
    readonly baseUrl: string,
    readonly extraEnv: Record<string, string>,
  ) {
    this.log = join(bundle?.file ?? '', '..', `${this.name}.log`);
  }

  env(): Record<string, string> {
    return {
      APP_ENGINE: this.engine,
      APP_NAME: this.name,
      APP_LOG: this.log,
      APP_POSTGRES_URL: pgUrl ?? '',
      APP_REDIS_URL: redis ?? '',
      APP_HORIZON_MS: String(HORIZON_MS),
      PAYMENT_SERVICE_API_KEY: this.sandbox.keys.test,
      PAYMENT_SERVICE_WEBCODE: this.sandbox.webcode,
      PAYMENT_SERVICE_BASE_URL: this.baseUrl,
      ...this.extraEnv,
    };
  }

  /** Starts an app (at `index`, replacing a dead one) and points the sandbox's webhooks at every app. */
  async startApp(index = this.apps.length, extra: Record<string, string> = {}): Promise<void> {
    const child = runChild(bundle?.file ?? '', { ...this.env(), ...extra });
    children.add(child);
    void child.exited.then(() => children.delete(child));
    await until(() => /listening on (\S+)/.test(child.output()) || child.process.exitCode !== null, 60_000, 'an app to listen');
    const url = /listening on (\S+)/.exec(child.output())?.[1];
    if (!url) throw new Error(`the app did not start:\n${child.output()}`);
    this.apps[index] = { child, url };
    this.sandbox.webhookUrls = this.apps.map((app) => `${app.url}/webhooks`);
  }

  /** The app tracks a target, as it would when creating it: round robin over the live apps. */
  async track(target: object): Promise<void> {
    // Bounded: while processes are killed and started again, some attempts find none listening.
    let last = '';
    for (let attempt = 0; attempt < 300; attempt++, await sleep(attempt % APPS === 0 ? 100 : 0)) {
      const app = this.apps[this.next++ % this.apps.length];
      try {
        const response = await fetch(`${app?.url}/track`, { method: 'POST', body: JSON.stringify(target) });
        if (response.status === 204) return;
        last = `${response.status} ${await response.text()}`;
      } catch (error) {
        last = String(error); // that app is being killed: the next one tracks it
      }
    }
    throw new Error(`no app tracked ${JSON.stringify(target)}: ${last}`);
  }

  lines(): string[] {
    return existsSync(this.log) ? readFileSync(this.log, 'utf8').split('\n').filter(Boolean) : [];
  }

  async stop(): Promise<string> {
    const output = this.apps.map((app) => app.child.output()).join('');
    for (const app of this.apps) app.child.process.kill('SIGKILL');
    await Promise.all(this.apps.map((app) => app.child.exited));
    await this.sandbox.close();
    rmSync(this.log, { force: true });
    return output;
  }
}

async function world(engine: Engine, extraEnv: Record<string, string> = {}): Promise<World> {
  const sandbox = createSandbox({ posDelayMs: 0, seed: 32, webhookRetry: { attempts: 12, initialDelayMs: 1_000 } });
  const { baseUrl } = await sandbox.listen({ port: 0, host: '127.0.0.1' });
  const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, environment: 'test', maxRetries: 2 });
  return new World(engine, sandbox, client, baseUrl, extraEnv);
}

/** Creates the orders of one scenario, tracked by the apps; records each final outcome's key in `expected`; returns the never-opened sessions' target keys. */
async function orders(w: World, prefix: string): Promise<string[]> {
  const { client, sandbox, expected } = w;
  const count = (n: number) => n * SCALE;
  const session = async (order: string) => {
    const created = await client.sessions.create({
      amount: EUR(2_500),
      urlOk: 'https://shop.example/ok',
      urlKo: 'https://shop.example/ko',
      customReference: order,
    });
    await w.track({ sessionId: created.sessionId });
    return created;
  };
  const paid: { sessionId: string; paymentReference: string }[] = [];
  for (let i = 0; i < count(6); i++) {
    const created = await session(`${prefix}-paid-${i}`);
    await submitForm(created.paymentUrl);
    const paymentReference = (await client.sessions.retrieve(created.sessionId)).paymentReference ?? '';
    paid.push({ sessionId: created.sessionId, paymentReference });
    expected.add(`auth AUTHORISATION:${paymentReference}:AUTHORISED`);
  }
  for (let i = 0; i < count(3); i++) {
    const declined = await session(`${prefix}-declined-${i}`);
    await submitForm(declined.paymentUrl, { holderName: 'DECLINED' });
    expected.add(`ended SESSION_ENDED:${declined.sessionId}:failed`);
    const cancelled = await session(`${prefix}-cancelled-${i}`);
    await submitForm(cancelled.paymentUrl, { action: 'cancel' });
    expected.add(`ended SESSION_ENDED:${cancelled.sessionId}:cancelled`);
    const expired = await session(`${prefix}-expired-${i}`);
    await openPage(expired.paymentUrl);
    expected.add(`ended SESSION_ENDED:${expired.sessionId}:expired`);
  }
  const neverOpened: string[] = [];
  for (let i = 0; i < count(3); i++) neverOpened.push(`session:${(await session(`${prefix}-never-${i}`)).sessionId}`);
  // The opened sessions' 300 s run out (on the sandbox clock): they expire.
  await sandbox.advanceClock(301_000);

  const pos = async (outcome: 'success' | 'failed' | 'timeout', i: number) => {
    const payment = await client.pos.createPayment(
      { poiId: poiIds[i % poiIds.length] ?? '', amount: EUR(posTestAmount(outcome)), customReference: `${prefix}-pos-${outcome}-${i}` },
      { recover: false },
    );
    await w.track({ posPaymentId: payment.posPaymentId });
    return payment;
  };
  const posPaid: string[] = [];
  for (let i = 0; i < count(5); i++) {
    const payment = await pos('success', i);
    posPaid.push(payment.posPaymentId);
    expected.add(`auth AUTHORISATION:${payment.posPaymentId}:AUTHORISED`);
  }
  for (let i = 0; i < count(3); i++) expected.add(`auth AUTHORISATION:${(await pos('failed', i)).posPaymentId}:REFUSED`);
  const late: string[] = [];
  for (let i = 0; i < count(2); i++) late.push((await pos('timeout', i)).posPaymentId);
  // The timed-out POS payments complete late, on the sandbox clock.
  await sandbox.advanceClock(10_000);
  for (const id of late) expected.add(`auth AUTHORISATION:${id}:AUTHORISED`);

  for (let i = 0; i < count(2); i++) {
    const { sessionId, paymentReference } = paid[i] ?? { sessionId: '', paymentReference: '' };
    const refund = await client.modifications.refund({ paymentReference, amount: EUR(500), reason: 'damaged' });
    await w.track({ refundReference: refund.refundReference, sessionId });
    expected.add(`refund REFUND:${refund.refundReference}:success`);
    const posPaymentId = posPaid[i] ?? '';
    const posRefund = await client.modifications.refund({ paymentReference: posPaymentId, amount: EUR(100), reason: 'damaged' });
    await w.track({ refundReference: posRefund.refundReference, posPaymentId });
    expected.add(`refund REFUND:${posRefund.refundReference}:success`);
  }
  return neverOpened;
}

/** Waits until every expected line is in the log (and `also`), then a while more for a wrong second run to show. */
async function settle(w: World, also: string[] = []): Promise<void> {
  const wanted = [...w.expected, ...also];
  const seen = () => new Set(w.lines().map((line) => line.split(' ').slice(0, 2).join(' ')));
  await until(() => wanted.every((line) => seen().has(line)), 120_000, `every outcome in the log (${wanted.length})`).catch(
    (error: Error) => {
      const have = seen();
      throw new Error(`${error.message}; missing: ${wanted.filter((line) => !have.has(line)).join(', ')}`);
    },
  );
  await sleep(2_000);
}

/** Exactly one line per expected outcome (and per `also`), and no other line. */
function checkOnce(w: World, also: string[], output: string, lines: string[]): void {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const what = line.split(' ').slice(0, 2).join(' ');
    counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  const wanted = new Set([...w.expected, ...also]);
  const doubles = [...counts].filter(([, n]) => n > 1).map(([what]) => what);
  const missing = [...wanted].filter((what) => !counts.has(what));
  const unexpected = [...counts.keys()].filter((what) => !wanted.has(what));
  expect({ doubles, missing, unexpected }, `the apps' output:\n${output.slice(-4_000)}`).toEqual({
    doubles: [],
    missing: [],
    unexpected: [],
  });
}

async function dropAll(engine: Engine, name: string): Promise<void> {
  if (engine === 'pg-boss' && pgUrl) {
    const pool = new pg.Pool({ connectionString: pgUrl });
    await pool.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    await pool.query(`DROP TABLE IF EXISTS ${name}`);
    await pool.query(`DROP TABLE IF EXISTS ${name}_effects`);
    await pool.end();
  } else if (redis) {
    const client = await createClient({ url: redis }).connect();
    const keys = [...(await client.keys(`${name}:*`)), ...(await client.keys(`bull:${name}:*`))];
    if (keys.length > 0) await client.del(keys);
    client.destroy();
  }
}

const engines: [Engine, string | undefined][] = [
  ['pg-boss', pgUrl],
  ['bullmq', redis],
];

describe.each(engines)('every outcome acted on exactly once, three app processes on %s', (engine, url) => {
  it.skipIf(!url)(
    '(a) every webhook dropped: follow-ups act on each final outcome once; never-opened sessions reach onStale',
    { timeout: 240_000 },
    async () => {
      const w = await world(engine);
      try {
        w.sandbox.faults.add({ event: 'AUTHORISATION', effect: { type: 'drop' } });
        w.sandbox.faults.add({ event: 'REFUND', effect: { type: 'drop' } });
        for (let i = 0; i < APPS; i++) await w.startApp();
        const stale = (await orders(w, 'a')).map((key) => `stale ${key}`);
        await settle(w, stale);
        const [deliveries, lines] = [w.sandbox.records.deliveries(), w.lines()];
        checkOnce(w, stale, await w.stop(), lines);
        expect(deliveries.length).toBeGreaterThan(0);
        expect(deliveries.every((delivery) => delivery.attempts.length === 0)).toBe(true);
      } finally {
        await dropAll(engine, w.name);
      }
    },
  );

  it.skipIf(!url)(
    '(b) webhooks on, duplicated and reordered, with follow-ups: each outcome once across both sources',
    { timeout: 240_000 },
    async () => {
      const w = await world(engine, { APP_HORIZON_MS: '600000' });
      try {
        for (const event of ['AUTHORISATION', 'REFUND'] as const) {
          w.sandbox.faults.add({ event, times: 4, effect: { type: 'reorder' } });
          w.sandbox.faults.add({ event, probability: 0.3, effect: { type: 'delay', ms: 300 } });
          w.sandbox.faults.add({ event, effect: { type: 'duplicate', copies: 3 } });
        }
        for (let i = 0; i < APPS; i++) await w.startApp();
        await orders(w, 'b');
        await settle(w);
        await w.sandbox.advanceClock(3_600_000); // every webhook retry now: each answered as a duplicate
        await w.sandbox.webhooksSettled();
        await sleep(1_000);
        const [deliveries, lines] = [w.sandbox.records.deliveries(), w.lines()];
        checkOnce(w, [], await w.stop(), lines);
        expect(deliveries.filter((delivery) => delivery.fault !== null)).not.toHaveLength(0);
        // Both sources acted: webhooks were answered as duplicates of what the follow-ups (or other copies) did.
        expect(deliveries.some((delivery) => delivery.attempts.some((attempt) => attempt.responseBody?.includes('"duplicate":true')))).toBe(
          true,
        );
      } finally {
        await dropAll(engine, w.name);
      }
    },
  );

  it.skipIf(!url)(
    '(c) a process SIGKILLed mid-callback and started again: nothing doubled, nothing missing',
    { timeout: 240_000 },
    async () => {
      const marker = join(bundle?.file ?? '', '..', `${uniqueName('hang')}.pid`);
      const w = await world(engine, { APP_LEASE_MS: '5000', APP_HORIZON_MS: '600000' });
      try {
        w.sandbox.faults.add({ event: 'AUTHORISATION', effect: { type: 'drop' } });
        w.sandbox.faults.add({ event: 'REFUND', effect: { type: 'drop' } });
        // The first app hangs in its first callback run, whichever outcome that is.
        await w.startApp(0, { APP_HANG_MARKER: marker });
        for (let i = 1; i < APPS; i++) await w.startApp();
        const creating = orders(w, 'c');
        await until(() => existsSync(marker) && readFileSync(marker, 'utf8') !== '', 120_000, 'a callback to hang');
        const victim = w.apps[0];
        expect(String(victim?.child.process.pid)).toBe(readFileSync(marker, 'utf8'));
        victim?.child.process.kill('SIGKILL');
        await victim?.child.exited;
        const victimOutput = victim?.child.output() ?? '';
        await w.startApp(0); // again, on the same queue and store
        await creating;
        await settle(w);
        const lines = w.lines();
        checkOnce(w, [], victimOutput + (await w.stop()), lines);
        // The killed process wrote nothing: another run of the hung callback did.
        expect(lines.filter((line) => line.endsWith(` ${victim?.child.process.pid}`))).toEqual([]);
      } finally {
        rmSync(marker, { force: true });
        await dropAll(engine, w.name);
      }
    },
  );
});

describe('(d) effects through context.transaction on PostgreSQL with pg-boss, a process SIGKILLed every 2 s', () => {
  it.skipIf(!pgUrl)(`0 doubles over ${KILL_MS / 1000} s of kills`, { timeout: KILL_MS + 240_000 }, async () => {
    const name = uniqueName('proofd').toLowerCase();
    const table = `${name}_effects`;
    const pool = new pg.Pool({ connectionString: pgUrl, max: 2 });
    await pool.query(`CREATE TABLE ${table} (kind text NOT NULL, key text NOT NULL, pid integer NOT NULL)`);
    const w = await world('pg-boss', { APP_EFFECTS_TABLE: table, APP_LEASE_MS: '3000', APP_HORIZON_MS: '600000' });
    Object.defineProperty(w, 'name', { value: name });
    try {
      for (let i = 0; i < APPS; i++) await w.startApp();
      let kills = 0;
      const starting = new Map<number, Promise<void>>();
      // Every 2 s, an app that is up is SIGKILLed and a new one started in its place (not awaited:
      // the kills keep their pace; a slot whose new app is still starting is skipped).
      const killing = (async () => {
        for (const end = Date.now() + KILL_MS; Date.now() < end; await sleep(2_000)) {
          const index = [0, 1, 2].map((offset) => (kills + offset) % APPS).find((slot) => !starting.has(slot));
          if (index === undefined) continue;
          kills++;
          const app = w.apps[index];
          app?.child.process.kill('SIGKILL');
          await app?.child.exited;
          starting.set(
            index,
            w.startApp(index).finally(() => starting.delete(index)),
          );
        }
        await Promise.all(starting.values());
      })();
      // Orders all along the kills: sessions paid and POS payments, webhooks and follow-ups both on.
      let round = 0;
      while (!(await Promise.race([killing.then(() => true), sleep(0).then(() => false)]))) {
        const created = await w.client.sessions.create({
          amount: EUR(2_500),
          urlOk: 'https://shop.example/ok',
          urlKo: 'https://shop.example/ko',
          customReference: `d-${round}`,
        });
        await w.track({ sessionId: created.sessionId });
        await submitForm(created.paymentUrl);
        const reference = (await w.client.sessions.retrieve(created.sessionId)).paymentReference ?? '';
        w.expected.add(`auth AUTHORISATION:${reference}:AUTHORISED`);
        const outcome = round % 3 === 0 ? 'failed' : 'success';
        const payment = await w.client.pos.createPayment(
          { poiId: poiIds[round % poiIds.length] ?? '', amount: EUR(posTestAmount(outcome)) },
          { recover: false },
        );
        await w.track({ posPaymentId: payment.posPaymentId });
        w.expected.add(`auth AUTHORISATION:${payment.posPaymentId}:${outcome === 'success' ? 'AUTHORISED' : 'REFUSED'}`);
        round++;
        await sleep(100);
      }
      await killing;
      const rows = async () =>
        (await pool.query<{ kind: string; key: string }>(`SELECT kind, key FROM ${table}`)).rows.map((row) => `${row.kind} ${row.key}`);
      let have: string[] = [];
      for (const end = Date.now() + 120_000; Date.now() < end; await sleep(200)) {
        have = await rows();
        if ([...w.expected].every((line) => have.includes(line))) break;
        await w.sandbox.advanceClock(2_000); // webhook retries now
      }
      await sleep(2_000);
      have = await rows();
      const output = await w.stop();
      const doubles = have.filter((line, index) => have.indexOf(line) !== index);
      const missing = [...w.expected].filter((line) => !have.includes(line));
      // A tick is skipped while every slot's new app is still starting (a loaded machine): most land.
      console.log(`(d): ${kills} SIGKILLs in ${KILL_MS / 1000} s, ${have.length} effects, 0 doubles expected`);
      expect({ kills: kills >= Math.floor(KILL_MS / 4_000), doubles, missing }, output.slice(-4_000)).toEqual({
        kills: true,
        doubles: [],
        missing: [],
      });
      expect(have.length).toBe(w.expected.size);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS ${table}`);
      await pool.end();
      await dropAll('pg-boss', name);
    }
  });
});
