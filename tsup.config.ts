import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', testing: 'src/testing/index.ts', sandbox: 'src/sandbox/index.ts', cli: 'src/cli/index.ts' },
  format: ['esm', 'cjs'],
  outExtension: ({ format }) => (format === 'esm' ? { js: '.mjs', dts: '.d.mts' } : { js: '.cjs', dts: '.d.cts' }),
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node22',
  platform: 'neutral',
  splitting: true,
  treeshake: true,
  noExternal: ['zod'],
});
