/**
 * `payment-service-sdk/queues/pg-boss`: the follow-ups' queue on pg-boss (PostgreSQL), through the
 * app's own started `PgBoss`. Nothing here imports `pg-boss`: the app hands its boss in.
 */
import { v5 as uuidV5 } from 'uuid';
import type { FollowUpJob, FollowUpQueue } from '../follow-ups/queue.js';
import { milliseconds, optionsObject, queueName, scheduleArguments, startArguments, UNLIMITED_RETRIES } from './options.js';

/**
 * What the queue needs of a pg-boss 12 `PgBoss` (started by the app: `await boss.start()`). A
 * `PgBoss` fits as is.
 */
export interface PgBossLike {
  /** Creates the queue if it does not exist yet (pg-boss 12 creates nothing on `send`). */
  createQueue(name: string, options?: PgBossQueueSettings): Promise<void>;
  /** Stores a job; resolves to null when a job with the same `id` exists. */
  send(name: string, data: object, options: PgBossQueueSettings & { id: string; startAfter: Date }): Promise<string | null>;
  /**
   * Starts a worker that fetches up to `batchSize` due jobs at a time (again at once while batches
   * come back full) and settles each job by the handler's result for it; resolves to the work id.
   */
  work(
    name: string,
    options: PgBossWorkOptions,
    handler: (jobs: { id: string; data: object }[]) => Promise<PgBossJobResult[]>,
  ): Promise<string>;
  /** Stops the workers of one `work` call; with `wait`, once their jobs in hand have finished. */
  offWork(name: string, options: { id: string; wait: true }): Promise<void>;
}

/** How the queue runs its pg-boss worker: `concurrency` jobs per fetch, each settled on its own. */
export interface PgBossWorkOptions {
  batchSize: number;
  localConcurrency: 1;
  pollingIntervalSeconds: number;
  burstWhenBatchFull: true;
  perJobResults: true;
}

/** The outcome of one job of a batch: `failed` runs it again later (pg-boss retries). */
export interface PgBossJobResult {
  id: string;
  status: 'completed' | 'failed';
  output?: { message: string };
}

/** The pg-boss job settings the queue sets on each job (and on the queue when it creates it). */
export interface PgBossQueueSettings {
  expireInSeconds: number;
  retryLimit: number;
  retryDelay: number;
  retryBackoff: boolean;
  retryDelayMax: number;
}

/** Options of {@link pgBossFollowUpQueue}. */
export interface PgBossFollowUpQueueOptions {
  /** The pg-boss queue's name (letters, digits, `_`, `-`, `.`, `/`). Default `payment-follow-ups`. */
  queue?: string | undefined;
  /**
   * How long a check may run before pg-boss takes it for dead and runs it again, in ms (whole
   * seconds, at least 1 s). It is also how soon a check whose process died runs again, plus up to
   * the boss's `monitorIntervalSeconds` (pg-boss's default 60 s, at most one expiry pass per queue
   * in that time). Default 60 000.
   */
  expireInMs?: number | undefined;
  /** The first delay before a check whose handler threw runs again, in ms (whole seconds); it doubles each time. Default 1 000. */
  retryDelayMs?: number | undefined;
  /** The longest delay between runs of a check that keeps throwing, in ms (whole seconds). Default 900 000 (15 min). */
  maxRetryDelayMs?: number | undefined;
  /** How often an idle worker looks for due jobs, in ms (at least 500). Default 2 000. */
  pollingIntervalMs?: number | undefined;
}

const FN = 'pgBossFollowUpQueue';

/**
 * Any fixed UUID: job ids are UUID v5 of the follow-up job's id in this namespace, so that
 * scheduling the same job twice is one job (pg-boss ids must be UUIDs).
 */
const JOB_ID_NAMESPACE = 'c8a7d0b4-3f0e-4a52-9a43-5b0f1f7c2e61';

/** The pg-boss job id of a follow-up job: the same for the same `job.id`, on every instance. */
export function pgBossJobId(jobId: string): string {
  return uuidV5(jobId, JOB_ID_NAMESPACE);
}

/**
 * A {@link FollowUpQueue} on pg-boss 12: the follow-ups' checks are jobs in the app's PostgreSQL,
 * shared by every instance that uses the same database and queue name, and kept across restarts.
 * `boss` is the app's started `PgBoss`; the queue creates its pg-boss queue on first use, and never
 * stops the boss.
 *
 * - Each job's id is the UUID v5 of the follow-up job's id: scheduling it again while it waits,
 *   is delayed, runs, or is kept as completed (pg-boss keeps completed jobs `deleteAfterSeconds`,
 *   7 days by default) is a no-op.
 * - A handler that throws runs again after `retryDelayMs`, doubling up to `maxRetryDelayMs`, with no
 *   retry limit; a process that dies mid-check leaves the job active until `expireInMs`, then
 *   pg-boss's supervision (a pass per queue every `monitorIntervalSeconds` of the boss, 60 s by
 *   default) runs it again.
 * - `stop()` stops this queue's workers, waiting for the checks in hand (pg-boss's `offWork` with
 *   `wait`); the boss and its other workers are left alone.
 *
 * ```ts
 * import { PgBoss } from 'pg-boss';
 * import { pgBossFollowUpQueue } from 'payment-service-sdk/queues/pg-boss';
 * const boss = new PgBoss(process.env.DATABASE_URL);
 * await boss.start();
 * const queue = pgBossFollowUpQueue(boss);
 * ```
 *
 * Throws a TypeError naming the option at fault for a bad boss or option.
 */
export function pgBossFollowUpQueue(boss: PgBossLike, options?: PgBossFollowUpQueueOptions): FollowUpQueue {
  for (const method of ['createQueue', 'send', 'work', 'offWork'] as const) {
    if (typeof (boss as Partial<PgBossLike> | null | undefined)?.[method] !== 'function') {
      throw new TypeError(`${FN} needs the app's started pg-boss 12 PgBoss (boss.${method} is not a function)`);
    }
  }
  const settings = pgBossSettings(optionsObject(FN, options));
  const { name, pollingIntervalSeconds, job: jobSettings } = settings;
  let created: Promise<void> | undefined;
  const ensureQueue = () => {
    created ??= boss.createQueue(name, jobSettings).catch((error: unknown) => {
      created = undefined; // a later call tries again
      throw error;
    });
    return created;
  };
  let workId: string | undefined;
  return {
    async schedule(job: FollowUpJob, delayMs: number) {
      scheduleArguments(FN, job, delayMs);
      await ensureQueue();
      const startAfter = new Date(Date.now() + delayMs);
      await boss.send(name, job, { ...jobSettings, id: pgBossJobId(job.id), startAfter });
    },
    async start(handler, startOptions) {
      const concurrency = startArguments(FN, handler, startOptions);
      if (workId !== undefined) throw new TypeError(`${FN}: start was called twice without stop`);
      await ensureQueue();
      // One worker fetching `concurrency` jobs at a time, rather than `concurrency` workers fetching
      // one each: pg-boss polls each worker at its interval, so that would run at most
      // `concurrency` jobs per interval; a full batch is fetched again at once.
      const work: PgBossWorkOptions = {
        batchSize: concurrency,
        localConcurrency: 1,
        pollingIntervalSeconds,
        burstWhenBatchFull: true,
        perJobResults: true,
      };
      workId = await boss.work(name, work, (jobs) => Promise.all(jobs.map((job) => runJob(handler, job))));
    },
    async stop() {
      const id = workId;
      workId = undefined;
      if (id !== undefined) await boss.offWork(name, { id, wait: true });
    },
  };
}

/** Runs one job of a batch: a handler that throws fails that job only, which pg-boss retries. */
async function runJob(handler: (job: FollowUpJob) => Promise<void>, job: { id: string; data: object }): Promise<PgBossJobResult> {
  try {
    await handler(job.data as FollowUpJob);
    return { id: job.id, status: 'completed' };
  } catch (error) {
    return { id: job.id, status: 'failed', output: { message: error instanceof Error ? error.message : String(error) } };
  }
}

function pgBossSettings(options: Partial<PgBossFollowUpQueueOptions>) {
  const seconds = (option: keyof PgBossFollowUpQueueOptions, fallback: number, min: number, max: number) => {
    const value = milliseconds(FN, option, options[option], fallback, min, max);
    if (value % 1000 !== 0) throw new TypeError(`${FN}: ${option} must be whole seconds for pg-boss (got ${value})`);
    return value / 1000;
  };
  const retryDelay = seconds('retryDelayMs', 1000, 1000, 86_400_000);
  const retryDelayMax = seconds('maxRetryDelayMs', 900_000, 1000, 86_400_000);
  if (retryDelayMax < retryDelay) throw new TypeError(`${FN}: maxRetryDelayMs must be at least retryDelayMs`);
  const job: PgBossQueueSettings = {
    expireInSeconds: seconds('expireInMs', 60_000, 1000, 86_400_000),
    retryLimit: UNLIMITED_RETRIES,
    retryDelay,
    retryBackoff: true,
    retryDelayMax,
  };
  const pollingIntervalSeconds = milliseconds(FN, 'pollingIntervalMs', options.pollingIntervalMs, 2000, 500, 3_600_000) / 1000;
  return { name: queueName(FN, options.queue), pollingIntervalSeconds, job };
}
