import { ApiError, ConnectionError, ErrorCode, RateLimitError, TimeoutError } from './errors.js';

/**
 * How safe a call is to resend.
 * - `read`: a GET.
 * - `write`: a POST with an `Idempotency-Key`; the service replays the stored response for the same key and bytes.
 * - `charge`: `pos.createPayment`; only resent when the request provably never arrived, or on 429.
 */
export type RetryClass = 'read' | 'write' | 'charge';

/** Longest `Retry-After` the SDK waits for; a longer one fails the call with the error. */
export const MAX_RETRY_AFTER_MS = 60_000;
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;

const RETRYABLE_STATUSES = new Set([408, 500, 502, 503, 504]);

/** Whether a failed attempt may be sent again, per the retry policy table. */
export function isRetryable(error: unknown, retryClass: RetryClass): boolean {
  if (error instanceof ApiError) {
    const retryAfterMs = parseRetryAfter(error.headers?.get('retry-after'));
    // Waiting longer than the cap would hold the caller hostage: fail and let them see `retryAfterMs`.
    if (retryAfterMs !== undefined && retryAfterMs > MAX_RETRY_AFTER_MS) return false;
    if (error instanceof RateLimitError) return true;
  }
  if (error instanceof ConnectionError) return retryClass !== 'charge' || error.notSent;
  if (retryClass === 'charge') return false;
  if (error instanceof TimeoutError) return true;
  if (error instanceof ApiError) {
    if (error.status === 502 && error.code === ErrorCode.TERMINAL_COMMUNICATION) return false;
    return RETRYABLE_STATUSES.has(error.status);
  }
  return false;
}

/** Exponential backoff with full jitter: random(0, min(0.5 s * 2^n, 8 s)), n counting from 0. */
export function backoffDelay(retryIndex: number, random: () => number = Math.random): number {
  return Math.round(random() * Math.min(BASE_DELAY_MS * 2 ** retryIndex, MAX_DELAY_MS));
}

/** The delay before the next attempt: the service's `Retry-After` when it gave one, else backoff. */
export function retryDelay(error: unknown, retryIndex: number, random?: () => number): number {
  const retryAfterMs = error instanceof ApiError ? parseRetryAfter(error.headers?.get('retry-after')) : undefined;
  return retryAfterMs ?? backoffDelay(retryIndex, random);
}

/** Reads `Retry-After` as seconds or an HTTP date, in milliseconds from now; `undefined` if absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Failures of a socket that was already open: the stale keep-alive case, safe to resend once for free. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/**
 * True when a connection died under a request before any response arrived, the signature of a
 * pooled keep-alive socket the server had already closed. Reads and keyed writes resend once for
 * free (even with `maxRetries: 0`); a POS charge never does.
 */
export function isStaleSocket(error: unknown, retryClass: RetryClass): boolean {
  return (
    retryClass !== 'charge' &&
    error instanceof ConnectionError &&
    !error.afterResponse &&
    error.code !== undefined &&
    STALE_SOCKET_CODES.has(error.code)
  );
}

/** Settings of the per-client retry budget. */
export interface RetryBudgetOptions {
  /** Tokens in a full bucket. Default 500. */
  capacity?: number | undefined;
  /** Tokens a retry costs. Default 5. */
  retryCost?: number | undefined;
  /** Tokens a retry after a timeout or a connection failure costs. Default 10. */
  timeoutCost?: number | undefined;
}

/**
 * A token bucket shared by every call of one client, as the AWS SDKs do: retries spend tokens,
 * successes refund them. When the service is down, the bucket empties and calls fail after their
 * first attempt instead of multiplying the load.
 */
export class RetryBudget {
  readonly #capacity: number;
  readonly #retryCost: number;
  readonly #timeoutCost: number;
  #tokens: number;

  constructor(options: RetryBudgetOptions = {}) {
    this.#capacity = options.capacity ?? 500;
    this.#retryCost = options.retryCost ?? 5;
    this.#timeoutCost = options.timeoutCost ?? 10;
    this.#tokens = this.#capacity;
  }

  /** Tokens left. */
  get tokens(): number {
    return this.#tokens;
  }

  /** Takes the cost of retrying after `error`; returns the tokens taken, or `undefined` when the bucket cannot pay. */
  withdraw(error: unknown): number | undefined {
    const cost = error instanceof TimeoutError || error instanceof ConnectionError ? this.#timeoutCost : this.#retryCost;
    if (cost > this.#tokens) return undefined;
    this.#tokens -= cost;
    return cost;
  }

  /** A call succeeded: give back what its retries took, or one token if it needed none. */
  refund(spent: number): void {
    this.#tokens = Math.min(this.#capacity, this.#tokens + (spent > 0 ? spent : 1));
  }
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
