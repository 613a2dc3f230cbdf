// How a client with `beforeRequest` or `afterResponse` hooks sends its attempts: through ky, which
// runs them. Imported on the first request of such a client only (see `Transport` in
// transport.ts); a client without those hooks sends straight to fetch and never loads ky.
import ky, { type Input, isNetworkError, type Options } from 'ky';
import type { ClientHooks } from './options.js';
import type { Send } from './send.js';

/** ky passes options it does not know to `fetch` as they are: this is how the attempt's signal gets there. */
type AttemptInit = Options & { attemptSignal: AbortSignal };

/**
 * The request with redirect mode `manual`: ky builds it so from the attempt's init, but a
 * `beforeRequest` hook may return a replacement made without it, which would follow a 3xx.
 */
function manual(request: Input): Request {
  return request instanceof Request && request.redirect === 'manual' ? request : new Request(request, { redirect: 'manual' });
}

/**
 * Attempts sent through ky, which runs the client's `beforeRequest` and `afterResponse` hooks: a
 * hook may return a replacement `Request` or `Response`, and reads a clone of the response. ky's
 * retries, timeout and HTTP errors are off: those are the SDK's. A fetch failure comes out as
 * fetch threw it, not wrapped in ky's `NetworkError` (which carries the request, and its key).
 */
export function sendWithHooks(hooks: ClientHooks, fetch: typeof globalThis.fetch | undefined): Send {
  const client = ky.create({
    retry: 0,
    timeout: false,
    throwHttpErrors: false,
    // The attempt's signal reaches fetch directly. Given to ky as `signal`, it would be merged with
    // ky's own controller (AbortSignal.any) on every call, for an abort ky never makes here.
    fetch: (request, init) => (fetch ?? globalThis.fetch)(manual(request), { signal: (init as AttemptInit).attemptSignal }),
    hooks: {
      beforeRequest: hooks.beforeRequest ? [({ request }) => hooks.beforeRequest?.(request)] : [],
      afterResponse: hooks.afterResponse ? [({ request, response }) => hooks.afterResponse?.(request, response)] : [],
    },
  });
  return (url, { signal, ...init }) =>
    client(url, { ...init, attemptSignal: signal } as AttemptInit).catch((error: unknown) => {
      throw isNetworkError(error) ? error.cause : error;
    });
}
