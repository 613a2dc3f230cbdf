#!/usr/bin/env node
/**
 * Size budget of the root entry (`payment-service-sdk`), minified and gzipped with its dependencies
 * bundled, as an app bundler would ship it; and a guard that the `sandbox`, `testing`, `cli` and `stores/*`
 * subpaths never end up in it. Needs dist/ built (`npm run check:size` builds first).
 *
 * The root is bundled from dist/index.mjs with esbuild (`splitting: true`), so code behind a dynamic
 * `import()` lands in lazy chunks: p-retry, uuid and zod's schema compiler (loaded by the first API
 * call), ky (loaded by the first call of a client with hooks) and jose (loaded by the first
 * decodeRedirectData). Each stage has its budget. A last stage bundles the README's Workers example
 * as a Worker (one file, `--conditions=workerd,worker,browser`), which resolves the package to
 * dist/worker/, the build without the schema compiler, and checks that no `new Function` is in it.
 *
 * `@opentelemetry/api` stays out of the bundle: it is an optional peer dependency, which the SDK
 * imports on the first request only when the app has installed it (and then imports itself, to
 * register a tracer provider): its bytes are the app's, with or without this SDK.
 */
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/**
 * Budgets in bytes (1 kB = 1000 B), min+gzip. Measured size + ~1%: lower them as the bundle shrinks.
 * `initial` is what importing the package loads; `request` adds the chunk the first API call loads
 * (p-retry, uuid, zod's schema compiler); `total` adds ky (a client with hooks) and jose (the first
 * decodeRedirectData).
 */
// Issue 24 added 1.12 kB to each stage (the handler's store/confirm path, memoryWebhookStore and
// webhookEventKey, which the issue puts in the root) and issue 25 0.27 kB (the schemas' notes the
// OpenAPI generator reads); pg and redis never reach the root (checked below). Issue 30 added
// 0.46 kB (the POS errors' key and state on every path after a charge, the webhook key's escaping):
// splitting POS recovery into a lazy chunk was tried and made the initial load larger (two gzip
// streams compress worse than one). Issue 32 added 3.15 kB: createFollowUps, memoryFollowUpQueue
// and context.transaction, which the issue puts in the root (loading the check logic on `start()`
// was tried: a shared chunk made the initial load 1.2 kB larger still). Issue 36 added 1.5 kB:
// pos.preparePayment, posPaymentKey, the POS calls' deadline, pos.checkPayment and follow-ups of a
// charge by its state, which the issue puts in the root.
// Issue 39 asked for 27.0 kB initial and at most 30 kB for the Worker bundle. The Worker bundle is
// within it (2026-12-02: 28.99 kB, budget measured + ~1 %): the build for Workers links its own
// hooks runner, retry loop and UUIDs in place of ky, p-retry and uuid (src/core/hooks-route.ts,
// retry-loop.ts, random-uuid.ts; test/worker-build/ runs the client, retry and redirect suites with
// them). The initial load is not (32.78 kB; request 46.41, total 64.89): its budgets stay the
// measured values + ~1 %. What it holds is zod/mini's runtime (~33 kB minified, needed at import:
// parseWebhook and the calls' parameter checks are synchronous) and the SDK's own ~70 kB, of which
// the async-only paths (the webhook handler's delivery, webhooks.confirm, POS recovery, follow-ups'
// checks, interpretResponse) could load later only if they imported nothing from the root: moving
// POS recovery, pos.checkPayment and the charge lookup behind an `import()` was measured: the lazy
// chunk shares errors, deadline, retry and transport with the root, so esbuild splits the root into
// an entry and a shared chunk, and the initial load fell by only 0.64 kB for 2.78 kB more in total
// (the cross-chunk imports and exports, two gzip streams).
// - initial: everything the root's static imports reach (zod/mini's schemas and runtime parser, the
//   client and its resources, POS recovery, webhooks, follow-ups, redirect glue without jose);
// - request: + the network chunk (p-retry, uuid, the OpenTelemetry glue) and dist/schema-compiler.mjs;
// - total: + ky (a client with hooks) and jose (decodeRedirectData);
// - Worker: the README's Workers example as one file under the Worker conditions (dist/worker/, no
//   schema compiler, ky, p-retry or uuid), every dynamic import inlined, as wrangler bundles it.
const BUDGET_INITIAL = 33_100;
const BUDGET_REQUEST = 46_900;
const BUDGET_TOTAL = 65_550;
const BUDGET_WORKER = 29_300;

/** The README's Workers example, bundled as a Worker (stage 4). */
const WORKER_EXAMPLE = 'examples/webhooks/cloudflare-worker.ts';

/** Optional peer dependencies: the app's own packages when it has them, not counted (see the top). */
const OPTIONAL_PEERS = ['@opentelemetry/api'];

/** Text that exists only in a subpath: none of it may appear in the root bundle. */
const SUBPATH_MARKERS = {
  sandbox: ['pay-external-test', 'x-payment-sandbox', 'not the real payment service'],
  testing: ['Jane Tester', '4111111111111111', 'declined, insufficient balance'],
  cli: ['The payment service from the shell', 'Press Ctrl+C to stop'],
  'stores/sqlite': ['PRAGMA journal_mode = WAL', 'sqliteWebhookStore needs'],
  'stores/postgres': ['statement_timestamp()', 'postgresWebhookStore needs'],
  'stores/redis': ["redis.call('SET'", 'redisWebhookStore needs'],
  'queues/pg-boss': ["needs the app's started pg-boss 12 PgBoss", 'c8a7d0b4-3f0e-4a52-9a43-5b0f1f7c2e61'],
  'queues/bullmq': ['needs what BullMQ takes as connection'],
  testcontainers: ['withHostNetwork needs', '/payment-sandbox/faults.json'],
  mcp: ['The MCP token must be at least 16 characters', 'Idempotency-Key of this write. Leave it out'],
};

const repo = fileURLToPath(new URL('..', import.meta.url));
const kB = (bytes) => `${(bytes / 1000).toFixed(2)} kB`;
const gzip = (bytes) => gzipSync(bytes).length;
const problems = [];

// 1. The root's sources import nothing from the subpaths' sources (deps left out: only our files).
const sources = await build({
  absWorkingDir: repo,
  entryPoints: ['src/index.ts'],
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'neutral',
  packages: 'external',
  metafile: true,
  logLevel: 'silent',
});
const sourceInputs = Object.keys(sources.metafile.inputs);
const leakedSources = sourceInputs.filter((path) => /^src\/(sandbox|testing|cli|stores|queues|testcontainers|mcp)\//.test(path));
for (const path of leakedSources) problems.push(`src/index.ts imports ${path}`);

// 2. The root bundle, dependencies included, split at dynamic imports.
const bundle = await build({
  absWorkingDir: repo,
  entryPoints: { index: 'dist/index.mjs' },
  bundle: true,
  minify: true,
  format: 'esm',
  // The dist entry is platform-neutral and imports no Node built-ins; 'browser' resolves the
  // dependencies' browser/worker-friendly builds, as an edge or browser bundle would (Node's
  // conditions give the same bytes today).
  platform: 'browser',
  splitting: true,
  outdir: 'size-check-out', // not written: write is false
  write: false,
  metafile: true,
  logLevel: 'warning',
  external: OPTIONAL_PEERS,
});
const files = new Map(bundle.outputFiles.map((file) => [relative(repo, file.path), file.contents]));
const outputs = Object.entries(bundle.metafile.outputs).filter(([path]) => path.endsWith('.js'));
const entry = outputs.find(([, output]) => output.entryPoint === 'dist/index.mjs')?.[0];

/** The entry chunk and every chunk it reaches through static imports. */
const initial = new Set();
const visit = (path) => {
  if (initial.has(path)) return;
  initial.add(path);
  for (const imported of bundle.metafile.outputs[path].imports) if (imported.kind === 'import-statement') visit(imported.path);
};
visit(entry);

/** What an output holds, by package: minified bytes before gzip, largest first. */
function packagesOf(output) {
  const byPackage = new Map();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? 'payment-service-sdk';
    if (bytesInOutput > 0) byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput);
  }
  return new Map([...byPackage].sort((a, b) => b[1] - a[1]));
}

const rows = outputs.map(([path, output]) => {
  const bytes = files.get(path);
  const packages = packagesOf(output);
  const contents = [...packages].map(([name, size]) => `${name} ${kB(size)}`).join(', ') || '(glue)';
  const load = initial.has(path) ? 'initial' : packages.has('p-retry') ? 'request' : 'lazy';
  return { path, load, min: bytes.length, gz: gzip(bytes), packages, contents };
});
const initialGz = rows.filter((row) => row.load === 'initial').reduce((sum, row) => sum + row.gz, 0);
const requestRows = rows.filter((row) => row.load !== 'lazy');
const requestGz = requestRows.reduce((sum, row) => sum + row.gz, 0);
const requestMin = requestRows.reduce((sum, row) => sum + row.min, 0);
const totalGz = rows.reduce((sum, row) => sum + row.gz, 0);
const initialMin = rows.filter((row) => row.load === 'initial').reduce((sum, row) => sum + row.min, 0);
const totalMin = rows.reduce((sum, row) => sum + row.min, 0);

// 3. No subpath code in any chunk of the root; each marker must exist in its own subpath's build,
// or the search proves nothing.
const rootText = rows.map((row) => new TextDecoder().decode(files.get(row.path))).join('\n');
/** A dist file and the chunks it imports (tsup splits code shared by several entries into chunks). */
async function readWithChunks(file, seen = new Set()) {
  if (seen.has(file)) return '';
  seen.add(file);
  const text = await readFile(new URL(`../dist/${file}`, import.meta.url), 'utf8');
  const chunks = [...text.matchAll(/(?:from|import\()\s*["']\.\/([\w.-]+\.mjs)["']/g)].map((match) => match[1]);
  return [text, ...(await Promise.all(chunks.map((chunk) => readWithChunks(chunk, seen))))].join('\n');
}
const subpathText = {};
for (const name of Object.keys(SUBPATH_MARKERS)) subpathText[name] = await readWithChunks(`${name}.mjs`);
for (const [name, markers] of Object.entries(SUBPATH_MARKERS)) {
  for (const marker of markers) {
    if (!subpathText[name].includes(marker))
      problems.push(`marker '${marker}' is not in dist/${name}.mjs or its chunks: update SUBPATH_MARKERS`);
    if (rootText.includes(marker)) problems.push(`the root bundle contains '${marker}' from the ${name} subpath`);
  }
}
const bundleInputs = Object.keys(bundle.metafile.inputs);
for (const path of bundleInputs.filter(
  (input) =>
    /^dist\/(sandbox|testing|cli|stores\/|queues\/|testcontainers|mcp)/.test(input) ||
    /\/(msw|pg|pg-boss|bullmq|redis|@redis|testcontainers|@modelcontextprotocol)\//.test(input),
)) {
  problems.push(`the root bundle includes ${path}`);
}
const joseChunks = rows.filter((row) => row.packages.has('jose'));

// 4. The README's Workers example (examples/webhooks/cloudflare-worker.ts) bundled for a Worker as
// wrangler would: one file, every dynamic import inlined, `payment-service-sdk` resolved through
// package.json's `exports` under the Worker conditions (dist/worker/, the build without zod's schema
// compiler), not through tsconfig's paths to src/. workerd refuses `new Function`: none may be in it.
const worker = await build({
  absWorkingDir: repo,
  entryPoints: [WORKER_EXAMPLE],
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'neutral',
  conditions: ['workerd', 'worker', 'browser'],
  tsconfigRaw: {},
  write: false,
  outfile: 'size-check-out/worker.js', // not written: write is false
  metafile: true,
  logLevel: 'warning',
  external: OPTIONAL_PEERS,
});
const workerJs = worker.outputFiles.find((file) => file.path.endsWith('.js'))?.contents ?? new Uint8Array();
const workerGz = gzip(workerJs);
const workerInputs = Object.keys(worker.metafile.inputs);
const workerPackages = packagesOf(Object.values(worker.metafile.outputs).find((output) => output.entryPoint) ?? { inputs: {} });
if (!workerInputs.some((input) => input.startsWith('dist/worker/')))
  problems.push(
    `the Worker bundle did not resolve payment-service-sdk to dist/worker/ (${workerInputs.filter((input) => input.startsWith('dist/')).join(', ')})`,
  );
if (workerInputs.some((input) => /schema-compiler|zod\/v4\/core\/compile\.js$/.test(input)))
  problems.push('the Worker bundle contains the schema compiler');
for (const name of ['ky', 'p-retry', 'uuid'].filter((name) => workerPackages.has(name)))
  problems.push(
    `the Worker bundle contains ${name}, which the build for Workers does without (src/core/hooks-route.ts, retry-loop.ts, random-uuid.ts)`,
  );
if (/new Function|\bFunction\(/.test(new TextDecoder().decode(workerJs)))
  problems.push('the Worker bundle contains new Function, which workerd refuses');

console.log('Root entry (payment-service-sdk), esbuild bundle with dependencies, minified, gzip (level 6):\n');
console.log(`${'chunk'.padEnd(32)} ${'load'.padEnd(8)} ${'min'.padStart(10)} ${'min+gz'.padStart(10)}  contents (minified)`);
for (const row of rows) {
  console.log(
    `${row.path.replace(/^size-check-out\//, '').padEnd(32)} ${row.load.padEnd(8)} ${kB(row.min).padStart(10)} ${kB(row.gz).padStart(10)}  ${row.contents}`,
  );
}
console.log(`${'initial load'.padEnd(41)} ${kB(initialMin).padStart(10)} ${kB(initialGz).padStart(10)}  budget ${kB(BUDGET_INITIAL)}`);
console.log(
  `${'initial + first request'.padEnd(41)} ${kB(requestMin).padStart(10)} ${kB(requestGz).padStart(10)}  budget ${kB(BUDGET_REQUEST)}`,
);
console.log(`${'total'.padEnd(41)} ${kB(totalMin).padStart(10)} ${kB(totalGz).padStart(10)}  budget ${kB(BUDGET_TOTAL)}`);
console.log(
  `${'Worker bundle (README example)'.padEnd(41)} ${kB(workerJs.length).padStart(10)} ${kB(workerGz).padStart(10)}  budget ${kB(BUDGET_WORKER)}  ${[...workerPackages].map(([name, size]) => `${name} ${kB(size)}`).join(', ')}`,
);
const joseWhere = joseChunks.map((row) => `${row.load} chunk ${row.path.replace(/^size-check-out\//, '')} (${kB(row.gz)} min+gz)`);
console.log(
  `\njose: ${joseWhere.join(', ') || 'not bundled'}${joseChunks.every((row) => row.load === 'lazy') ? ", loaded on first use by decodeRedirectData's dynamic import: not in the initial load" : ''}`,
);
console.log(`optional peers, the app's own, not bundled or counted: ${OPTIONAL_PEERS.join(', ')}`);
console.log(
  `subpaths: ${leakedSources.length === 0 ? 'src/index.ts reaches no src/sandbox, src/testing, src/cli, src/stores or src/testcontainers file' : 'LEAK in the sources'}` +
    ` (${sourceInputs.length} source files); ${Object.values(SUBPATH_MARKERS).flat().length} subpath markers searched in the bundle`,
);

if (initialGz > BUDGET_INITIAL) problems.push(`initial load ${kB(initialGz)} is over its budget of ${kB(BUDGET_INITIAL)}`);
if (requestGz > BUDGET_REQUEST) problems.push(`initial + first request ${kB(requestGz)} is over its budget of ${kB(BUDGET_REQUEST)}`);
if (totalGz > BUDGET_TOTAL) problems.push(`total ${kB(totalGz)} is over its budget of ${kB(BUDGET_TOTAL)}`);
if (workerGz > BUDGET_WORKER) problems.push(`the Worker bundle ${kB(workerGz)} is over its budget of ${kB(BUDGET_WORKER)}`);
if (problems.length > 0) {
  console.log(`\ncheck-size: FAIL\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  process.exitCode = 1;
} else {
  console.log(
    `\ncheck-size: PASS (initial ${kB(initialGz)} <= ${kB(BUDGET_INITIAL)}, with the first request ${kB(requestGz)} <= ${kB(BUDGET_REQUEST)}, total ${kB(totalGz)} <= ${kB(BUDGET_TOTAL)}, Worker bundle ${kB(workerGz)} <= ${kB(BUDGET_WORKER)}, no subpath code)`,
  );
}
