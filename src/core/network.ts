// What the transport needs only once it sends a request: ky (for hooks), p-retry, uuid's v4 and
// zod's schema compiler. Imported lazily as one module (see `loadNetwork` in transport.ts); re-exported by name
// so that a bundler keeps only what is used.
import ky, { type Options } from 'ky';
import type * as z from 'zod/mini';
import type { ClientHooks } from './options.js';
import { changesMadeBy } from './schema-changes.js';
import { compile, validate } from './schema-compiler.js';

export { isNetworkError } from 'ky';
export { default as pRetry } from 'p-retry';
export { v4 as uuidv4 } from 'uuid';

const checkers = new WeakMap<object, (data: unknown) => unknown>();

/**
 * A check of response data against `schema` by code zod generates from it, made on first use.
 * It returns the data to hand back as it is, or `undefined` (JSON has no `undefined`) to leave the
 * data to the runtime parser, which words every issue of invalid data. Valid data is handed back
 * as parsed from JSON, checked without building zod's copy of it: a 100-item page in about 1 µs,
 * against about 10 µs for zod's generated parser and 95 µs for the runtime one. That is right only
 * for a schema that changes nothing it accepts (every record and listing: see `changesMadeBy`); the
 * two that reshape theirs (`modifications.extend`, the modifications of one payment), a schema
 * zod cannot compile, and a runtime without `new Function` (edge workers, pages whose CSP refuses
 * eval) leave every value to the runtime parser.
 */
export function checker<T>(schema: z.core.$ZodType<T>): (data: unknown) => T | undefined {
  let check = checkers.get(schema);
  if (!check) {
    const fast = changesMadeBy(schema).length === 0 ? compile(schema) : undefined;
    check = fast ? (data) => (validate(fast, data) ? data : undefined) : () => undefined;
    checkers.set(schema, check);
  }
  return check as (data: unknown) => T | undefined;
}

/** What one attempt sends: a `RequestInit` that `fetch` and ky both take. */
export interface AttemptRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | null;
  signal: AbortSignal;
}

/** Sends one attempt. */
export type Send = (url: string, init: AttemptRequest) => Promise<Response>;

/** ky passes options it does not know to `fetch` as they are: this is how the attempt's signal gets there. */
type AttemptInit = Options & { attemptSignal: AbortSignal };

/**
 * Attempts sent through ky, which runs the client's `beforeRequest` and `afterResponse` hooks: a
 * hook may return a replacement `Request` or `Response`, and reads a clone of the response. ky's
 * retries, timeout and HTTP errors are off: those are the SDK's.
 */
export function sendWithHooks(hooks: ClientHooks, fetch: typeof globalThis.fetch | undefined): Send {
  const client = ky.create({
    retry: 0,
    timeout: false,
    throwHttpErrors: false,
    // The attempt's signal reaches fetch directly. Given to ky as `signal`, it would be merged with
    // ky's own controller (AbortSignal.any) on every call, for an abort ky never makes here.
    fetch: (request, init) => (fetch ?? globalThis.fetch)(request, { signal: (init as AttemptInit).attemptSignal }),
    hooks: {
      beforeRequest: hooks.beforeRequest ? [({ request }) => hooks.beforeRequest?.(request)] : [],
      afterResponse: hooks.afterResponse ? [({ request, response }) => hooks.afterResponse?.(request, response)] : [],
    },
  });
  return (url, { signal, ...init }) => client(url, { ...init, attemptSignal: signal } as AttemptInit);
}
