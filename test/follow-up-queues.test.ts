/**
 * The follow-ups' queues on their engines (issue 32): pgBossFollowUpQueue on a real PostgreSQL and
 * bullMqFollowUpQueue on a real Redis (a connected node-redis client, as the Redis webhook store
 * takes), held to the FollowUpQueue contract: a job runs once per id however often it is
 * scheduled, not before its delay, in delay order; a handler that throws runs again; a job whose
 * process is SIGKILLed mid-run runs again elsewhere; stop() waits for the jobs in hand and leaves
 * the app's engine objects open; a new queue object on the same engine (a restart) runs what an
 * earlier one stored.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FollowUpJob } from '../src/follow-ups/queue.js';
import { bullMqFollowUpQueue, bullMqJobId } from '../src/queues/bullmq.js';
import { pgBossFollowUpQueue, pgBossJobId } from '../src/queues/pg-boss.js';
import {
  bundleScript,
  type Child,
  type Engine,
  type EngineName,
  openEngine,
  ROOT,
  runChild,
  sleep,
  until,
} from './support/follow-up-queues.js';
import { postgresUrl, redisUrl, uniqueName } from './support/services.js';

const job = (id: string, check = 0): FollowUpJob => ({
  id: `session:${id}#${check}`,
  target: { sessionId: id },
  check,
  trackedAt: Date.now(),
});

/** A handler that records each job's id and when it ran. */
function recorder() {
  const runs: { id: string; at: number }[] = [];
  return { runs, ids: () => runs.map((run) => run.id), handler: async (j: FollowUpJob) => void runs.push({ id: j.id, at: Date.now() }) };
}

const engines: [EngineName, () => string | undefined][] = [
  ['pg-boss', postgresUrl],
  ['bullmq', redisUrl],
];

describe.each(engines)('%s follow-up queue', (name, serverUrl) => {
  const url = serverUrl();
  let engine: Engine;
  let queueName: string;
  beforeAll(async () => {
    if (!url) return;
    queueName = uniqueName('fq').replaceAll('_', '-');
    engine = await openEngine(name, url, queueName);
  });
  afterAll(async () => {
    await engine?.close();
  });

  it.skipIf(!url)('runs each job once per id, not before its delay, in delay order', { timeout: 60_000 }, async () => {
    const queue = engine.queue();
    const { runs, ids, handler } = recorder();
    await queue.start(handler, { concurrency: 2 });
    const scheduledAt = Date.now();
    await queue.schedule(job('late'), 1500);
    await queue.schedule(job('soon'), 0);
    await queue.schedule(job('middle'), 700);
    // The same ids again (two instances tracking the same target): no new jobs.
    await Promise.all([queue.schedule(job('soon'), 0), queue.schedule(job('late'), 0), queue.schedule(job('middle'), 100)]);
    await until(() => runs.length >= 3, 30_000, 'three jobs');
    await sleep(1500); // room for a wrong second run to show
    await queue.stop();
    expect(ids()).toEqual(['session:soon#0', 'session:middle#0', 'session:late#0']);
    const at = (id: string) => runs.find((run) => run.id === id)?.at ?? 0;
    expect(at('session:middle#0') - scheduledAt).toBeGreaterThanOrEqual(650);
    expect(at('session:late#0') - scheduledAt).toBeGreaterThanOrEqual(1450);
  });

  it.skipIf(!url)('gives the handler the job as scheduled, and runs a job whose handler threw again', { timeout: 60_000 }, async () => {
    const queue = engine.queue();
    const seen: FollowUpJob[] = [];
    let failures = 0;
    await queue.start(
      async (j) => {
        seen.push(j);
        if (j.check === 3 && failures++ < 1) throw new Error('the API is down');
      },
      { concurrency: 2 },
    );
    const scheduled: FollowUpJob = {
      id: 'refund:pos:p-1:r-1#3',
      target: { refundReference: 'r-1', posPaymentId: 'p-1' },
      check: 3,
      trackedAt: 1_700_000_000_000,
    };
    await Promise.all([queue.schedule(scheduled, 0), queue.schedule(job('beside'), 0)]);
    await until(() => seen.length >= 3, 30_000, 'the retry of the failed job');
    await sleep(1000);
    await queue.stop();
    // The failed job ran again, as scheduled; the one run beside it (same batch or not) ran once.
    expect(seen.filter((j) => j.id === scheduled.id)).toEqual([scheduled, scheduled]);
    expect(seen.filter((j) => j.id !== scheduled.id).map((j) => j.id)).toEqual(['session:beside#0']);
  });

  it.skipIf(!url)('stop() resolves once the jobs in hand have finished, and leaves the engine open', { timeout: 60_000 }, async () => {
    const queue = engine.queue();
    let release: () => void = () => {};
    const started: string[] = [];
    const finished: string[] = [];
    await queue.start(
      async (j) => {
        started.push(j.id);
        await new Promise<void>((done) => (release = done));
        finished.push(j.id);
      },
      { concurrency: 1 },
    );
    await queue.schedule(job('held'), 0);
    await until(() => started.length === 1, 30_000, 'the held job to start');
    let stopped = false;
    const stopping = queue.stop().then(() => (stopped = true));
    await sleep(300);
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(finished).toEqual(['session:held#0']);
    // The engine is still the app's: a new queue object on it schedules and runs jobs.
    const again = engine.queue();
    const { ids, handler } = recorder();
    await again.start(handler, { concurrency: 1 });
    await again.schedule(job('after-stop'), 0);
    await until(() => ids().length === 1, 30_000, 'a job after stop');
    await again.stop();
    expect(ids()).toEqual(['session:after-stop#0']);
  });

  it.skipIf(!url)(
    'survives a restart: a new queue object on the same engine runs what an earlier one scheduled',
    { timeout: 60_000 },
    async () => {
      const before = engine.queue();
      await before.schedule(job('stored', 1), 300);
      await before.stop(); // never started: stop is harmless
      const after = engine.queue();
      const { ids, handler } = recorder();
      await after.start(handler, { concurrency: 1 });
      await after.schedule(job('stored', 1), 0); // the restarted app tracks it again: still one job
      await until(() => ids().length >= 1, 30_000, 'the stored job');
      await sleep(1000);
      await after.stop();
      expect(ids()).toEqual(['session:stored#1']);
    },
  );

  it.skipIf(!url)('runs a job again when the process running it is SIGKILLed (at-least-once)', { timeout: 120_000 }, async () => {
    const bundle = await bundleScript(join(ROOT, 'test/fixtures/follow-up-queue-worker.ts'));
    const log = join(bundle.file, '..', 'jobs.log');
    writeFileSync(log, '');
    const lines = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
    let worker: Child | undefined;
    try {
      worker = runChild(bundle.file, {
        QUEUE_ENGINE: name,
        QUEUE_URL: url ?? '',
        QUEUE_NAME: queueName,
        QUEUE_LOG: log,
        QUEUE_HANG_ID: 'session:killed#0',
      });
      await until(() => worker?.output().includes('started') ?? false, 60_000, `the worker process to start: ${worker.output()}`);
      const queue = engine.queue();
      await queue.schedule(job('killed'), 0);
      await until(() => lines().some((line) => line.startsWith('start session:killed#0')), 30_000, 'the worker to take the job');
      worker.process.kill('SIGKILL');
      await worker.exited;
      const { ids, handler } = recorder();
      await queue.start(handler, { concurrency: 1 });
      await until(() => ids().includes('session:killed#0'), 60_000, 'the killed job to run again');
      await queue.stop();
      expect(ids()).toEqual(['session:killed#0']);
      expect(lines()).toEqual([`start session:killed#0 ${worker.process.pid}`]);
    } finally {
      worker?.process.kill('SIGKILL');
      bundle.remove();
    }
  });
});

describe('follow-up queue options', () => {
  const boss = { createQueue: async () => {}, send: async () => null, work: async () => 'w', offWork: async () => {} };

  it('derive stable job ids each engine accepts', () => {
    expect(pgBossJobId('session:s-1#0')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pgBossJobId('session:s-1#0')).toBe(pgBossJobId('session:s-1#0'));
    expect(pgBossJobId('session:s-1#0')).not.toBe(pgBossJobId('session:s-1#1'));
    expect(bullMqJobId('refund:pos:p%3A1:r#2')).not.toContain(':');
    expect(bullMqJobId('session:a#1')).not.toBe(bullMqJobId('session:a%231'));
  });

  it('refuse a missing engine object and bad options with a TypeError naming them', () => {
    expect(() => pgBossFollowUpQueue(undefined as never)).toThrow(
      /pgBossFollowUpQueue needs the app's started pg-boss 12 PgBoss \(boss\.createQueue/,
    );
    expect(() => pgBossFollowUpQueue({ ...boss, offWork: undefined } as never)).toThrow(/boss\.offWork is not a function/);
    expect(() => pgBossFollowUpQueue(boss, { queue: 'a:b' })).toThrow(TypeError);
    expect(() => pgBossFollowUpQueue(boss, { queue: 'a:b' })).toThrow(/queue must be a name/);
    expect(() => pgBossFollowUpQueue(boss, { expireInMs: 1500 })).toThrow(/expireInMs must be whole seconds/);
    expect(() => pgBossFollowUpQueue(boss, { pollingIntervalMs: 10 })).toThrow(
      /pollingIntervalMs must be an integer number of ms from 500/,
    );
    expect(() => pgBossFollowUpQueue(boss, { retryDelayMs: 5000, maxRetryDelayMs: 2000 })).toThrow(
      /maxRetryDelayMs must be at least retryDelayMs/,
    );
    expect(() => bullMqFollowUpQueue(undefined as never)).toThrow(/bullMqFollowUpQueue needs what BullMQ takes as connection/);
    expect(() => bullMqFollowUpQueue({}, { lockMs: -1 })).toThrow(/lockMs must be an integer number of ms/);
    expect(() => bullMqFollowUpQueue({}, { prefix: '' })).toThrow(/prefix must be a non-empty string/);
    expect(() => bullMqFollowUpQueue({}, 'fast' as never)).toThrow(/options must be an object/);
  });

  it('refuse a bad job, delay or concurrency without storing anything', async () => {
    let sent = 0;
    const queue = pgBossFollowUpQueue({ ...boss, send: async () => String(++sent) });
    await expect(queue.schedule({ ...job('x'), id: '' }, 0)).rejects.toThrow(/schedule needs a job with a non-empty string id/);
    await expect(queue.schedule(job('x'), Number.NaN)).rejects.toThrow(/delayMs, a finite number >= 0/);
    await expect(queue.start(async () => {}, { concurrency: 0 })).rejects.toThrow(/options\.concurrency, an integer from 1/);
    expect(sent).toBe(0);
  });
});
