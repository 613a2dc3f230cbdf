import type { Environment } from '../core/options.js';
import type { SandboxClock } from './clock.js';
import type { SandboxState, WebhookDelivery } from './records.js';

/** How webhook deliveries are retried. */
export interface WebhookRetryOptions {
  /** Attempts per delivery, the first included. Default 6. */
  attempts?: number;
  /** Delay before the first retry, in ms; it doubles each time. Default 1 000. */
  initialDelayMs?: number;
  /** Per-attempt timeout, in ms. Default 10 000. */
  timeoutMs?: number;
}

/**
 * POSTs `{ event_code, data }` to every configured URL. A non-2xx answer or a network failure is
 * retried with exponential backoff; every attempt is logged in the state's `deliveries`.
 */
export class WebhookDispatcher {
  readonly #state: () => SandboxState;
  readonly #clock: SandboxClock;
  readonly #fetch: typeof fetch;
  readonly #retry: Required<WebhookRetryOptions>;
  readonly #onChange: () => void;
  readonly #inFlight = new Set<Promise<void>>();
  urls: string[];

  constructor(options: {
    state: () => SandboxState;
    clock: SandboxClock;
    fetch: typeof fetch;
    urls: string[];
    retry?: WebhookRetryOptions | undefined;
    onChange: () => void;
  }) {
    this.#state = options.state;
    this.#clock = options.clock;
    this.#fetch = options.fetch;
    this.urls = options.urls;
    this.#retry = { attempts: 6, initialDelayMs: 1_000, timeoutMs: 10_000, ...options.retry };
    this.#onChange = options.onChange;
  }

  /** Queues `event` for every URL, after `delayMs`. */
  emit(environment: Environment, event: WebhookDelivery['event'], delayMs = 0): void {
    for (const url of this.urls) {
      const state = this.#state();
      const delivery: WebhookDelivery = {
        id: ++state.counters.delivery,
        url,
        environment,
        event,
        attempts: [],
        delivered: false,
        abandoned: false,
      };
      state.deliveries.push(delivery);
      this.#schedule(delivery, delayMs);
    }
    this.#onChange();
  }

  /** Schedules again every delivery still in progress, after a restart from a saved state. */
  resume(): void {
    for (const delivery of this.#state().deliveries) {
      if (!delivery.delivered && !delivery.abandoned) this.#schedule(delivery, 0);
    }
  }

  /** Resolves when no delivery attempt is running (scheduled retries may still follow). */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  #schedule(delivery: WebhookDelivery, delayMs: number): void {
    this.#clock.setTimeout(() => {
      const attempt = this.#attempt(delivery).finally(() => this.#inFlight.delete(attempt));
      this.#inFlight.add(attempt);
    }, delayMs);
  }

  async #attempt(delivery: WebhookDelivery): Promise<void> {
    const record: WebhookDelivery['attempts'][number] = { at: this.#clock.now(), status: null, error: null };
    delivery.attempts.push(record);
    try {
      const response = await this.#fetch(delivery.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'payment-service-sdk-sandbox' },
        body: JSON.stringify(delivery.event),
        signal: AbortSignal.timeout(this.#retry.timeoutMs),
      });
      record.status = response.status;
      await response.body?.cancel();
      delivery.delivered = response.ok;
    } catch (error) {
      record.error = error instanceof Error ? error.message : String(error);
    }
    if (!delivery.delivered) {
      if (delivery.attempts.length < this.#retry.attempts) {
        this.#schedule(delivery, this.#retry.initialDelayMs * 2 ** (delivery.attempts.length - 1));
      } else {
        delivery.abandoned = true;
      }
    }
    this.#onChange();
  }
}
