/**
 * The harness of issue 32's proof (test/follow-up-proof.test.ts and test/follow-up-proof-kills.test.ts):
 * a sandbox on 127.0.0.1, app processes of test/fixtures/follow-up-app.ts (bundled from src once per
 * test file) whose webhooks it sends to all of them, the orders of a scenario with the log line each
 * final outcome must leave, and the exactly-once check of an append-only log.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, expect } from 'vitest';
import { PaymentClient } from '../../src/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { posTestAmount, TEST_TERMINALS } from '../../src/testing/index.js';
import { openPage, submitForm } from '../sandbox/support.js';
import { bundleScript, type Child, ROOT, runChild, sleep, until } from './follow-up-queues.js';
import { postgresUrl, redisUrl, uniqueName } from './services.js';

export const SCALE = Math.max(1, Number(process.env.PROOF_ORDERS ?? 1));
export const KILL_MS = Number(process.env.PROOF_KILL_MS ?? 60_000);
export const APPS = 3;
const HORIZON_MS = 6_000;
export const pgUrl = postgresUrl();
export const redis = redisUrl();
export const EUR = (value: number) => ({ value, currency: 'EUR' as const });
export const poiIds = TEST_TERMINALS.filter((terminal) => terminal.online).map((terminal) => terminal.poiId);

let bundle: { file: string; remove(): void } | undefined;
const children = new Set<Child>();

/** Bundles the app once for the test file, and kills what is left of its processes at the end. */
export function useProofApps(): { folder: () => string } {
  beforeAll(async () => {
    bundle = await bundleScript(join(ROOT, 'test/fixtures/follow-up-app.ts'));
  }, 60_000);
  afterAll(() => {
    for (const child of children) child.process.kill('SIGKILL');
    bundle?.remove();
  });
  return { folder: () => join(bundle?.file ?? '', '..') };
}

export type Engine = 'pg-boss' | 'bullmq';

/** One run's world: the sandbox, its client, the apps, the log. */
export class World {
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

export async function world(engine: Engine, extraEnv: Record<string, string> = {}): Promise<World> {
  const sandbox = createSandbox({ posDelayMs: 0, seed: 32, webhookRetry: { attempts: 12, initialDelayMs: 1_000 } });
  const { baseUrl } = await sandbox.listen({ port: 0, host: '127.0.0.1' });
  const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, environment: 'test', maxRetries: 2 });
  return new World(engine, sandbox, client, baseUrl, extraEnv);
}

/** Creates the orders of one scenario, tracked by the apps; records each final outcome's key in `expected`; returns the never-opened sessions' target keys. */
export async function orders(w: World, prefix: string): Promise<string[]> {
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
export async function settle(w: World, also: string[] = []): Promise<void> {
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
export function checkOnce(w: World, also: string[], output: string, lines: string[]): void {
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

export async function dropAll(engine: Engine, name: string): Promise<void> {
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
