// What the transport needs only once it sends a request: p-retry, uuid's v4 and zod's schema
// compiler. Imported lazily as one module (see `loadNetwork` in transport.ts); re-exported by name
// so that a bundler keeps only what is used. ky loads apart, for a client with hooks (ky-route.ts).
import type * as z from 'zod/mini';
import { changesMadeBy } from './schema-changes.js';
import { compile, validate } from './schema-compiler.js';

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
