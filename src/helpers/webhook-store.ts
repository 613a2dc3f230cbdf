/**
 * The `WebhookStore` interface that makes a webhook callback run to success once per event key,
 * across deliveries and processes, and `memoryWebhookStore`, the one-process store. The SQLite,
 * PostgreSQL and Redis stores live in their own subpaths (`payment-service-sdk/stores/*`).
 */
import { MAX_KEY_LENGTH } from './webhook-key.js';

/**
 * What a store answers to a claim:
 * - `claimed`: this delivery runs the callback; `token` names this claim for `complete` and `release`;
 * - `done`: the callback already ran to success for this key;
 * - `busy`: another delivery holds an unexpired lease on the key, for `retryAfterMs` more at most.
 */
export type WebhookClaim = { status: 'claimed'; token: string } | { status: 'done' } | { status: 'busy'; retryAfterMs: number };

/**
 * Where `createWebhookHandler` records which events ran. Implement it for any database (DynamoDB,
 * D1, ...): each method must be atomic, so that of many deliveries racing on one key exactly one
 * gets `claimed`. A key is in one of three states: free (never claimed, released, or its lease
 * ended), claimed (by one token, until its lease ends) or done (for good).
 */
export interface WebhookStore {
  /**
   * Claims `key` for `leaseMs` milliseconds: `claimed` with a fresh token when the key is free or
   * its lease has ended (the claim then belongs to the new token), `done` when it is done, `busy`
   * with the lease's remaining time otherwise.
   */
  claim(key: string, leaseMs: number): Promise<WebhookClaim>;
  /**
   * Marks `key` done after its callback succeeded under `token`: when `token` still holds the
   * claim, or nobody does (its lease ended unclaimed, or a later claim was released). Never while
   * another token holds an unexpired claim (that delivery completes it), never undoing done.
   */
  complete(key: string, token: string): Promise<void>;
  /** Frees `key` (the callback failed), only if `token` still holds its claim. */
  release(key: string, token: string): Promise<void>;
}

/** Options of {@link memoryWebhookStore}. */
export interface MemoryWebhookStoreOptions {
  /** The clock leases are measured with, in milliseconds. Default `Date.now`; tests pass their own. */
  now?: (() => number) | undefined;
}

/**
 * Throws a `TypeError` saying what is wrong unless `key` is a non-empty string of at most 500
 * characters (stores index it) that every store keeps exactly (well-formed Unicode, no NUL: what
 * `createWebhookHandler` makes of any event key), and `value` a non-empty token or, with `lease`,
 * a positive integer.
 */
export function checkStoreArguments(key: unknown, value: unknown, lease?: 'lease'): void {
  const problem = keyProblem(key) || (lease ? leaseProblem(value) : tokenProblem(value));
  if (problem) throw new TypeError(`A webhook store ${problem}`);
}

function keyProblem(key: unknown): string {
  if (typeof key !== 'string' || key === '' || key.length > MAX_KEY_LENGTH) {
    return `key must be a non-empty string of at most ${MAX_KEY_LENGTH} characters`;
  }
  // Stores but memory write UTF-8: PostgreSQL refuses a NUL, and a lone surrogate becomes U+FFFD, merging keys.
  if (!key.isWellFormed() || key.includes('\0')) {
    return 'key must be well-formed Unicode without NUL (createWebhookHandler escapes a lone surrogate or a NUL in an event key)';
  }
  return '';
}

function leaseProblem(value: unknown): string {
  return !Number.isSafeInteger(value) || (value as number) < 1 ? 'lease must be a positive integer number of milliseconds' : '';
}

function tokenProblem(value: unknown): string {
  return typeof value !== 'string' || value === '' ? 'claim token must be a non-empty string' : '';
}

/** A fresh claim token: random, so that a late `complete` of an expired claim never matches a newer one. */
export function newClaimToken(): string {
  return crypto.randomUUID();
}

/**
 * A {@link WebhookStore} in this process's memory: exactly-once across the deliveries one process
 * receives (and the default choice for tests), not across several instances of an app, nor
 * across a restart. Use the SQLite, PostgreSQL or Redis store for those. Done keys are kept for
 * the life of the store (about 100 bytes each), since a redelivery may come hours later.
 */
export function memoryWebhookStore(options: MemoryWebhookStoreOptions = {}): WebhookStore {
  const now = options.now ?? Date.now;
  // A claim holds its key until `until`; a done key holds it for ever, with no token.
  const entries = new Map<string, { token?: string; until: number }>();
  return {
    async claim(key, leaseMs) {
      checkStoreArguments(key, leaseMs, 'lease');
      const until = entries.get(key)?.until ?? 0;
      const time = now();
      if (until > time) return until === Number.POSITIVE_INFINITY ? { status: 'done' } : { status: 'busy', retryAfterMs: until - time };
      const token = newClaimToken();
      entries.set(key, { token, until: time + leaseMs });
      return { status: 'claimed', token };
    },
    async complete(key, token) {
      checkStoreArguments(key, token);
      const entry = entries.get(key);
      if (!entry || entry.token === token || entry.until <= now()) entries.set(key, { until: Number.POSITIVE_INFINITY });
    },
    async release(key, token) {
      checkStoreArguments(key, token);
      if (entries.get(key)?.token === token) entries.delete(key);
    },
  };
}
