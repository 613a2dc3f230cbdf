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
