// What the transport needs only once it sends a request: ky, p-retry, uuid's v4 and zod's schema
// compiler. Imported lazily as one module (see `loadNetwork` in transport.ts); re-exported by name
// so that a bundler keeps only what is used.
import type * as z from 'zod/mini';
import { compile } from './schema-compiler.js';

export { default as ky, isNetworkError } from 'ky';
export { default as pRetry } from 'p-retry';
export { v4 as uuidv4 } from 'uuid';

const compiledSchemas = new WeakMap<object, z.core.$ZodType>();

/**
 * `schema` compiled by zod into a generated parser, made on first use: a 100-item page validates
 * about ten times faster. A failure, a schema zod cannot compile, or a runtime without `new
 * Function` (edge workers, pages whose CSP refuses eval) goes to the runtime parser, which words
 * every issue.
 */
export function compiled<T>(schema: z.core.$ZodType<T>): z.core.$ZodType<T> {
  let fast = compiledSchemas.get(schema);
  if (!fast) {
    fast = compile(schema);
    compiledSchemas.set(schema, fast);
  }
  return fast as z.core.$ZodType<T>;
}
