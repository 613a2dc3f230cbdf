/** Webhook deliveries: recorded with the change that emits them, attempted as scheduled jobs, retried with backoff. */
import type { Environment } from '../core/options.js';
import type { SandboxClock } from './clock.js';
import { FAULT_HEADER, type FaultRuleState, type FaultRules, referencesIn } from './faults.js';
import type { DeliveryAttempt, WebhookDelivery } from './records.js';
import type { JobHandler, Scheduler } from './scheduler.js';
import type { Job, SandboxStore } from './store.js';
import { Turns } from './turns.js';

/** How webhook deliveries are retried. */
export interface WebhookRetryOptions {
  /** Attempts per delivery, the first included. Default 6. */
  attempts?: number;
  /** Delay before the first retry, in ms; it doubles each time. Default 1 000. */
  initialDelayMs?: number;
  /** Per-attempt timeout, in ms. Default 10 000. */
  timeoutMs?: number;
}

/** What the sandbox reports after each webhook delivery attempt (the `onWebhookAttempt` option). */
export interface AttemptReport {
  delivery: WebhookDelivery;
  attempt: DeliveryAttempt;
  /** Sandbox time of the next attempt; `null` when delivered or abandoned. */
  nextAttemptAt: number | null;
}

/** The job that makes one delivery attempt; its subject is the delivery id. */
export const WEBHOOK_ATTEMPT = 'webhook.attempt';

/** The job that records the copies of a duplicated event, a batch at a time; its subject is a JSON {@link Copies}. */
export const WEBHOOK_COPIES = 'webhook.copies';

/**
 * Copies recorded per transaction. Thousands recorded in the transaction of the payment held every
 * tenant's requests meanwhile; between batches the sandbox answers them.
 */
export const COPIES_PER_BATCH = 200;

/** What is left to record of a duplicated event: copies `next` to `last` (their ids, reserved when it struck). */
interface Copies {
  fields: Pick<WebhookDelivery, 'url' | 'environment' | 'event' | 'resendOf' | 'fault'>;
  createdAt: number;
  next: number;
  last: number;
}

/**
 * How many attempts are under way at once, to one URL and in all, per tenant; the others wait
 * their turn. A duplicate rule makes thousands of attempts due at the same moment: sent all at once
 * they held the event loop (every tenant's requests waited) and outlasted their timeout; in turns
 * each costs the same, and other requests are answered between them. A bound per URL keeps an
 * endpoint that does not answer from holding the attempts to the others.
 */
export const PARALLEL_ATTEMPTS = { perUrl: 8, total: 32 } as const;

/** How much of an endpoint's answer is kept with the attempt. */
const RESPONSE_EXCERPT_BYTES = 2_048;

/**
 * POSTs `{ event_code, data }` to every configured URL. A non-2xx answer or a network failure is
 * retried with exponential backoff. Deliveries and their attempts are records of the store, and
 * each attempt a job, so deliveries in progress resume after a restart.
 */
export class WebhookDispatcher {
  readonly #store: SandboxStore;
  readonly #clock: SandboxClock;
  readonly #fetch: typeof fetch;
  readonly #retry: Required<WebhookRetryOptions>;
  #scheduler: Scheduler | undefined;
  readonly #turns = new Turns(PARALLEL_ATTEMPTS.total);
  /** The turns of each URL with attempts under way or waiting (removed when it has none). */
  readonly #urlTurns = new Map<string, Turns>();
  readonly #faults: FaultRules | undefined;
  urls: string[];
  /** Called after each attempt is recorded (the CLI prints failures, the dashboard updates). */
  readonly #onAttempt: ((report: AttemptReport) => void) | undefined;
  readonly #stop: AbortSignal | undefined;

  constructor(options: {
    store: SandboxStore;
    clock: SandboxClock;
    fetch: typeof fetch;
    urls: string[];
    retry?: WebhookRetryOptions | undefined;
    onAttempt?: ((report: AttemptReport) => void) | undefined;
    /** The tenant's fault rules on webhook events. */
    faults?: FaultRules | undefined;
    /** Cuts the attempts under way when it aborts (the tenant is removed). */
    stop?: AbortSignal | undefined;
  }) {
    this.#stop = options.stop;
    this.#store = options.store;
    this.#faults = options.faults;
    this.#clock = options.clock;
    this.#fetch = options.fetch;
    this.urls = options.urls;
    this.#retry = { attempts: 6, initialDelayMs: 1_000, timeoutMs: 10_000, ...options.retry };
    this.#onAttempt = options.onAttempt;
  }

  /** Attempts per delivery, the first included. */
  get maxAttempts(): number {
    return this.#retry.attempts;
  }

  /** The scheduler runs the attempts; it is created after the dispatcher, whose handler it needs. */
  attach(scheduler: Scheduler): void {
    this.#scheduler = scheduler;
  }

  /**
   * Records a delivery of `event` to every URL and schedules its first attempt, in the caller's
   * transaction; returns the new deliveries' ids.
   */
  emit(environment: Environment, event: WebhookDelivery['event']): number[] {
    const rule = this.#faults?.strikeEvent(environment, event.event_code);
    const ids = this.urls.flatMap((url) => this.#deliverStruck({ url, environment, event, resendOf: null }, rule));
    if (rule) {
      this.#store.faultEntries.add({
        at: this.#clock.now(),
        environment,
        rule: rule.id,
        effect: structuredClone(rule.effect),
        route: null,
        event: event.event_code,
        references: referencesIn(event.data),
        deliveries: ids,
      });
    }
    return ids;
  }

  /**
   * A delivery as a fault rule changes it: `copies` deliveries attempted at once, one attempted
   * `ms` later on the sandbox clock, one recorded as abandoned with no attempt (a resend delivers
   * it), or one held back until the next event of the same payment has been attempted.
   */
  #deliverStruck(fields: Pick<WebhookDelivery, 'url' | 'environment' | 'event' | 'resendOf'>, rule: FaultRuleState | undefined): number[] {
    const effect = rule?.effect;
    const fault = { ...fields, fault: rule?.id ?? null };
    if (effect?.type === 'duplicate') return this.#duplicate(fault, effect.copies);
    if (effect?.type === 'delay') return [this.#deliver(fault, effect.ms)];
    if (effect?.type === 'drop') return [this.#deliver(fault, null)];
    if (effect?.type === 'reorder') return [this.#deliver({ ...fault, held: true }, 'held')];
    return [this.#deliver(fields)];
  }

  /**
   * Reserves the ids of `copies` deliveries and schedules the job that records them and their
   * first attempts, in batches (in the caller's transaction, so that they are sent even after a
   * crash); returns their ids.
   */
  #duplicate(fields: Copies['fields'], copies: number): number[] {
    const last = this.#store.reserveDeliveryIds(copies);
    const next = last - copies + 1;
    const state: Copies = { fields, createdAt: this.#clock.now(), next, last };
    this.#scheduler?.add(WEBHOOK_COPIES, 0, JSON.stringify(state));
    return Array.from({ length: copies }, (_, index) => next + index);
  }

  /** The job handler of {@link WEBHOOK_COPIES}. */
  readonly copier: JobHandler = { start: (job) => this.#copy(job) };

  async #copy(job: Job): Promise<void> {
    let state = JSON.parse(job.subject) as Copies;
    while (!this.#scheduler?.closed) {
      state = this.#store.transaction(() => this.#copyBatch(job.id, state));
      // The attempts of this batch start (in turns) while the next batch is recorded.
      this.#scheduler?.runDue();
      if (state.next > state.last) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Records the next batch of copies and what is left (the job deleted with the last). */
  #copyBatch(jobId: number, state: Copies): Copies {
    const end = Math.min(state.last, state.next + COPIES_PER_BATCH - 1);
    for (let id = state.next; id <= end; id++) this.#deliver(state.fields, 0, { id, createdAt: state.createdAt });
    const left = { ...state, next: end + 1 };
    if (left.next > left.last) this.#store.jobs.delete(jobId);
    else this.#store.jobs.setSubject(jobId, JSON.stringify(left));
    return left;
  }

  /** A new delivery of a recorded delivery's event to the same URL, attempted now (and retried as any other). */
  resend(original: WebhookDelivery): number {
    return this.#deliver({ url: original.url, environment: original.environment, event: original.event, resendOf: original.id });
  }

  /**
   * Records a delivery and schedules its first attempt `delayMs` from now; `null`: never (dropped,
   * abandoned at once); `held`: once the next event of its payment has been attempted.
   */
  #deliver(
    fields: Pick<WebhookDelivery, 'url' | 'environment' | 'event' | 'resendOf' | 'fault' | 'held'>,
    delayMs: number | null | 'held' = 0,
    reserved?: { id: number; createdAt: number },
  ): number {
    const delivery: WebhookDelivery = {
      id: reserved?.id ?? this.#store.nextDeliveryId(),
      ...fields,
      attempts: [],
      delivered: false,
      abandoned: delayMs === null,
      createdAt: reserved?.createdAt ?? this.#clock.now(),
    };
    this.#store.deliveries.save(delivery);
    if (typeof delayMs === 'number') this.#scheduler?.add(WEBHOOK_ATTEMPT, delayMs, String(delivery.id));
    return delivery.id;
  }

  /** Deliveries of the same payment to the same URL held back by a reorder rule: attempted now, after `delivery`. */
  #releaseHeld(delivery: WebhookDelivery): void {
    const reference = delivery.event.data.paymentReference;
    if (delivery.held || typeof reference !== 'string') return;
    // By the `held` column: a payment may have thousands of deliveries (copies), each released here.
    const conditions = { environment: delivery.environment, payment_reference: reference, url: delivery.url, held: 1 };
    for (const held of this.#store.deliveries.all(conditions)) {
      if (held.id > delivery.id) continue;
      held.held = false;
      this.#store.deliveries.save(held);
      this.#scheduler?.add(WEBHOOK_ATTEMPT, 0, String(held.id));
    }
  }

  /** The job handler of {@link WEBHOOK_ATTEMPT}. */
  readonly handler: JobHandler = { start: (job) => this.#inTurn(job) };

  async #inTurn(job: Job): Promise<void> {
    const url = this.#store.deliveries.get(job.subject)?.url ?? '';
    let turns = this.#urlTurns.get(url);
    if (!turns) {
      turns = new Turns(PARALLEL_ATTEMPTS.perUrl);
      this.#urlTurns.set(url, turns);
    }
    // The URL's turn first: attempts waiting for a slow URL take none of the others' turns.
    const urlDone = await turns.take();
    try {
      const done = await this.#turns.take();
      try {
        await this.#attempt(job);
      } finally {
        done();
      }
    } finally {
      urlDone();
      if (turns.idle) this.#urlTurns.delete(url);
    }
  }

  async #attempt(job: Job): Promise<void> {
    // The sandbox (or the tenant) may have closed while the attempt waited its turn.
    if (this.#scheduler?.closed) return;
    const pending = this.#store.deliveries.get(job.subject);
    if (!pending || pending.delivered || pending.abandoned) {
      this.#store.jobs.delete(job.id);
      return;
    }
    const attempt: DeliveryAttempt = { at: this.#clock.now(), status: null, error: null, durationMs: 0, responseBody: null };
    const began = performance.now();
    try {
      const response = await this.#fetch(pending.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'payment-service-sdk-sandbox',
          ...(pending.fault ? { [FAULT_HEADER]: pending.fault } : {}),
        },
        body: JSON.stringify(pending.event),
        // A redirect is the receiver's answer, not a new address: the sandbox calls only the URLs it is given.
        redirect: 'manual',
        signal: this.#stop
          ? AbortSignal.any([this.#stop, AbortSignal.timeout(this.#retry.timeoutMs)])
          : AbortSignal.timeout(this.#retry.timeoutMs),
      });
      attempt.status = response.status;
      attempt.responseBody = await excerpt(response);
    } catch (error) {
      attempt.error =
        error instanceof Error
          ? error.cause instanceof Error
            ? `${error.message}: ${error.cause.message}`
            : error.message
          : String(error);
    }
    attempt.durationMs = Math.round(performance.now() - began);
    if (this.#scheduler?.closed) return;
    const report = this.#store.transaction((): AttemptReport | undefined => {
      this.#store.jobs.delete(job.id);
      const delivery = this.#store.deliveries.get(job.subject);
      if (!delivery) return undefined;
      delivery.attempts.push(attempt);
      delivery.delivered = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
      let nextAttemptAt: number | null = null;
      if (!delivery.delivered) {
        if (delivery.attempts.length < this.#retry.attempts) {
          const delay = this.#retry.initialDelayMs * 2 ** (delivery.attempts.length - 1);
          this.#scheduler?.add(WEBHOOK_ATTEMPT, delay, job.subject);
          nextAttemptAt = this.#clock.now() + delay;
        } else {
          delivery.abandoned = true;
        }
      }
      this.#store.deliveries.save(delivery);
      if (delivery.attempts.length === 1) this.#releaseHeld(delivery);
      return { delivery, attempt, nextAttemptAt };
    });
    if (report) this.#onAttempt?.(report);
  }
}

/** The first 2 KB of a response body, as text; the rest is not read. */
async function excerpt(response: Response): Promise<string | null> {
  if (!response.body) return null;
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(Math.min(size, RESPONSE_EXCERPT_BYTES));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk.subarray(0, bytes.length - offset), offset);
    offset += Math.min(chunk.byteLength, bytes.length - offset);
  }
  return new TextDecoder().decode(bytes);
}
