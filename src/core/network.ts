// What the transport needs only once it sends a request: p-retry, uuid's v4, zod's schema
// compiler and the OpenTelemetry glue (which imports the optional `@opentelemetry/api` itself, at
// run time). Imported lazily as one module (see `loadNetwork` in transport.ts); re-exported by name
// so that a bundler keeps only what is used. ky loads apart, for a client with hooks (ky-route.ts).
import type * as z from 'zod/mini';
import { changesMadeBy } from './schema-changes.js';
import { compile, validate } from './schema-compiler.js';

export { default as pRetry } from './p-retry.js';
export { ready, startSpan } from './telemetry.js';
export { v4 as uuidv4 } from './uuid.js';

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

/** The chain of causes below a fetch failure, outermost first (bounded: causes can be cyclic). */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && current !== null && chain.length < 5; ) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

/**
 * What a fetch failure says, for the transport's `ConnectionError`: the messages down its chain of
 * causes, the first system error code (`ECONNRESET`...), and whether that code proves the request
 * never left. Here, not in the transport: only a request that was sent can need it.
 */
export function fetchFailure(cause: unknown, afterResponse: boolean): { message: string; code: string | undefined; notSent: boolean } {
  const chain = causeChain(cause);
  const code = chain.map((item) => (item as { code?: unknown }).code).find((value) => typeof value === 'string') as string | undefined;
  const messages = chain.flatMap((item) => (item instanceof Error ? [item.message] : typeof item === 'string' ? [item] : []));
  return { message: messages.join(': '), code, notSent: !afterResponse && code !== undefined && NOT_SENT_CODES.has(code) };
}

const checkers = new WeakMap<object, (data: unknown) => unknown>();

/**
 * A check of response data against `schema` by code zod generates from it, made on first use.
 * It returns the data to hand back as it is, or `undefined` (JSON has no `undefined`) to leave the
 * data to the runtime parser, which words every issue of invalid data. Valid data is handed back
 * as parsed from JSON, checked without building zod's copy of it: a 100-item page in about 1 µs,
 * against about 10 µs for zod's generated parser and 95 µs for the runtime one. That is right only
 * for a schema that changes nothing it accepts (every record and listing: see `changesMadeBy`); the
 * two that reshape theirs (`modifications.extend`, the modifications of one payment) leave every
 * value to the runtime parser. Where zod cannot compile a schema, or the runtime has no `new
 * Function` (edge workers, pages whose CSP refuses eval), `validate` checks with the runtime parser
 * and valid data is still handed back as it is.
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
