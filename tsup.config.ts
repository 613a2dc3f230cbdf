import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';
import { fixtureJsonSchema } from './src/cli/fixture/schema.js';
import { openApiDocument } from './src/openapi/document.js';
import { postgresWebhookStoreMigration } from './src/stores/postgres.js';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** The package's entry points: one per `exports` subpath, and the bin. */
const entry = {
  index: 'src/index.ts',
  testing: 'src/testing/index.ts',
  sandbox: 'src/sandbox/index.ts',
  cli: 'src/cli/index.ts',
  'stores/sqlite': 'src/stores/sqlite.ts',
  'stores/postgres': 'src/stores/postgres.ts',
  'stores/redis': 'src/stores/redis.ts',
  'queues/pg-boss': 'src/queues/pg-boss.ts',
  'queues/bullmq': 'src/queues/bullmq.ts',
  testcontainers: 'src/testcontainers/index.ts',
  mcp: 'src/mcp/index.ts',
};

/**
 * Dependencies published as ESM only. The ESM build imports them (lazily, with `import()`); the CJS
 * build bundles them, because a `require` that is not Node's own cannot load them: Jest's module
 * system, in its default CommonJS mode, refuses ESM and every `import()` without
 * `--experimental-vm-modules`.
 */
const ESM_ONLY_DEPENDENCIES = ['ky', 'p-retry', 'jose', 'uuid'];

const shared = {
  outExtension: ({ format }) => (format === 'esm' ? { js: '.mjs', dts: '.d.mts' } : { js: '.cjs', dts: '.d.cts' }),
  sourcemap: true,
  target: 'node22',
  platform: 'neutral',
  treeshake: true,
  noExternal: ['zod'],
} satisfies Options;

/**
 * `./schema-compiler.js` stays a separate file of dist, imported by the network chunk under the
 * extension of the format being built.
 */
const schemaCompilerExternal: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'schema-compiler-external',
  setup(build) {
    const format = build.initialOptions.define?.TSUP_FORMAT === '"cjs"' ? 'cjs' : 'mjs';
    build.onResolve({ filter: /^\.\/schema-compiler\.js$/ }, () => ({ path: `./schema-compiler.${format}`, external: true }));
  },
};

/**
 * The build for runtimes that forbid code generation (`new Function`): Cloudflare's workerd, Vercel's
 * edge-light, and web workers and browsers, where a CSP may refuse it. The same root entry with
 * `./schema-compiler.js` linked to ./src/core/no-schema-compiler.ts, which checks responses with
 * zod's runtime parser, as the compiler itself falls back to where `new Function` throws: the same
 * answers and errors, without the compiler's 36 kB (minified) that could never run there.
 */
const noSchemaCompiler: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'no-schema-compiler',
  setup(build) {
    const path = fileURLToPath(new URL('./src/core/no-schema-compiler.ts', import.meta.url));
    build.onResolve({ filter: /^\.\/schema-compiler\.js$/ }, () => ({ path }));
    // The hooks run by the SDK itself (./src/core/hooks-route.ts) rather than through ky: the same
    // order, clones and replacements, without ky's 26 kB (minified) in every Worker bundle.
    const hooksRoute = fileURLToPath(new URL('./src/core/hooks-route.ts', import.meta.url));
    build.onResolve({ filter: /^\.\/ky-route\.js$/ }, () => ({ path: hooksRoute }));
    // uuid's v4 as it runs there (crypto.randomUUID), without the package's fallback code.
    const randomUuid = fileURLToPath(new URL('./src/core/random-uuid.ts', import.meta.url));
    build.onResolve({ filter: /^\.\/uuid\.js$/ }, () => ({ path: randomUuid }));
    // p-retry's loop for the transport's one way of calling it, without the package.
    const retryLoop = fileURLToPath(new URL('./src/core/retry-loop.ts', import.meta.url));
    build.onResolve({ filter: /^\.\/p-retry\.js$/ }, () => ({ path: retryLoop }));
  },
};

// The builds write to dist at once: each cleans only its own files (declarations are never cleaned
// by tsup, schema-compiler.* is the last config's and worker/ the no-code-generation build's).
const CJS_FILES = ['**/*.cjs', '**/*.cjs.map'];
const ESM_FILES = ['**/*.mjs', '**/*.mjs.map', '*.json', 'stores/*.sql'];
const not = (patterns: string[]) => [...patterns.map((pattern) => `!${pattern}`), '!schema-compiler.*', '!worker/**'];

export default defineConfig([
  {
    ...shared,
    entry,
    format: ['esm'],
    clean: not(CJS_FILES),
    // Shared chunks, and `import()` for what is needed later: ky, p-retry, uuid, jose and the
    // network code load on first use (test/lazy-load.test.ts, scripts/check-size.mjs).
    splitting: true,
    esbuildPlugins: [schemaCompilerExternal],
    // `payment-service-sdk/fixture.schema.json`: made from the action table the CLI checks fixtures with;
    // `payment-service-sdk/openapi.json`: made from the SDK's Zod schemas and the endpoint table (src/openapi/);
    // `payment-service-sdk/stores/postgres.sql`: the PostgreSQL store's table, for migrations.
    onSuccess: async () => {
      await writeFile('dist/fixture.schema.json', json(fixtureJsonSchema()));
      await writeFile('dist/openapi.json', json(openApiDocument()));
      await writeFile('dist/stores/postgres.sql', postgresWebhookStoreMigration());
    },
  },
  {
    ...shared,
    entry,
    format: ['cjs'],
    clean: not(ESM_FILES),
    noExternal: ['zod', ...ESM_ONLY_DEPENDENCIES],
    // Shared chunks (one PaymentClient and one set of error classes for every subpath, so
    // `instanceof` holds across them), with every `import()` made a `require` inside a promise by
    // esbuild: still lazy, and loadable by Jest without a flag. Optional peers
    // (`@opentelemetry/api`, msw, pg, redis, pg-boss, bullmq) stay external, required on first use only
    // (bullmq by its own subpath only).
    splitting: true,
    esbuildOptions: (options) => {
      options.supported = { ...options.supported, 'dynamic-import': false };
    },
    esbuildPlugins: [schemaCompilerExternal],
  },
  {
    ...shared,
    entry,
    format: ['esm', 'cjs'],
    // Declarations only (.d.ts and .d.cts), in one TypeScript pass for both formats.
    dts: { only: true },
    clean: false,
  },
  {
    // dist/worker/index.mjs, the root entry for the `workerd`, `edge-light`, `worker` and `browser`
    // conditions (ESM only: those conditions' `require` resolves to dist/index.cjs). Its declarations
    // are dist/index.d.ts: the same API.
    ...shared,
    entry: { index: entry.index },
    outDir: 'dist/worker',
    format: ['esm'],
    clean: true,
    splitting: true,
    esbuildPlugins: [noSchemaCompiler],
  },
  {
    ...shared,
    format: ['esm', 'cjs'],
    entry: { 'schema-compiler': 'src/core/schema-compiler.ts' },
    dts: false,
    clean: false,
    splitting: false,
  },
]);
