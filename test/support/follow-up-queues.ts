/**
 * The two engine queues of the follow-ups (pg-boss and BullMQ) as the tests open them: each on the
 * real PostgreSQL or Redis of test/support/services.ts, with short timings so that a dead process's
 * job runs again within seconds, and a child process that runs a queue's worker (bundled from src
 * with esbuild, so that no build is needed), to be killed mid-job.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { PgBoss } from 'pg-boss';
import { createClient } from 'redis';
import type { FollowUpQueue } from '../../src/follow-ups/queue.js';
import { bullMqFollowUpQueue } from '../../src/queues/bullmq.js';
import { pgBossFollowUpQueue } from '../../src/queues/pg-boss.js';

export const ROOT = resolve(import.meta.dirname, '../..');

/** An engine's objects as an app holds them, and how to make queues on them. */
export interface Engine {
  /** A queue object on the app's engine objects (a new one each call, as after a restart). */
  queue(): FollowUpQueue;
  /** Closes the app's engine objects (what the app does at shutdown; the queue never does). */
  close(): Promise<void>;
}

export type EngineName = 'pg-boss' | 'bullmq';

/** Short timings for tests: a dead process's job runs again after ~2-3 s. */
export const PG_BOSS_TEST_OPTIONS = { expireInMs: 2000, retryDelayMs: 1000, maxRetryDelayMs: 2000, pollingIntervalMs: 500 };
export const BULLMQ_TEST_OPTIONS = { lockMs: 2000, stalledIntervalMs: 1000, retryDelayMs: 200, maxRetryDelayMs: 1000 };

/** A started PgBoss with second-scale supervision (expired jobs are retried within a second). */
export async function startBoss(url: string, schema: string): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schema,
    superviseIntervalSeconds: 1,
    monitorIntervalSeconds: 1,
    queueCacheIntervalSeconds: 1,
    max: 4,
  });
  boss.on('error', () => {}); // pg-boss reports its own retried failures as events
  await boss.start();
  return boss;
}

/** Opens the engine `name` on the test servers, for the queue named `queue`. */
export async function openEngine(name: EngineName, url: string, queue: string): Promise<Engine> {
  if (name === 'pg-boss') {
    const boss = await startBoss(url, queue.replace(/\W/g, '_'));
    return {
      queue: () => pgBossFollowUpQueue(boss, { queue, ...PG_BOSS_TEST_OPTIONS }),
      close: () => boss.stop({ graceful: false }),
    };
  }
  const client = await createClient({ url }).connect();
  // The tests make many queue objects on one client (BullMQ 6.7 leaves listeners on it for each).
  client.setMaxListeners(100);
  return {
    queue: () => bullMqFollowUpQueue(client, { queue, ...BULLMQ_TEST_OPTIONS }),
    close: async () => {
      client.destroy();
    },
  };
}

/** Bundles a test script from src (imports of src stay TypeScript) into an .mjs under the repo, so it resolves node_modules. */
export async function bundleScript(entry: string): Promise<{ file: string; remove(): void }> {
  const dir = mkdtempSync(join(ROOT, '.test-bundle-'));
  const file = join(dir, 'script.mjs');
  await esbuild.build({
    entryPoints: [entry],
    outfile: file,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    packages: 'external',
    alias: {
      'payment-service-sdk': join(ROOT, 'src/index.ts'),
      'payment-service-sdk/queues/pg-boss': join(ROOT, 'src/queues/pg-boss.ts'),
      'payment-service-sdk/queues/bullmq': join(ROOT, 'src/queues/bullmq.ts'),
      'payment-service-sdk/stores/postgres': join(ROOT, 'src/stores/postgres.ts'),
      'payment-service-sdk/stores/redis': join(ROOT, 'src/stores/redis.ts'),
    },
    logLevel: 'silent',
  });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A child process, its output so far, and its exit. */
export interface Child {
  process: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs `node file` with `env`; output (stdout and stderr) is kept for failure messages. */
export function runChild(file: string, env: Record<string, string>): Child {
  const child = spawn(process.execPath, [file], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { process: child, output: () => output, exited };
}

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Polls `check` every 50 ms until it is true, for at most `limitMs` (generous: the machine is shared). */
export async function until(check: () => boolean, limitMs: number, what: string): Promise<void> {
  for (const deadline = Date.now() + limitMs; Date.now() < deadline; await sleep(50)) if (check()) return;
  if (!check()) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`);
}
