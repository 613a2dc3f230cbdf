/** The sandbox's scheduled work: stored jobs run when they fall due on the sandbox clock. */
import type { SandboxClock, TimerHandle } from './clock.js';
import type { Job, SandboxStore } from './store.js';

/**
 * What runs a kind of job. `run` is synchronous: the job is deleted and `run` applied in one
 * transaction. `start` is for work that waits on I/O (a webhook attempt): it deletes the job itself
 * when it records the outcome, so that a crash mid-way leaves the job to run again after a restart.
 */
export type JobHandler = { run(subject: string): void } | { start(job: Job): Promise<void> };

/**
 * Runs the jobs of the store when they fall due on the sandbox clock. One timer is armed for the
 * earliest job; `runDue` is also called before every request, so that work due at a request's
 * time is applied before it is answered, whatever the timer's lateness.
 */
export class Scheduler {
  readonly #store: SandboxStore;
  readonly #clock: SandboxClock;
  readonly #handlers: Record<string, JobHandler>;
  readonly #onError: (error: unknown) => void;
  readonly #inFlight = new Set<Promise<void>>();
  #timer: { handle: TimerHandle; at: number } | undefined;
  #closed = false;
  /**
   * No job that is not claimed falls due before this (`Infinity`: there is none), or `undefined`
   * when unknown. Adding a job lowers it; anything else can only make it too early, which costs one
   * query, never a missed job. It spares the store two queries on most requests.
   */
  #earliest: number | undefined;

  constructor(options: {
    store: SandboxStore;
    clock: SandboxClock;
    handlers: Record<string, JobHandler>;
    onError: (error: unknown) => void;
  }) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#handlers = options.handlers;
    this.#onError = options.onError;
  }

  /** Adds a job, in the caller's transaction if there is one. */
  add(kind: string, delayMs: number, subject: string): void {
    const dueAt = this.#clock.now() + Math.max(0, delayMs);
    this.#store.jobs.add(kind, dueAt, subject);
    if (this.#earliest !== undefined) this.#earliest = Math.min(this.#earliest, dueAt);
    if (!this.#timer || dueAt < this.#timer.at) this.#arm(dueAt);
  }

  /** Runs every job that is due now, then arms the timer for the next one. */
  runDue(): void {
    if (this.#closed) return;
    if (this.#earliest !== undefined && this.#earliest > this.#clock.now()) {
      // A timer can fire a millisecond before the clock shows its time (Node's timers and Date.now()
      // run on different clocks): keep one armed, or the job would wait for the next request.
      if (!this.#timer && Number.isFinite(this.#earliest)) this.#arm(this.#earliest);
      return;
    }
    // A job under way is claimed in the store: this reads each due job once, however many run.
    for (;;) {
      const due = this.#store.jobs.claimDue(this.#clock.now());
      if (due.length === 0) break;
      for (const job of due) this.#run(job);
    }
    const next = this.#store.jobs.nextDue();
    this.#earliest = next ?? Number.POSITIVE_INFINITY;
    if (next === undefined) this.#disarm();
    else if (this.#timer?.at !== next) this.#arm(next);
  }

  /** Sandbox time of the earliest job that is not under way, if any. */
  nextDueAt(): number | undefined {
    return this.#store.jobs.nextDue();
  }

  /** Runs what is due and re-arms the timer, for when the clock jumped (an advance) or jobs were deleted. */
  reschedule(): void {
    this.#earliest = undefined;
    this.#disarm();
    this.runDue();
  }

  /** Resolves when no asynchronous job is under way. */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  /** Stops running jobs; those left stay in the store for the next start. */
  close(): void {
    this.#closed = true;
    this.#disarm();
  }

  get closed(): boolean {
    return this.#closed;
  }

  #run(job: Job): void {
    const handler = this.#handlers[job.kind];
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      if ('run' in handler) {
        this.#store.transaction(() => {
          this.#store.jobs.delete(job.id);
          handler.run(job.subject);
        });
        return;
      }
      const started = handler
        .start(job)
        .catch((error: unknown) => this.#failed(job, error))
        .finally(() => {
          // The job may still be in the store, due again now that it no longer runs.
          if (!this.#closed) this.#release(job);
          this.#earliest = undefined;
          this.#inFlight.delete(started);
          this.runDue();
        });
      this.#inFlight.add(started);
    } catch (error) {
      this.#failed(job, error);
    }
  }

  #release(job: Job): void {
    try {
      this.#store.jobs.release(job.id);
    } catch (error) {
      this.#onError(error);
    }
  }

  /** A job that throws is a sandbox bug: it is dropped, so that it cannot fail again forever, and reported. */
  #failed(job: Job, error: unknown): void {
    if (this.#closed) return;
    this.#store.jobs.delete(job.id);
    this.#onError(error);
  }

  #arm(at: number): void {
    this.#disarm();
    if (this.#closed) return;
    const handle = this.#clock.setTimeout(
      () => {
        this.#timer = undefined;
        this.runDue();
      },
      Math.max(0, at - this.#clock.now()),
    );
    this.#timer = { handle, at };
  }

  #disarm(): void {
    if (this.#timer) this.#clock.clearTimeout(this.#timer.handle);
    this.#timer = undefined;
  }
}
