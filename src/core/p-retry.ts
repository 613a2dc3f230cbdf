// p-retry, behind a module of the SDK's own so that the build for runtimes that forbid code
// generation can link ./retry-loop.ts in its place (see tsup.config.ts).
export { default } from 'p-retry';
