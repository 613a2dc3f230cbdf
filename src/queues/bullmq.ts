/**
 * `payment-service-sdk/queues/bullmq`: the follow-ups' queue on BullMQ 6 (Redis), through the app's
 * own connection. `bullmq` (an optional peer dependency) is loaded by this subpath only, on the
 * queue's first use: importing the subpath without it works, and the first `schedule` or `start`
 * rejects with a `ConfigurationError` saying to install it.
 */
import type { ConnectionOptions, Queue, Worker } from 'bullmq';
import { ConfigurationError } from '../core/errors.js';
import type { FollowUpJob, FollowUpQueue } from '../follow-ups/queue.js';
import { milliseconds, optionsObject, queueName, scheduleArguments, startArguments, UNLIMITED_RETRIES } from './options.js';

/**
 * What BullMQ 6 takes as its `connection`: the app's connected node-redis 5/6 client or ioredis
 * instance (anything with `connect` and `duplicate`), or ioredis connection options. Declared here
 * so that the package's types do not need `bullmq`'s.
 */
export type BullMqConnection =
  | { connect(): unknown; duplicate(): unknown }
  | { url?: string; host?: string; port?: number; db?: number; username?: string; password?: string; [option: string]: unknown };

/** Options of {@link bullMqFollowUpQueue}. */
export interface BullMqFollowUpQueueOptions {
  /** The BullMQ queue's name (letters, digits, `_`, `-`, `.`, `/`). Default `payment-follow-ups`. */
  queue?: string | undefined;
  /** BullMQ's key prefix. Default BullMQ's (`bull`). */
  prefix?: string | undefined;
  /**
   * How long a worker's lock on a running check lasts, in ms: BullMQ renews it while the process
   * lives, so it is how soon a check whose process died may run again elsewhere. Default 30 000.
   */
  lockMs?: number | undefined;
  /** How often workers look for checks whose lock ended (stalled), in ms. Default 30 000. */
  stalledIntervalMs?: number | undefined;
  /** The first delay before a check whose handler threw runs again, in ms; it doubles each time. Default 1 000. */
  retryDelayMs?: number | undefined;
  /** The longest delay between runs of a check that keeps throwing, in ms. Default 900 000 (15 min). */
  maxRetryDelayMs?: number | undefined;
  /**
   * How long a finished check's job is kept, in ms: while it is, scheduling the same job id again
   * is a no-op (a check that ran twice then schedules its next check once). Default 3 600 000 (1 h).
   */
  keepFinishedMs?: number | undefined;
}

const FN = 'bullMqFollowUpQueue';

/** What to do when `bullmq` is absent: the same words whatever the runtime's own error says. */
export const BULLMQ_MISSING =
  'payment-service-sdk/queues/bullmq needs the bullmq package (an optional peer dependency, version 6), which is not installed: npm install bullmq@^6';

/** Whether `error` is the runtime's "no such package" for `name` (ESM's `ERR_MODULE_NOT_FOUND`, CommonJS's `MODULE_NOT_FOUND`). */
function isMissingPackage(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    (message.includes(`'${name}'`) || message.includes(`"${name}"`))
  );
}

let loading: Promise<typeof import('bullmq')> | undefined;

/** `bullmq`, imported once; a `ConfigurationError` naming the package to install when it is absent. */
function loadBullMq(): Promise<typeof import('bullmq')> {
  loading ??= import('bullmq').catch((error: unknown) => {
    loading = undefined; // installed later in a long-lived process (a REPL): try again
    if (!isMissingPackage(error, 'bullmq')) throw error;
    const missing = new ConfigurationError('bullmq', BULLMQ_MISSING);
    missing.cause = error;
    throw missing;
  });
  return loading;
}
/** The name of every job: the queue holds follow-up checks only. */
const JOB_NAME = 'follow-up';

/**
 * The BullMQ job id of a follow-up job: the same for the same `job.id` on every instance. BullMQ 6
 * refuses ids with `:` (except its own `a:b:c` form) and integer ids; percent-encoding leaves no
 * `:`, and the `#` of every follow-up id becomes `%23`, so an id is never an integer.
 */
export function bullMqJobId(jobId: string): string {
  return encodeURIComponent(jobId);
}

/**
 * A {@link FollowUpQueue} on BullMQ 6: the follow-ups' checks are jobs in the app's Redis, shared by
 * every instance that uses the same Redis, prefix and queue name, and kept across restarts (with a
 * Redis that persists). `connection` is what BullMQ takes as its `connection`: the app's connected
 * node-redis 5/6 client (the one `redisWebhookStore` takes), an ioredis instance, or connection
 * options. BullMQ duplicates a client for its worker's blocking reads; the queue closes what it
 * opened, never the app's client.
 *
 * - Each job's id is `bullMqJobId(job.id)`: scheduling it again while it waits, is delayed, runs,
 *   or is kept as finished (`keepFinishedMs`) is a no-op.
 * - A handler that throws runs again after `retryDelayMs`, doubling up to `maxRetryDelayMs`, with
 *   no retry limit; a process that dies mid-check loses its lock after `lockMs`, and a worker's
 *   stalled-job check (every `stalledIntervalMs`) runs it again, as often as that happens.
 * - `stop()` closes this queue's worker, waiting for the checks in hand, and the connections
 *   BullMQ opened (its duplicate of the app's client; with connection options, all of them).
 *   Make one queue object per process: BullMQ 6.7 leaves a few listeners on the app's client for
 *   each Queue and Worker it makes on it.
 *
 * ```ts
 * import { createClient } from 'redis';
 * import { bullMqFollowUpQueue } from 'payment-service-sdk/queues/bullmq';
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const queue = bullMqFollowUpQueue(redis);
 * ```
 *
 * Throws a TypeError naming the option at fault for a missing connection or a bad option. Without
 * `bullmq` installed, the first `schedule` or `start` rejects with a `ConfigurationError`
 * ({@link BULLMQ_MISSING}: `npm install bullmq@^6`).
 */
export function bullMqFollowUpQueue(connection: BullMqConnection, options?: BullMqFollowUpQueueOptions): FollowUpQueue {
  if (connection === null || typeof connection !== 'object') {
    throw new TypeError(`${FN} needs what BullMQ takes as connection: a connected node-redis client, an ioredis instance or options`);
  }
  const settings = bullMqSettings(optionsObject(FN, options));
  const base = { connection: connection as ConnectionOptions, ...(settings.prefix === undefined ? {} : { prefix: settings.prefix }) };
  // On the app's client, BullMQ 6.7 leaves listeners on it for each Queue or Worker, even closed:
  // one Queue for the queue object's life, closed by stop() only when it opened a connection of its own.
  const sharedClient = typeof (connection as { duplicate?: unknown }).duplicate === 'function';
  let queue: Queue | undefined;
  let worker: Worker | undefined;
  const jobOptions = {
    attempts: UNLIMITED_RETRIES,
    backoff: { type: 'capped' },
    removeOnComplete: { age: settings.keepFinishedSeconds },
    removeOnFail: { age: settings.keepFinishedSeconds },
  };
  return {
    async schedule(job: FollowUpJob, delayMs: number) {
      scheduleArguments(FN, job, delayMs);
      // Opened on first use: a process that never schedules holds no connection.
      if (queue === undefined) {
        const { Queue } = await loadBullMq();
        queue ??= new Queue(settings.name, base);
      }
      await queue.add(JOB_NAME, job, { ...jobOptions, jobId: bullMqJobId(job.id), delay: Math.ceil(delayMs) });
    },
    async start(handler, startOptions) {
      const concurrency = startArguments(FN, handler, startOptions);
      if (worker !== undefined) throw new TypeError(`${FN}: start was called twice without stop`);
      const { Worker } = await loadBullMq();
      if (worker !== undefined) throw new TypeError(`${FN}: start was called twice without stop`);
      worker = new Worker(settings.name, async (job) => handler(job.data as FollowUpJob), {
        ...base,
        concurrency,
        lockDuration: settings.lockMs,
        stalledInterval: settings.stalledIntervalMs,
        // Every stall runs the check again: at-least-once, never "failed" for having crashed.
        maxStalledCount: UNLIMITED_RETRIES,
        settings: { backoffStrategy: (attemptsMade: number) => capped(settings, attemptsMade) },
      });
      // BullMQ's errors (a lost connection it retries) are events; without a listener Node would throw.
      worker.on('error', () => {});
      await worker.waitUntilReady();
    },
    async stop() {
      const [running, opened] = [worker, sharedClient ? undefined : queue];
      worker = undefined;
      if (!sharedClient) queue = undefined; // opened again by a later schedule
      await running?.close(); // waits for the jobs in hand
      await opened?.close();
    },
  };
}

function capped(settings: { retryDelayMs: number; maxRetryDelayMs: number }, attemptsMade: number): number {
  return Math.min(settings.maxRetryDelayMs, settings.retryDelayMs * 2 ** Math.min(30, Math.max(0, attemptsMade - 1)));
}

function bullMqSettings(options: Partial<BullMqFollowUpQueueOptions>) {
  const ms = (option: keyof BullMqFollowUpQueueOptions, fallback: number, min: number) =>
    milliseconds(FN, option, options[option], fallback, min, 2_592_000_000);
  const prefix = options.prefix;
  if (prefix !== undefined && (typeof prefix !== 'string' || prefix === '')) {
    throw new TypeError(`${FN}: prefix must be a non-empty string`);
  }
  const retryDelayMs = ms('retryDelayMs', 1000, 1);
  const maxRetryDelayMs = ms('maxRetryDelayMs', 900_000, 1);
  if (maxRetryDelayMs < retryDelayMs) throw new TypeError(`${FN}: maxRetryDelayMs must be at least retryDelayMs`);
  return {
    name: queueName(FN, options.queue),
    prefix,
    lockMs: ms('lockMs', 30_000, 1000),
    stalledIntervalMs: ms('stalledIntervalMs', 30_000, 500),
    retryDelayMs,
    maxRetryDelayMs,
    keepFinishedSeconds: Math.ceil(ms('keepFinishedMs', 3_600_000, 1000) / 1000),
  };
}
