/**
 * The real PostgreSQL and Redis servers of the webhook store tests, as `scripts/services.sh start`
 * exports them. Locally a missing server skips its tests with a warning; under REQUIRE_SERVICES=1
 * (.ci/run) it fails them.
 */

const HINT = 'run `eval "$(scripts/services.sh start)"` first (scripts/services.sh stop when done)';

function required(): boolean {
  const value = process.env.REQUIRE_SERVICES;
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

function serviceUrl(variable: string, server: string): string | undefined {
  const url = process.env[variable];
  if (url) return url;
  const message = `${variable} is not set: the ${server} tests need a real ${server}; ${HINT}`;
  if (required()) throw new Error(`${message}. REQUIRE_SERVICES is set, so they may not be skipped.`);
  console.warn(`[${server} tests skipped] ${message}.`);
  return undefined;
}

/** `PAYMENT_SDK_TEST_POSTGRES_URL`, or undefined after a warning (throws under REQUIRE_SERVICES=1). */
export function postgresUrl(): string | undefined {
  return serviceUrl('PAYMENT_SDK_TEST_POSTGRES_URL', 'PostgreSQL');
}

/** `PAYMENT_SDK_TEST_REDIS_URL`, or undefined after a warning (throws under REQUIRE_SERVICES=1). */
export function redisUrl(): string | undefined {
  return serviceUrl('PAYMENT_SDK_TEST_REDIS_URL', 'Redis');
}

/** A name no other test (or test file running in parallel) uses: for tables and key prefixes. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}
