// What the build for runtimes that forbid code generation (dist/worker/: see tsup.config.ts) links
// in place of p-retry: its loop for the one way the transport calls it (`retries`, no delays of its
// own, `signal`, `onFailedAttempt`: see `#execute` in transport.ts), step for step, without the
// package and its is-network-error. p-retry gives up at once on a TypeError that is not a network
// error; the transport's `onFailedAttempt` already throws for every TypeError (`isRetryable` is
// false for it, and the free stale-socket resend is never made inside the loop), so that test
// could never change an outcome here and is left out.
import type { Options, RetryContext } from 'p-retry';

function describe(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** p-retry's `pRetry`, for `{ retries, minTimeout: 0, maxTimeout: 0, signal?, onFailedAttempt }`. */
export default async function pRetry<T>(input: (attemptNumber: number) => PromiseLike<T> | T, options: Options): Promise<T> {
  const { signal, onFailedAttempt } = options;
  const retries = options.retries ?? 10;
  signal?.throwIfAborted();
  let attemptNumber = 0;
  let retriesConsumed = 0;
  while (retriesConsumed <= retries) {
    attemptNumber++;
    try {
      signal?.throwIfAborted();
      const result = await input(attemptNumber);
      signal?.throwIfAborted();
      return result;
    } catch (thrown) {
      const error =
        thrown instanceof Error ? thrown : new TypeError(`Non-error was thrown: "${describe(thrown)}". You should only throw errors.`);
      signal?.throwIfAborted();
      const retriesLeft = retries - retriesConsumed;
      const context: RetryContext = Object.freeze({ error, attemptNumber, retriesLeft, retriesConsumed, retryDelay: 0 });
      await undefined; // where p-retry awaits its default shouldConsumeRetry
      signal?.throwIfAborted();
      await onFailedAttempt?.(context);
      signal?.throwIfAborted();
      if (retriesLeft <= 0) throw error;
      await undefined; // where p-retry awaits its default shouldRetry
      signal?.throwIfAborted();
      retriesConsumed++;
    }
  }
  throw new Error('Retry attempts exhausted without throwing an error.');
}
