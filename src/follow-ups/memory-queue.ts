/** `memoryFollowUpQueue`: the follow-ups' queue in this process's memory. */
import type { FollowUpClock, FollowUpJob, FollowUpQueue } from './queue.js';

interface Entry {
  job: FollowUpJob;
  due: number;
  failures: number;
  timer?: ReturnType<typeof setTimeout> | undefined;
  /** On a clock: found due, waiting its turn or running (so a later look does not take it again). */
  taken?: boolean;
}

/** The first retry of a job whose handler threw, in ms; it doubles with each failure, up to a minute. */
const RETRY_MS = 1_000;
/** How often, in real ms, a queue on a clock of its own looks at that clock: it may jump (`advanceClock`) or stand still (`manualClock`). */
const CLOCK_LOOK_MS = 50;

/** Options of {@link memoryFollowUpQueue}. */
export interface MemoryFollowUpQueueOptions {
  /**
   * The time the jobs' delays count in: the sandbox's (`sandbox.clock`) or `manualClock()` in a
   * test, so that moving that clock runs the checks that fall due; default the system's. The
   * queue looks at it every 50 ms of real time. `createFollowUps({ clock })` gives its clock to a
   * memory queue made without one.
   */
  clock?: FollowUpClock | undefined;
}

/** Hands `createFollowUps`'s clock to a memory queue made without one. */
export const ADOPT_CLOCK = Symbol('adoptClock');

/**
 * A {@link FollowUpQueue} in this process's memory, for tests and single-process apps: its jobs
 * are lost when the process ends (a restarted app must `track` its open orders again), and only
 * this process runs them. Use `pgBossFollowUpQueue` or `bullMqFollowUpQueue` for durable checks
 * shared by all instances. A job whose handler throws runs again after 1 s, then 2, 4... up to 60 s.
 * Jobs scheduled before `start` wait for it; `stop` keeps the jobs not yet run, for the next `start`.
 */
export function memoryFollowUpQueue(options: MemoryFollowUpQueueOptions = {}): FollowUpQueue {
  // Waiting, delayed and running jobs, by id: a job is forgotten once its handler succeeds.
  const entries = new Map<string, Entry>();
  const ready: Entry[] = [];
  const running = new Set<Promise<void>>();
  let handler: ((job: FollowUpJob) => Promise<void>) | undefined;
  let concurrency = 1;
  let clock = options.clock;
  let looking: ReturnType<typeof setTimeout> | undefined;
  const now = () => (clock ? clock.now() : Date.now());

  /** Takes every job due now (on the clock, or whose timer has not fired yet) to run. */
  const takeDue = () => {
    const time = now();
    for (const entry of entries.values()) {
      if (entry.taken || entry.due > time || (!clock && entry.timer === undefined)) continue;
      clearTimeout(entry.timer);
      entry.timer = undefined;
      entry.taken = true;
      ready.push(entry);
    }
    pump();
  };
  /** On a clock of its own, the queue looks at it now and then instead of a timer per job. */
  const look = () => {
    looking = undefined;
    if (!handler) return;
    takeDue();
    looking = setTimeout(look, CLOCK_LOOK_MS);
    (looking as { unref?: () => void }).unref?.();
  };
  const arm = (entry: Entry) => {
    if (clock) return; // `look` finds it due
    entry.timer = setTimeout(
      () => {
        entry.timer = undefined;
        entry.taken = true;
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
        entry.due = now() + Math.min(60_000, RETRY_MS * 2 ** (entry.failures - 1));
        entry.taken = false;
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

  const queue: FollowUpQueue & { [ADOPT_CLOCK]: (given: FollowUpClock) => void } = {
    async schedule(job, delayMs) {
      if (entries.has(job.id)) return;
      const entry: Entry = { job: structuredClone(job), due: now() + Math.max(0, delayMs), failures: 0 };
      entries.set(job.id, entry);
      if (handler) arm(entry);
    },
    async start(given, startOptions) {
      if (handler) throw new TypeError('This memoryFollowUpQueue is already started');
      handler = given;
      concurrency = Math.max(1, startOptions.concurrency);
      if (clock) look();
      else for (const entry of entries.values()) if (!entry.timer && !ready.includes(entry)) arm(entry);
    },
    async stop() {
      handler = undefined;
      clearTimeout(looking);
      looking = undefined;
      for (const entry of entries.values()) clearTimeout(entry.timer);
      for (const entry of entries.values()) entry.timer = undefined;
      for (const entry of ready) entry.taken = false;
      ready.length = 0;
      while (running.size > 0) await Promise.all(running);
    },
    async runDue() {
      if (!handler) throw new TypeError('This memoryFollowUpQueue is not started: call start() first');
      // Until nothing is due: a check may schedule another that is due at once (its horizon passed).
      for (;;) {
        takeDue();
        if (running.size === 0 && ready.length === 0) return;
        while (running.size > 0) await Promise.all(running);
      }
    },
    [ADOPT_CLOCK](given) {
      if (clock || handler) return;
      clock = given;
    },
  };
  return queue;
}
