/**
 * The `WebhookStore` interface that makes a webhook callback run to success once per event key,
 * across deliveries and processes, and `memoryWebhookStore`, the one-process store. The SQLite,
 * PostgreSQL and Redis stores live in their own subpaths (`payment-service-sdk/stores/*`).
 */
import { ConfigurationError } from '../core/errors.js';
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
  /**
   * Optional: runs `fn` with a connection of the store's own database inside one transaction that
   * also marks `key` done, committed together or not at all. The transaction first marks the key
   * done under `token` (locking it), and rolls back, writing nothing, when `token` no longer holds
   * the claim (its lease ended and another took it). The SQL stores have it (PostgreSQL on a `pg`
   * `Pool`: a client of the pool inside `BEGIN`; SQLite: the store's `DatabaseSync` inside
   * `BEGIN IMMEDIATE`); the memory and Redis stores do not. Callbacks reach it as `context.transaction`.
   */
  transaction?<Result>(key: string, token: string, fn: (connection: unknown) => Result | PromiseLike<Result>): Promise<Result>;
}

/**
 * `context.transaction` of a webhook or follow-up callback: runs `fn` with a connection of the
 * store's database inside a transaction that also marks the event done, committed together or not
 * at all, so that rows written through `connection` are written exactly once whatever is killed
 * when. Name the connection's type on `fn`'s parameter: a `pg` `PoolClient` with
 * `postgresWebhookStore` (built on a `Pool`), the store's `DatabaseSync` with `sqliteWebhookStore`.
 * Once per event. Rejects with a `ConfigurationError` (before running `fn`) when the store cannot
 * (memory, Redis, your own without `transaction`, or no store), and with the store's error, having
 * written nothing, when the claim is no longer this process's. An email or an HTTP call inside
 * `fn` is not covered: only rows of that database are.
 */
export type WebhookTransaction = <Connection = unknown, Result = void>(
  fn: (connection: Connection) => Result | PromiseLike<Result>,
) => Promise<Result>;

/** `context.transaction` for the claim `token` holds on `key`, and whether it committed (then `complete` is not needed). */
export function claimTransaction(
  store: WebhookStore | undefined,
  key: string,
  token: string | undefined,
): { transaction: WebhookTransaction; committed(): boolean } {
  let state: 'unused' | 'started' | 'committed' = 'unused';
  const transaction = async <Connection, Result>(fn: (connection: Connection) => Result | PromiseLike<Result>): Promise<Result> => {
    if (!store?.transaction || token === undefined)
      throw new ConfigurationError(
        'store',
        'context.transaction needs a store that runs transactions: postgresWebhookStore (on a pg Pool) or sqliteWebhookStore',
      );
    if (state !== 'unused') throw new TypeError('context.transaction runs once per event: make all its writes in one fn');
    state = 'started';
    const result = await store.transaction(key, token, fn as (connection: unknown) => Result | PromiseLike<Result>);
    state = 'committed';
    return result;
  };
  return { transaction: transaction as WebhookTransaction, committed: () => state === 'committed' };
}

/** The error of a store's `transaction` whose claim is no longer `token`'s: nothing was written. */
export function claimLost(key: string): Error {
  return new Error(
    `The claim on webhook event ${key} is no longer this process's (its lease ended and another took it): the transaction was rolled back`,
  );
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
