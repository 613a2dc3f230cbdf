/**
 * The `WebhookStore` interface that makes a webhook callback run to success once per event key,
 * across deliveries and processes, and `memoryWebhookStore`, the one-process store. The SQLite,
 * PostgreSQL and Redis stores live in their own subpaths (`payment-service-sdk/stores/*`).
 */

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
  /** Marks `key` done, only if `token` still holds its claim (a lease that ended and was claimed again is left alone). */
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
 * Throws a `TypeError` naming the argument when `key`, `token` or `leaseMs` is not what every store
 * needs: a non-empty key (at most 500 characters: stores index it), a non-empty token, a
 * positive integer lease.
 */
export function checkStoreArguments(key: unknown, tokenOrLease: { token: unknown } | { leaseMs: unknown }): void {
  if (typeof key !== 'string' || key === '' || key.length > 500) {
    throw new TypeError(`A webhook store key must be a non-empty string of at most 500 characters, not ${describeValue(key)}`);
  }
  if ('token' in tokenOrLease) {
    const { token } = tokenOrLease;
    if (typeof token !== 'string' || token === '')
      throw new TypeError(`A webhook claim token must be a non-empty string, not ${describeValue(token)}`);
  } else {
    const { leaseMs } = tokenOrLease;
    if (typeof leaseMs !== 'number' || !Number.isSafeInteger(leaseMs) || leaseMs < 1) {
      throw new TypeError(`A webhook lease must be a positive integer number of milliseconds, not ${describeValue(leaseMs)}`);
    }
  }
}

function describeValue(value: unknown): string {
  return typeof value === 'string'
    ? `a string of ${value.length} characters`
    : typeof value === 'number'
      ? String(value)
      : `a ${typeof value}`;
}

/** A fresh claim token: random, so that a late `complete` of an expired claim never matches a newer one. */
export function newClaimToken(): string {
  return globalThis.crypto.randomUUID();
}

type MemoryEntry = { done: true } | { done: false; token: string; expiresAt: number };

/**
 * A {@link WebhookStore} in this process's memory: exactly-once across the deliveries one process
 * receives (and the default choice for tests), not across several instances of an app, nor
 * across a restart. Use the SQLite, PostgreSQL or Redis store for those. Done keys are kept for
 * the life of the store (about 100 bytes each), since a redelivery may come hours later.
 */
export function memoryWebhookStore(options: MemoryWebhookStoreOptions = {}): WebhookStore {
  const now = options.now ?? Date.now;
  const entries = new Map<string, MemoryEntry>();
  return {
    async claim(key, leaseMs) {
      checkStoreArguments(key, { leaseMs });
      const entry = entries.get(key);
      const time = now();
      if (entry?.done) return { status: 'done' };
      if (entry && entry.expiresAt > time) return { status: 'busy', retryAfterMs: entry.expiresAt - time };
      const token = newClaimToken();
      entries.set(key, { done: false, token, expiresAt: time + leaseMs });
      return { status: 'claimed', token };
    },
    async complete(key, token) {
      checkStoreArguments(key, { token });
      const entry = entries.get(key);
      if (entry && !entry.done && entry.token === token) entries.set(key, { done: true });
    },
    async release(key, token) {
      checkStoreArguments(key, { token });
      const entry = entries.get(key);
      if (entry && !entry.done && entry.token === token) entries.delete(key);
    },
  };
}
