// What the build for runtimes that forbid code generation (dist/worker/: see tsup.config.ts) links
// in place of ./ky-route.js: the client's `beforeRequest` and `afterResponse` hooks run by the SDK
// itself, the way ky runs them in ky-route.ts with its retries, timeout and HTTP errors off, without
// ky's 26 kB (minified) that a Worker bundle would otherwise carry. It imports nothing of the SDK's
// (types aside), so that it stays out of the root's chunks.
import type { ClientHooks } from './options.js';
import type { Send } from './send.js';

const isRequest = (value: unknown): value is Request =>
  value instanceof Request || Object.prototype.toString.call(value) === '[object Request]';
const isResponse = (value: unknown): value is Response =>
  value instanceof Response || Object.prototype.toString.call(value) === '[object Response]';

/** Cancels a body no one will read (locked or consumed ones included: that failure is ignored). */
function cancel(response: Response): void {
  response.body?.cancel().catch(() => undefined);
}

/**
 * Attempts with the hooks run around them, as ky does: `beforeRequest` sees the attempt's
 * `Request` (redirect mode `manual`) and may return a replacement `Request`, or a `Response`,
 * which is then the answer without a fetch; `afterResponse` sees the request and a clone of the
 * response, and may return a replacement `Response`. A fetch failure comes out as fetch threw it.
 */
export function sendWithHooks(hooks: ClientHooks, fetch: typeof globalThis.fetch | undefined): Send {
  const { beforeRequest, afterResponse } = hooks;
  return async (url, { signal, ...init }) => {
    // ky lets a microtask pass before its first hook.
    await Promise.resolve();
    let request = new Request(url, init);
    let response: Response | undefined;
    if (beforeRequest) {
      const result: unknown = await beforeRequest(request);
      if (isRequest(result)) request = result;
      else if (isResponse(result)) response = result;
    }
    if (!response) {
      // A replacement made without redirect mode `manual` would follow a 3xx.
      const sent = request.redirect === 'manual' ? request : new Request(request, { redirect: 'manual' });
      response = await (fetch ?? globalThis.fetch)(sent, { signal });
    }
    if (!afterResponse) return response;
    const seen = response.clone();
    let replaced: unknown;
    try {
      replaced = await afterResponse(request, seen);
    } catch (error) {
      cancel(seen);
      cancel(response);
      throw error;
    }
    const next = isResponse(replaced) ? replaced : response;
    if (seen !== next && seen.body !== next.body) cancel(seen);
    if (response !== next && response.body !== next.body) cancel(response);
    return next;
  };
}
