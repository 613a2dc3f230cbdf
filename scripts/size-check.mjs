// The root entry's size as a user's bundler sees it: dist/index.mjs bundled with its dependencies,
// minified and gzipped, against a budget; and no code of the subpaths (sandbox, testing, cli) in it.
// Run with `npm run size` (it builds first). Lower BUDGET_BYTES as the bundle shrinks.
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';

/** Budget of the root's initial chunk, min+gzip with dependencies (jose loads lazily, in its own chunk). */
const BUDGET_BYTES = 56 * 1024;

/** Strings only the subpaths contain: finding one in the root bundle means a subpath leaked in. */
const SUBPATH_MARKERS = ['pay-external-test', 'TEST_CARDHOLDER', 'Usage: payment-service-sdk', 'x-payment-sandbox', 'Jane Tester'];

const result = await esbuild.build({
  entryPoints: ['dist/index.mjs'],
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  splitting: true,
  outdir: 'size-check-out',
  write: false,
  logLevel: 'silent',
});
const chunks = result.outputFiles.map((file) => ({
  name: file.path.split('/').pop(),
  minified: file.contents.length,
  gzipped: gzipSync(file.contents).length,
  text: file.text,
}));
const initial = chunks.find((chunk) => chunk.name === 'index.js');
if (!initial) throw new Error('no root chunk in the bundle');
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} kB`;
for (const chunk of chunks)
  console.log(`${chunk.name.padEnd(28)} ${kb(chunk.minified).padStart(9)} min  ${kb(chunk.gzipped).padStart(8)} gzip`);
const total = chunks.reduce((sum, chunk) => sum + chunk.gzipped, 0);
console.log(`root initial chunk: ${kb(initial.gzipped)} min+gzip (budget ${kb(BUDGET_BYTES)}); all chunks: ${kb(total)}`);

const leaks = SUBPATH_MARKERS.filter((marker) => chunks.some((chunk) => chunk.text.includes(marker)));
if (leaks.length > 0) console.error(`subpath code in the root bundle: ${leaks.join(', ')}`);
if (initial.gzipped > BUDGET_BYTES) console.error(`over budget by ${kb(initial.gzipped - BUDGET_BYTES)}`);
process.exit(leaks.length === 0 && initial.gzipped <= BUDGET_BYTES ? 0 : 1);
