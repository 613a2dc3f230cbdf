import { writeFile } from 'node:fs/promises';
import { defineConfig, type Options } from 'tsup';
import { fixtureJsonSchema } from './src/cli/fixture/schema.js';
import { openApiDocument } from './src/openapi/document.js';
import { postgresWebhookStoreMigration } from './src/stores/postgres.js';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

const shared = {
  format: ['esm', 'cjs'],
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

export default defineConfig([
  {
    ...shared,
    entry: {
      index: 'src/index.ts',
      testing: 'src/testing/index.ts',
      sandbox: 'src/sandbox/index.ts',
      cli: 'src/cli/index.ts',
      'stores/sqlite': 'src/stores/sqlite.ts',
      'stores/postgres': 'src/stores/postgres.ts',
      'stores/redis': 'src/stores/redis.ts',
      testcontainers: 'src/testcontainers/index.ts',
    },
    dts: true,
    // Both builds write to dist at once: the other build's files are not this one's to remove.
    clean: ['!schema-compiler.*'],
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
    entry: { 'schema-compiler': 'src/core/schema-compiler.ts' },
    dts: false,
    clean: false,
    splitting: false,
  },
]);
