// What the transport needs only once it sends a request: ky, p-retry, uuid's v4 and zod's schema
// compiler. Imported lazily as one module (see `loadNetwork` in transport.ts); re-exported by name
// so that a bundler keeps only what is used.
export { default as ky, isNetworkError } from 'ky';
export { default as pRetry } from 'p-retry';
export { v4 as uuidv4 } from 'uuid';
export { compile } from './schema-compiler.js';
