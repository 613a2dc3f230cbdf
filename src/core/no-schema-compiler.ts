// What the build for runtimes that forbid code generation (the `workerd`, `edge-light`, `worker`
// and `browser` conditions of the root entry: see tsup.config.ts) links in place of
// ./schema-compiler.js. There `new Function` throws, so zod's compiler would hand every schema back
// untouched, and `validate` would check it with the runtime parser: this does the same without
// shipping the compiler (about 36 kB minified). `checker` in network.ts works unchanged: valid data
// of a schema that changes nothing is still handed back as it is.
import type * as z from 'zod/mini';

export { validate } from 'zod/mini';

/** The schema itself: `validate` then checks with zod's runtime parser, which needs no code generation. */
export function compile<T extends z.core.$ZodType>(schema: T): T {
  return schema;
}
