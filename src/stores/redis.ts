/**
 * `payment-service-sdk/stores/redis`: the `WebhookStore` of app instances sharing a Redis server,
 * through the app's own connected node-redis client. Nothing here imports `redis`: the app hands
 * its client in.
 */
import { ConfigurationError } from '../core/errors.js';
import { checkStoreArguments, newClaimToken, type WebhookClaim, type WebhookStore } from '../helpers/webhook-store.js';

/**
 * What the store needs of a client: a connected node-redis (`redis` 5 or 6) client, or anything
 * with the same `eval(script, { keys, arguments })`.
 */
export interface RedisEvaluator {
  /** Runs a Lua script atomically on the server. */
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** Options of {@link redisWebhookStore}. */
export interface RedisWebhookStoreOptions {
  /** Prefix of the store's Redis keys. Default `payment-webhook:`. */
  prefix?: string | undefined;
  /**
   * How long a done mark is kept, in ms. Default: for ever (Redis keeps it until you delete it).
   * Set it to bound Redis's memory; a redelivery after it runs the callback again.
   */
  doneTtlMs?: number | undefined;
}

/** The value of a done key. Claim tokens are UUIDs, so never equal to it. */
const DONE = 'done';

/**
 * The claim: `SET key token NX PX lease`, and when the key exists, what holds it, in the same
 * atomic step (time stands still in a script: the key cannot expire between): `{1}` claimed,
 * `{2}` done, `{3, pttl}` busy.
 */
const CLAIM = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end
if redis.call('GET', KEYS[1]) == '${DONE}' then return {2} end
return {3, redis.call('PTTL', KEYS[1])}`;

/** Marks the key done if the token still holds it, or nobody does (compare-and-set). */
const COMPLETE = `local value = redis.call('GET', KEYS[1])
if value and value ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('SET', KEYS[1], '${DONE}') else redis.call('SET', KEYS[1], '${DONE}', 'PX', ARGV[2]) end
return 1`;

/** Frees the key if the token still holds it (compare-and-delete). */
const RELEASE = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;

/**
 * A {@link WebhookStore} in Redis: exactly-once across every instance of the app that shares the
 * server. `client` is the app's connected node-redis client (`createClient(...).connect()`); the
 * store neither connects nor closes it.
 *
 * A claim is `SET <prefix><key> <token> NX PX <leaseMs>`, which Redis expires by itself when the
 * lease ends; it runs in a Lua script with the read of what holds the key, so that one round trip
 * answers `claimed`, `done` or `busy`. `complete` and `release` are Lua compare-and-set steps on
 * the token, so that a claim whose lease ended (and which another delivery took) is left alone.
 * Done marks are kept for ever unless `doneTtlMs` is set. Use a Redis that persists (AOF) if a
 * restart of Redis must not forget them.
 *
 * ```ts
 * import { createClient } from 'redis';
 * import { redisWebhookStore } from 'payment-service-sdk/stores/redis';
 * const store = redisWebhookStore(await createClient({ url: process.env.REDIS_URL }).connect());
 * ```
 *
 * Throws {@link ConfigurationError} for a malformed option; the store's methods reject with the
 * client's errors (the webhook handler then answers 500, and the sender retries).
 */
export function redisWebhookStore(client: RedisEvaluator, options: RedisWebhookStoreOptions = {}): WebhookStore {
  if (typeof (client as RedisEvaluator | null)?.eval !== 'function') {
    throw new ConfigurationError(
      'client',
      'redisWebhookStore needs a connected node-redis client (anything with eval(script, { keys, arguments }))',
    );
  }
  const prefix = options.prefix ?? 'payment-webhook:';
  if (typeof prefix !== 'string') throw new ConfigurationError('prefix', 'prefix must be a string');
  const { doneTtlMs } = options;
  if (doneTtlMs !== undefined && (!Number.isSafeInteger(doneTtlMs) || doneTtlMs < 1)) {
    throw new ConfigurationError('doneTtlMs', 'doneTtlMs must be a positive integer number of milliseconds');
  }
  const doneTtl = doneTtlMs === undefined ? '' : String(doneTtlMs);

  return {
    async claim(key, leaseMs): Promise<WebhookClaim> {
      checkStoreArguments(key, leaseMs, 'lease');
      const token = newClaimToken();
      const reply = (await client.eval(CLAIM, { keys: [prefix + key], arguments: [token, String(leaseMs)] })) as number[];
      if (reply[0] === 1) return { status: 'claimed', token };
      if (reply[0] === 2) return { status: 'done' };
      return { status: 'busy', retryAfterMs: Math.max(1, Number(reply[1])) };
    },
    async complete(key, token) {
      checkStoreArguments(key, token);
      await client.eval(COMPLETE, { keys: [prefix + key], arguments: [token, doneTtl] });
    },
    async release(key, token) {
      checkStoreArguments(key, token);
      await client.eval(RELEASE, { keys: [prefix + key], arguments: [token] });
    },
  };
}
