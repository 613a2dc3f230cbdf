/**
 * createFollowUps with memoryFollowUpQueue against the sandbox over real HTTP on 127.0.0.1: every
 * final outcome (sessions paid, declined, cancelled, expired; POS payments that succeed, fail, or
 * time out and complete late; refunds) is acted on exactly once with every webhook dropped; a
 * webhook and a follow-up racing on one outcome run it once; a never-opened session reaches
 * onStale at the horizon; a callback that throws is run again by the next check.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type AuthorisationEvent,
  ConfigurationError,
  createFollowUps,
  createWebhookHandler,
  DEFAULT_FOLLOW_UP_SCHEDULE,
  type FollowUpJob,
  type FollowUpQueue,
  type FollowUpTarget,
  followUpTargetKey,
  memoryFollowUpQueue,
  memoryWebhookStore,
  PaymentClient,
  type RefundEvent,
  type Session,
  type WebhookContext,
} from '../src/index.js';
import { sqliteWebhookStore } from '../src/stores/sqlite.js';
import { posTestAmount, TEST_TERMINALS } from '../src/testing/index.js';
import { openPage, submitForm, useSandboxes } from './sandbox/support.js';

const sandboxes = useSandboxes();
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** Polls `done` every 20 ms for at most 30 s (the machine is loaded: generous, never a speed assumption). */
async function until(done: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(20)) if (done()) return;
  throw new Error(`timed out waiting for ${what}`);
}

const poiId = TEST_TERMINALS.find((terminal) => terminal.online)?.poiId ?? '';
const EUR = (value: number) => ({ value, currency: 'EUR' as const });
const session = (client: PaymentClient, order: string) =>
  client.sessions.create({
    amount: EUR(2_500),
    urlOk: 'https://shop.example/ok',
    urlKo: 'https://shop.example/ko',
    customReference: order,
  });

/** Records each callback run as `<what> <key>`. */
function recorder() {
  const runs: string[] = [];
  const contexts: unknown[] = [];
  return {
    runs,
    contexts,
    onAuthorisation: (_event: AuthorisationEvent, request: Request, context: WebhookContext) => {
      expect(request).toBeInstanceOf(Request);
      contexts.push(context);
      runs.push(`${context.confirmed?.outcome} ${context.key}`);
    },
    onRefund: (_event: RefundEvent, _request: Request, context: WebhookContext) => {
      contexts.push(context);
      runs.push(`${context.confirmed?.outcome} ${context.key}`);
    },
    onSessionEnded: (ended: Session, context: { key: string; confirmed: Session }) => {
      expect(context.confirmed).toBe(ended);
      runs.push(`ended ${context.key}`);
    },
  };
}

/** A webhook endpoint on 127.0.0.1 for `handler`. */
async function serve(handler: ReturnType<typeof createWebhookHandler>): Promise<string> {
  const server = createServer((req, res) => void handler.node(req, res));
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  stops.push(
    () =>
      new Promise((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

function start(followUps: ReturnType<typeof createFollowUps>): Promise<void> {
  stops.push(() => followUps.stop());
  return followUps.start();
}

describe('createFollowUps over the sandbox, every webhook dropped', () => {
  it('acts once on every final outcome: sessions, POS payments (a late one too) and refunds', { timeout: 90_000 }, async () => {
    const { sandbox, test: client } = await sandboxes.start();
    const store = memoryWebhookStore();
    const webhookRuns: string[] = [];
    // The app's webhook endpoint: it would act too, but every delivery is dropped.
    sandbox.webhookUrls = [
      await serve(
        createWebhookHandler({ store, confirm: client, onAuthorisation: (event) => void webhookRuns.push(event.data.paymentReference) }),
      ),
    ];
    sandbox.faults.add({ event: 'AUTHORISATION', effect: { type: 'drop' } });
    sandbox.faults.add({ event: 'REFUND', effect: { type: 'drop' } });
    const seen = recorder();
    // The follow-ups' own client: every request it sends is recorded, to show that they only read.
    const methods: string[] = [];
    const reader = new PaymentClient({
      apiKey: sandbox.keys.test,
      webcode: sandbox.webcode,
      baseUrl: sandbox.baseUrl,
      environment: 'test',
      maxRetries: 0,
      fetch: (input, init) => {
        methods.push(init?.method ?? (input instanceof Request ? input.method : 'GET'));
        return fetch(input, init);
      },
    });
    const followUps = createFollowUps({ client: reader, store, queue: memoryFollowUpQueue(), schedule: [20, 50], ...seen });
    await start(followUps);

    const paid = await session(client, 'paid');
    await followUps.track({ sessionId: paid.sessionId });
    await followUps.track({ sessionId: paid.sessionId });
    await submitForm(paid.paymentUrl);
    const declined = await session(client, 'declined');
    await submitForm(declined.paymentUrl, { holderName: 'DECLINED' });
    const cancelled = await session(client, 'cancelled');
    await submitForm(cancelled.paymentUrl, { action: 'cancel' });
    const expired = await session(client, 'expired');
    await openPage(expired.paymentUrl);
    for (const { sessionId } of [declined, cancelled, expired]) await followUps.track({ sessionId });
    await sandbox.advanceClock(301_000);

    const pos = async (outcome: 'success' | 'failed' | 'timeout') => {
      const payment = await client.pos.createPayment({ poiId, amount: EUR(posTestAmount(outcome)) }, { recover: false });
      await followUps.track({ posPaymentId: payment.posPaymentId });
      return payment;
    };
    const [posPaid, posFailed, posLate] = [await pos('success'), await pos('failed'), await pos('timeout')];
    expect(posLate.status).toBe('timeout');

    const paymentReference = (await client.sessions.retrieve(paid.sessionId)).paymentReference ?? '';
    const refundSession = await client.modifications.refund({ paymentReference, amount: EUR(500), reason: 'damaged' });
    const refundPos = await client.modifications.refund({ paymentReference: posPaid.posPaymentId, amount: EUR(100), reason: 'x' });
    await followUps.track({ refundReference: refundSession.refundReference, sessionId: paid.sessionId });
    await followUps.track({ refundReference: refundPos.refundReference, posPaymentId: posPaid.posPaymentId });

    const expected = [
      `authorised AUTHORISATION:${paymentReference}:AUTHORISED`,
      `ended SESSION_ENDED:${declined.sessionId}:failed`,
      `ended SESSION_ENDED:${cancelled.sessionId}:cancelled`,
      `ended SESSION_ENDED:${expired.sessionId}:expired`,
      `authorised AUTHORISATION:${posPaid.posPaymentId}:AUTHORISED`,
      `refused AUTHORISATION:${posFailed.posPaymentId}:REFUSED`,
      `refunded REFUND:${refundSession.refundReference}:success`,
      `refunded REFUND:${refundPos.refundReference}:success`,
    ];
    await until(() => expected.every((run) => seen.runs.includes(run)), 'the outcomes');
    // The timed-out POS payment completes late, on the sandbox clock: the next check acts on it.
    expect(seen.runs.some((run) => run.includes(posLate.posPaymentId))).toBe(false);
    await sandbox.advanceClock(10_000);
    const late = `authorised AUTHORISATION:${posLate.posPaymentId}:AUTHORISED`;
    await until(() => seen.runs.includes(late), 'the late POS payment');
    // More checks would have come by now had any follow-up gone on: nothing runs twice.
    await sleep(300);
    expect([...seen.runs].sort()).toEqual([...expected, late].sort());
    expect(webhookRuns).toEqual([]);
    expect(methods.length).toBeGreaterThan(10);
    expect(new Set(methods)).toEqual(new Set(['GET']));
    expect(sandbox.records.deliveries().every((delivery) => delivery.attempts.length === 0)).toBe(true);

    // The context is the webhook handler's: the key, the record read as `confirmed`, and transaction.
    expect(seen.contexts[0]).toMatchObject({
      key: `AUTHORISATION:${paymentReference}:AUTHORISED`,
      confirmed: { kind: 'session', outcome: 'authorised', record: { sessionId: paid.sessionId, status: 'completed' } },
      transaction: expect.any(Function),
    });
    // Every key is done in the store, as the handler would have left it.
    for (const run of [...expected, late]) expect(await store.claim(run.split(' ')[1] ?? '', 1_000)).toEqual({ status: 'done' });
  });

  it('calls onStale once for a session never opened, at a short horizon, and stops checking', { timeout: 60_000 }, async () => {
    const { test: client } = await sandboxes.start();
    let reads = 0;
    const reader = {
      pos: client.pos,
      sessions: {
        retrieve: (id: string) => {
          reads += 1;
          return client.sessions.retrieve(id);
        },
        listModifications: (id: string) => client.sessions.listModifications(id),
      },
    };
    const onStale = vi.fn();
    const onSessionEnded = vi.fn();
    const followUps = createFollowUps({
      client: reader,
      store: memoryWebhookStore(),
      queue: memoryFollowUpQueue(),
      schedule: [20, 40],
      horizonMs: 400,
      onSessionEnded,
      onStale,
    });
    await start(followUps);
    const pending = await session(client, 'never-opened');
    await followUps.track({ sessionId: pending.sessionId });
    await until(() => onStale.mock.calls.length > 0, 'onStale');
    const readsAtStale = reads;
    await sleep(300);
    expect(onStale.mock.calls).toEqual([[{ sessionId: pending.sessionId }]]);
    expect(reads).toBe(readsAtStale);
    expect(reads).toBeGreaterThan(1);
    expect(onSessionEnded).not.toHaveBeenCalled();
  });
});

describe('createFollowUps: a target that cannot be read', () => {
  it('reports each failed read to onError, and goes stale at the horizon instead of being checked for ever', {
    timeout: 60_000,
  }, async () => {
    const { test: client } = await sandboxes.start();
    const onStale = vi.fn();
    const errors: unknown[] = [];
    const followUps = createFollowUps({
      client,
      store: memoryWebhookStore(),
      queue: memoryFollowUpQueue(),
      schedule: [20, 40],
      horizonMs: 300,
      onSessionEnded: () => {},
      onStale,
      onError: (error) => void errors.push(error),
    });
    await start(followUps);
    await followUps.track({ sessionId: 'SANDBOX-EXTT-1700000000999' });
    await until(() => onStale.mock.calls.length > 0, 'onStale');
    const reported = errors.length;
    await sleep(300);
    expect(errors.length).toBe(reported);
    expect(reported).toBeGreaterThan(1);
    expect(onStale).toHaveBeenCalledTimes(1);
  });
});

describe('createFollowUps and the webhook handler on one store', () => {
  it('runs an outcome once when its webhook and a follow-up race, and answers the later webhook as a duplicate', {
    timeout: 90_000,
  }, async () => {
    const { sandbox, test: client } = await sandboxes.start({ webhookRetry: { attempts: 5, initialDelayMs: 50 } });
    const store = memoryWebhookStore();
    const effects: string[] = [];
    const effect = (source: string) => (event: AuthorisationEvent) => void effects.push(`${event.data.paymentReference} ${source}`);
    sandbox.webhookUrls = [await serve(createWebhookHandler({ store, confirm: client, onAuthorisation: effect('webhook') }))];
    // Three copies of each webhook at once, while follow-ups check every few ms.
    sandbox.faults.add({ event: 'AUTHORISATION', effect: { type: 'duplicate', copies: 3 } });
    const followUps = createFollowUps({
      client,
      store,
      queue: memoryFollowUpQueue(),
      schedule: [1, 5],
      onAuthorisation: effect('follow-up'),
    });
    await start(followUps);
    const references: string[] = [];
    for (let index = 0; index < 6; index++) {
      const created = await session(client, `race-${index}`);
      await followUps.track({ sessionId: created.sessionId });
      const payment = await client.pos.createPayment({ poiId, amount: EUR(posTestAmount('success')) }, { recover: false });
      await followUps.track({ posPaymentId: payment.posPaymentId });
      await submitForm(created.paymentUrl);
      references.push((await client.sessions.retrieve(created.sessionId)).paymentReference ?? '', payment.posPaymentId);
    }
    await until(() => references.every((reference) => effects.some((line) => line.startsWith(`${reference} `))), 'every effect');
    await sandbox.webhooksSettled();
    await sleep(200);
    expect(effects.map((line) => line.split(' ')[0]).sort()).toEqual([...references].sort());
    // Every delivery ends acknowledged; those that came after the outcome ran are duplicates.
    const deliveries = sandbox.records.deliveries();
    expect(deliveries.every((delivery) => delivery.delivered)).toBe(true);
    expect(deliveries.some((delivery) => delivery.attempts.some((attempt) => attempt.responseBody?.includes('"duplicate":true')))).toBe(
      true,
    );
  });

  it('answers a webhook that arrives after the follow-up acted as a duplicate', { timeout: 60_000 }, async () => {
    const { sandbox, test: client } = await sandboxes.start();
    const store = memoryWebhookStore();
    const onWebhook = vi.fn();
    const url = await serve(createWebhookHandler({ store, confirm: client, onAuthorisation: onWebhook }));
    const seen = recorder();
    const followUps = createFollowUps({ client, store, queue: memoryFollowUpQueue(), schedule: [10], ...seen });
    await start(followUps);
    const created = await session(client, 'late-webhook');
    await submitForm(created.paymentUrl);
    await followUps.track({ sessionId: created.sessionId });
    await until(() => seen.runs.length === 1, 'the follow-up');
    sandbox.webhookUrls = [url];
    const [delivery] = await sandbox.emitEvent('test', 'AUTHORISATION', created.sessionId);
    expect(delivery?.attempts.at(-1)).toMatchObject({ status: 200, responseBody: '{"received":true,"duplicate":true}' });
    expect(onWebhook).not.toHaveBeenCalled();
  });

  it('finds a key done by the webhook and does not act again', { timeout: 60_000 }, async () => {
    const { sandbox, test: client } = await sandboxes.start();
    const store = memoryWebhookStore();
    const onWebhook = vi.fn();
    sandbox.webhookUrls = [await serve(createWebhookHandler({ store, confirm: client, onAuthorisation: onWebhook }))];
    const seen = recorder();
    let reads = 0;
    const reader = {
      ...client,
      sessions: {
        ...client.sessions,
        retrieve: (id: string) => {
          reads += 1;
          return client.sessions.retrieve(id);
        },
      },
    };
    const followUps = createFollowUps({
      client: reader as unknown as PaymentClient,
      store,
      queue: memoryFollowUpQueue(),
      schedule: [10],
      ...seen,
    });
    const created = await session(client, 'webhook-first');
    await submitForm(created.paymentUrl);
    await until(() => onWebhook.mock.calls.length === 1, 'the webhook');
    await start(followUps);
    await followUps.track({ sessionId: created.sessionId });
    await until(() => reads === 1, 'the check');
    await sleep(200);
    expect(seen.runs).toEqual([]);
    expect(reads).toBe(1);
  });
});

describe('createFollowUps: failures, duplicates and bad input', () => {
  it('runs a callback that threw again at the next check, once it succeeds, and reports the error', { timeout: 60_000 }, async () => {
    const { test: client } = await sandboxes.start();
    const store = memoryWebhookStore();
    let calls = 0;
    const onError = vi.fn();
    const followUps = createFollowUps({
      client,
      store,
      queue: memoryFollowUpQueue(),
      schedule: [10],
      onError,
      onAuthorisation: () => {
        calls += 1;
        if (calls < 3) throw new Error(`flaky ${calls}`);
      },
    });
    await start(followUps);
    const created = await session(client, 'flaky');
    await submitForm(created.paymentUrl);
    await followUps.track({ sessionId: created.sessionId });
    await until(() => calls === 3, 'the third run');
    await sleep(200);
    expect(calls).toBe(3);
    expect(onError.mock.calls.map(([error]) => (error as Error).message)).toEqual(['flaky 1', 'flaky 2']);
    expect(onError.mock.calls[0]?.[1]).toEqual({ sessionId: created.sessionId });
  });

  it('tracks a target twice as one follow-up', async () => {
    const scheduled: [FollowUpJob, number][] = [];
    const queue: FollowUpQueue = {
      schedule: async (job, delay) => void scheduled.push([job, delay]),
      start: async () => {},
      stop: async () => {},
    };
    const followUps = createFollowUps({ client: fakeClient(), store: memoryWebhookStore(), queue, onSessionEnded: () => {} });
    await followUps.track({ sessionId: 'SHOP-EXTT-1' });
    await followUps.track({ sessionId: 'SHOP-EXTT-1', refundReference: undefined } as FollowUpTarget);
    expect(scheduled.map(([job, delay]) => [job.id, job.check, delay])).toEqual([
      ['session:SHOP-EXTT-1#0', 0, 30_000],
      ['session:SHOP-EXTT-1#0', 0, 30_000],
    ]);
    // The same job id twice: the queue keeps one.
    const memory = memoryFollowUpQueue();
    const ran: string[] = [];
    for (const [job] of scheduled) await memory.schedule(job, 0);
    await memory.start(async (job) => void ran.push(job.id), { concurrency: 2 });
    await until(() => ran.length > 0, 'the job');
    await sleep(50);
    await memory.stop();
    expect(ran).toEqual(['session:SHOP-EXTT-1#0']);
  });

  it('refuses a malformed target with a TypeError and schedules nothing', async () => {
    const schedule = vi.fn(async () => {});
    const followUps = createFollowUps({
      client: fakeClient(),
      store: memoryWebhookStore(),
      queue: { schedule, start: async () => {}, stop: async () => {} },
      onAuthorisation: () => {},
    });
    for (const bad of [
      undefined,
      'SHOP-EXTT-1',
      {},
      { sessionId: '' },
      { sessionId: 42 },
      { sessionId: 'a', posPaymentId: 'b' },
      { refundReference: 'r' },
      { sessionId: 'a', extra: 1 },
      { posPaymentId: 'x'.repeat(201) },
    ]) {
      await expect(followUps.track(bad as never), JSON.stringify(bad)).rejects.toThrow(TypeError);
    }
    await expect(followUps.track({ sessionId: 'a', posPaymentId: 'b' } as never)).rejects.toThrow(
      'A follow-up target must be { sessionId }, { posPaymentId }, { refundReference, sessionId } or { refundReference, posPaymentId }, not { sessionId, posPaymentId }',
    );
    expect(schedule).not.toHaveBeenCalled();
  });

  it('refuses malformed options with a TypeError naming the option', () => {
    const good = { client: fakeClient(), store: memoryWebhookStore(), queue: memoryFollowUpQueue(), onAuthorisation: () => {} };
    const cases: [Record<string, unknown>, string][] = [
      [{ client: {} }, 'client must be a PaymentClient'],
      [{ store: {} }, 'store must be a WebhookStore'],
      [{ queue: undefined }, 'queue must be a FollowUpQueue'],
      [{ onAuthorisation: undefined }, 'at least one of onAuthorisation, onRefund and onSessionEnded'],
      [{ onStale: 'x' }, 'onStale must be a function'],
      [{ schedule: [] }, 'schedule must be a non-empty array'],
      [{ schedule: [1_000, 0] }, 'schedule[1] must be a positive integer'],
      [{ horizonMs: 1.5 }, 'horizonMs must be a positive integer'],
      [{ leaseMs: -1 }, 'leaseMs must be a positive integer'],
    ];
    for (const [change, message] of cases) expect(() => createFollowUps({ ...good, ...change } as never)).toThrow(message);
    expect(() => createFollowUps(null as never)).toThrow(TypeError);
    expect(DEFAULT_FOLLOW_UP_SCHEDULE).toEqual([30_000, 60_000, 120_000, 300_000, 900_000]);
  });

  it('gives distinct targets distinct keys', () => {
    expect(followUpTargetKey({ sessionId: 'S-1' })).toBe('session:S-1');
    expect(followUpTargetKey({ posPaymentId: 'P-1' })).toBe('pos:P-1');
    expect(followUpTargetKey({ refundReference: 'R-1', sessionId: 'S-1' })).toBe('refund:session:S-1:R-1');
    expect(followUpTargetKey({ refundReference: 'R-1', posPaymentId: 'P-1' })).toBe('refund:pos:P-1:R-1');
    expect(followUpTargetKey({ refundReference: 'c', sessionId: 'a:b' })).not.toBe(
      followUpTargetKey({ refundReference: 'b:c', sessionId: 'a' }),
    );
  });

  it('rejects context.transaction on a store that cannot run one, before running fn', async () => {
    const { test: client } = await sandboxes.start();
    const fn = vi.fn();
    const errors: unknown[] = [];
    let ran = false;
    const followUps = createFollowUps({
      client,
      store: memoryWebhookStore(),
      queue: memoryFollowUpQueue(),
      schedule: [10, 100_000],
      onError: (error) => void errors.push(error),
      onSessionEnded: async (_session, context) => {
        ran = true;
        await context.transaction(fn);
      },
    });
    await start(followUps);
    const created = await session(client, 'no-transaction');
    await submitForm(created.paymentUrl, { action: 'cancel' });
    await followUps.track({ sessionId: created.sessionId });
    await until(() => ran && errors.length > 0, 'the callback');
    expect(errors[0]).toBeInstanceOf(ConfigurationError);
    expect((errors[0] as Error).message).toMatch(/context.transaction needs a store that runs transactions/);
    expect(fn).not.toHaveBeenCalled();
  });
});

describe('the default schedule', () => {
  it('reads a never-final order 100 times over 24 h, then calls onStale once; a paid one, once', async () => {
    let now = Date.parse('2026-11-27T09:00:00Z');
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      const due: [FollowUpJob, number][] = [];
      let handler: (job: FollowUpJob) => Promise<void> = async () => {};
      const queue: FollowUpQueue = {
        schedule: async (job, delay) => void due.push([job, now + delay]),
        start: async (given) => {
          handler = given;
        },
        stop: async () => {},
      };
      let reads = 0;
      let status = 'pending';
      const retrieve = async (sessionId: string) => {
        reads += 1;
        return { sessionId, status, amount: EUR(100), paymentReference: status === 'completed' ? 'SANDBOX-PXTT-1' : null } as Session;
      };
      const onStale = vi.fn();
      const onAuthorisation = vi.fn();
      const client = { ...fakeClient(), sessions: { retrieve, listModifications: retrieve } } as unknown as PaymentClient;
      const followUps = createFollowUps({ client, store: memoryWebhookStore(), queue, onAuthorisation, onStale });
      await followUps.start();
      const run = async () => {
        const times: number[] = [];
        for (let job = due.shift(); job; job = due.shift()) {
          now = job[1];
          times.push(now);
          await handler(job[0]);
        }
        return times;
      };
      const start = now;
      await followUps.track({ sessionId: 'SANDBOX-EXTT-1' });
      const times = await run();
      expect(reads).toBe(100);
      expect(times.slice(0, 5).map((time) => (time - start) / 1000)).toEqual([30, 90, 210, 510, 1410]);
      expect(times.at(-1)).toBe(start + 86_400_000);
      expect(onStale.mock.calls).toEqual([[{ sessionId: 'SANDBOX-EXTT-1' }]]);

      reads = 0;
      status = 'completed';
      await followUps.track({ sessionId: 'SANDBOX-EXTT-2' });
      await run();
      expect([reads, onAuthorisation.mock.calls.length]).toEqual([1, 1]);
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe('createFollowUps with context.transaction on the SQLite store', () => {
  it("writes the callback's row and the done mark together, once, whatever the duplicates", { timeout: 60_000 }, async () => {
    const { test: client } = await sandboxes.start();
    const dir = mkdtempSync(join(tmpdir(), 'follow-ups-tx-'));
    const store = sqliteWebhookStore({ path: join(dir, 'shop.db') });
    stops.push(async () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const rows = () => (reader.prepare('SELECT key FROM ended').all() as { key: string }[]).map((row) => row.key);
    const reader = new DatabaseSync(join(dir, 'shop.db'));
    stops.push(async () => reader.close());
    reader.exec('CREATE TABLE ended (key TEXT NOT NULL)');
    const make = () =>
      createFollowUps({
        client,
        store,
        queue: memoryFollowUpQueue(),
        schedule: [5],
        onSessionEnded: (_session, { key, transaction }) =>
          transaction((db: DatabaseSync) => void db.prepare('INSERT INTO ended VALUES (?)').run(key)),
      });
    // Two instances track the same session, as two app processes would.
    const [one, two] = [make(), make()];
    await Promise.all([start(one), start(two)]);
    const created = await session(client, 'cancelled-tx');
    await submitForm(created.paymentUrl, { action: 'cancel' });
    await Promise.all([one.track({ sessionId: created.sessionId }), two.track({ sessionId: created.sessionId })]);
    const key = `SESSION_ENDED:${created.sessionId}:cancelled`;
    await until(() => rows().length > 0, 'the row');
    await sleep(200);
    expect(rows()).toEqual([key]);
    expect(await store.claim(key, 1_000)).toEqual({ status: 'done' });
  });
});

describe('memoryFollowUpQueue', () => {
  it('runs a job again after its handler threw, waits for start, and stop waits for the jobs in flight', async () => {
    const queue = memoryFollowUpQueue();
    const job = (id: string): FollowUpJob => ({ id, target: { sessionId: id }, check: 0, trackedAt: 0 });
    const runs: string[] = [];
    let release = () => {};
    await queue.schedule(job('a'), 0);
    await queue.schedule(job('b'), 0);
    await sleep(20);
    expect(runs).toEqual([]);
    await queue.start(
      async ({ id }) => {
        runs.push(id);
        if (id === 'a' && runs.filter((run) => run === 'a').length === 1) throw new Error('once');
        if (id === 'b') await new Promise<void>((done) => (release = done));
      },
      { concurrency: 1 },
    );
    await until(() => runs.includes('b'), 'b');
    let stopped = false;
    const stopping = queue.stop().then(() => (stopped = true));
    await sleep(20);
    expect(stopped).toBe(false);
    release();
    await stopping;
    // a failed once before stop; it runs again after the next start (a retry waits 1 s).
    await queue.start(async ({ id }) => void runs.push(id), { concurrency: 1 });
    await until(() => runs.filter((run) => run === 'a').length === 2, 'the retry of a');
    await queue.stop();
    expect(runs.filter((run) => run === 'b')).toEqual(['b']);
  });
});

/** A client whose reads are never made (tests of input checks). */
function fakeClient(): PaymentClient {
  const never = () => {
    throw new Error('no read expected');
  };
  return {
    sessions: { retrieve: never, listModifications: never },
    pos: { list: never, listModifications: never },
  } as unknown as PaymentClient;
}
