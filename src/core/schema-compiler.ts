// zod's schema compiler and the check that runs its output, built as a module of its own with its
// own copy of the zod code it needs (see tsup.config.ts). Inside the package's main build it would
// share zod's core with the root entry, and a bundler would then split that core into a separate
// chunk of the initial load, making the import larger for everyone to speed up only the code that
// sends requests.
export { compile, validate } from 'zod/mini';
