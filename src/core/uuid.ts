// uuid's v4, behind a module of the SDK's own so that the build for runtimes that forbid code
// generation can link ./random-uuid.ts in its place (see tsup.config.ts).
export { v4 } from 'uuid';
