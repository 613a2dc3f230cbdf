/** `memoryFollowUpQueue`: the follow-ups' queue in this process's memory. */
import type { FollowUpJob, FollowUpQueue } from './queue.js';

interface Entry {
  job: FollowUpJob;
  due: number;
  failures: number;
  timer?: ReturnType<typeof setTimeout> | undefined;
}

/** The first retry of a job whose handler threw, in ms; it doubles with each failure, up to a minute. */
const RETRY_MS = 1_000;

/**
 * A {@link FollowUpQueue} in this process's memory, for tests and single-process apps: its jobs
 * are lost when the process ends (a restarted app must `track` its open orders again), and only
 * this process runs them. Use `pgBossFollowUpQueue` or `bullMqFollowUpQueue` for durable checks
 * shared by all instances. A job whose handler throws runs again after 1 s, then 2, 4... up to 60 s.
 * Jobs scheduled before `start` wait for it; `stop` keeps the jobs not yet run, for the next `start`.
 */
export function memoryFollowUpQueue(): FollowUpQueue {
  // Waiting, delayed and running jobs, by id: a job is forgotten once its handler succeeds.
  const entries = new Map<string, Entry>();
  const ready: Entry[] = [];
  const running = new Set<Promise<void>>();
  let handler: ((job: FollowUpJob) => Promise<void>) | undefined;
  let concurrency = 1;

  const arm = (entry: Entry) => {
    entry.timer = setTimeout(
      () => {
        entry.timer = undefined;
        ready.push(entry);
        pump();
      },
      Math.max(0, entry.due - Date.now()),
    );
  };
  const run = (entry: Entry, work: (job: FollowUpJob) => Promise<void>) => {
    const done: Promise<void> = (async () => {
      try {
        await work(entry.job);
        entries.delete(entry.job.id);
      } catch {
        entry.failures += 1;
        entry.due = Date.now() + Math.min(60_000, RETRY_MS * 2 ** (entry.failures - 1));
        if (handler) arm(entry);
      }
    })().finally(() => {
      running.delete(done);
      pump();
    });
    running.add(done);
  };
  const pump = () => {
    while (handler && running.size < concurrency && ready.length > 0) run(ready.shift() as Entry, handler);
  };

  return {
    async schedule(job, delayMs) {
      if (entries.has(job.id)) return;
      const entry: Entry = { job: structuredClone(job), due: Date.now() + Math.max(0, delayMs), failures: 0 };
      entries.set(job.id, entry);
      if (handler) arm(entry);
    },
    async start(given, options) {
      if (handler) throw new TypeError('This memoryFollowUpQueue is already started');
      handler = given;
      concurrency = Math.max(1, options.concurrency);
      for (const entry of entries.values()) if (!entry.timer && !ready.includes(entry)) arm(entry);
    },
    async stop() {
      handler = undefined;
      for (const entry of entries.values()) clearTimeout(entry.timer);
      for (const entry of entries.values()) entry.timer = undefined;
      ready.length = 0;
      while (running.size > 0) await Promise.all(running);
    },
  };
}
