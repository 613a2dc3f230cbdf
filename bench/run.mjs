// `npm run bench`: what the SDK costs on top of the network, beside raw fetch and bare ky, in one
// process run with the variants interleaved in blocks. Prints a table and writes bench/results.json.
// Never part of `npm test`; no timing here is asserted.
import { execFileSync, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import ky from 'ky';
import OpenAI from 'openai';
import Stripe from 'stripe';
import { decodeRedirectData, PaymentClient, parseWebhook } from '../dist/index.mjs';

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 12);
const CALLS_PER_BLOCK = Number(process.env.BENCH_CALLS ?? 200);
const API_KEY = 'sk_test_bench';
const WEBCODE = 'SHOP1';

/** Starts a bench script in its own process and resolves with the first line it prints. */
async function startChild(script, args = [], nodeOptions = []) {
  const child = spawn(process.execPath, [...nodeOptions, new URL(script, import.meta.url).pathname, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return { child, line };
}
const { child: server, line: baseUrl } = await startChild('./server.mjs');
const prefix = `${baseUrl}/external/v1/test`;
const headers = { 'x-api-key': API_KEY, accept: 'application/json' };
const client = new PaymentClient({ apiKey: API_KEY, webcode: WEBCODE, baseUrl });
const bareKy = ky.create({ retry: 0, headers });
// The peers, pointed at the same server, without retries or telemetry: one exchange per call.
const { port } = new URL(baseUrl);
const stripe = new Stripe('sk_test_bench', { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, telemetry: false });
const openai = new OpenAI({ apiKey: 'sk-bench', baseURL: baseUrl, maxRetries: 0 });
const createParams = { amount: { value: 2599, currency: 'EUR' }, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' };

/** Same exchange as the SDK: request, read, JSON.parse, check the envelope, unwrap `data`. */
async function rawGet(url) {
  const response = await fetch(url, { headers });
  const body = JSON.parse(await response.text());
  if (!response.ok || body.success !== true) throw new Error('bad response');
  return body.data;
}
async function rawPost(url, payload) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ webcode: WEBCODE, ...payload }),
  });
  const body = JSON.parse(await response.text());
  if (!response.ok || body.success !== true) throw new Error('bad response');
  return body.data;
}

const retrieveUrl = `${prefix}/payment/session/SHOP1-EXTT-1700000000?webcode=${WEBCODE}`;
const perCall = {
  retrieve: {
    raw: () => rawGet(retrieveUrl),
    ky: () => bareKy.get(retrieveUrl).json(),
    sdk: () => client.sessions.retrieve('SHOP1-EXTT-1700000000'),
    stripe: () => stripe.customers.retrieve('cus_bench'),
    openai: () => openai.models.retrieve('model-bench'),
  },
  create: {
    raw: () => rawPost(`${prefix}/payment/session`, createParams),
    ky: () =>
      bareKy
        .post(`${prefix}/payment/session`, {
          json: { webcode: WEBCODE, ...createParams },
          headers: { 'idempotency-key': crypto.randomUUID() },
        })
        .json(),
    sdk: () => client.sessions.create(createParams),
  },
};

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
function shuffle(items) {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1));
    [copy[index], copy[other]] = [copy[other], copy[index]];
  }
  return copy;
}

const results = {
  machine: { node: process.version, cpus: (await import('node:os')).cpus().length },
  perCall: {},
  listing: {},
  helpers: {},
  import: {},
};

for (const [operation, variants] of Object.entries(perCall)) {
  for (const run of Object.values(variants)) for (let warm = 0; warm < 200; warm++) await run();
  const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let block = 0; block < BLOCKS; block++) {
    for (const name of shuffle(Object.keys(variants))) {
      for (let call = 0; call < CALLS_PER_BLOCK; call++) {
        const started = performance.now();
        await variants[name]();
        samples[name].push(performance.now() - started);
      }
    }
  }
  const stats = {};
  for (const [name, values] of Object.entries(samples)) {
    values.sort((a, b) => a - b);
    stats[name] = { medianMs: quantile(values, 0.5), p95Ms: quantile(values, 0.95) };
  }
  for (const name of Object.keys(stats)) stats[name].ratioToRaw = stats[name].medianMs / stats.raw.medianMs;
  results.perCall[operation] = stats;
}

// Listing, one page: 100 sessions in one exchange.
const pageUrl = `${prefix}/payment/sessions?webcode=${WEBCODE}&take=100`;
const onePage = { raw: () => rawGet(pageUrl), sdk: () => client.sessions.list({ take: 100 }).firstPage() };
const pageSamples = { raw: [], sdk: [] };
for (const run of Object.values(onePage)) for (let warm = 0; warm < 50; warm++) await run();
for (let block = 0; block < BLOCKS; block++) {
  for (const name of shuffle(Object.keys(onePage))) {
    for (let call = 0; call < 50; call++) {
      const started = performance.now();
      await onePage[name]();
      pageSamples[name].push(performance.now() - started);
    }
  }
}
for (const values of Object.values(pageSamples)) values.sort((a, b) => a - b);
results.listing.page100 = {
  raw: { medianMs: quantile(pageSamples.raw, 0.5), p95Ms: quantile(pageSamples.raw, 0.95) },
  sdk: { medianMs: quantile(pageSamples.sdk, 0.5), p95Ms: quantile(pageSamples.sdk, 0.95) },
};
results.listing.page100.sdk.ratioToRaw = results.listing.page100.sdk.medianMs / results.listing.page100.raw.medianMs;

// Listing: 10 000 sessions over 100 pages.
async function rawWalk() {
  let count = 0;
  let cursor;
  for (;;) {
    const data = await rawGet(`${prefix}/payment/sessions?webcode=${WEBCODE}&take=100${cursor ? `&cursor=${cursor}` : ''}`);
    for (const item of data.payments) count += item.amount.value > 0 ? 1 : 0;
    if (!data.meta.hasMore) return count;
    cursor = data.meta.cursor;
  }
}
async function sdkWalk() {
  let count = 0;
  for await (const item of client.sessions.list({ take: 100 })) count += item.amount.value > 0 ? 1 : 0;
  return count;
}
const walks = { raw: [], sdk: [] };
for (let block = 0; block < 6; block++) {
  for (const name of shuffle(['raw', 'sdk'])) {
    const started = performance.now();
    const count = await (name === 'raw' ? rawWalk() : sdkWalk());
    if (count !== 10_000) throw new Error(`${name} walked ${count} items`);
    walks[name].push(performance.now() - started);
  }
}
for (const values of Object.values(walks)) values.sort((a, b) => a - b);
results.listing.walk10k = { raw: { medianMs: quantile(walks.raw, 0.5) }, sdk: { medianMs: quantile(walks.sdk, 0.5) } };
results.listing.walk10k.sdk.ratioToRaw = results.listing.walk10k.sdk.medianMs / results.listing.walk10k.raw.medianMs;

// Memory: 100 000 items in a fresh process; the paginator holds one page at a time.
// The same walk by hand (raw fetch) tells what the runtime's own RSS does.
results.memory = {
  sdk: JSON.parse((await startChild('./memory.mjs', [baseUrl], ['--expose-gc'])).line),
  raw: JSON.parse((await startChild('./memory.mjs', [baseUrl, 'raw'], ['--expose-gc'])).line),
};

// Sandbox: sessions.create per second, 50 concurrent clients, the sandbox in its own process.
const { child: sandboxProcess, line: sandboxLine } = await startChild('./sandbox-server.mjs');
const sandboxTarget = JSON.parse(sandboxLine);
const sandboxClients = Array.from({ length: 50 }, () => new PaymentClient({ ...sandboxTarget, maxRetries: 0 }));
/** Raw fetch clients: the load generator then costs less than the sandbox it measures. */
const rawCreate = async () => {
  const response = await fetch(`${sandboxTarget.baseUrl}/external/v1/test/payment/session`, {
    method: 'POST',
    headers: { 'x-api-key': sandboxTarget.apiKey, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ webcode: sandboxTarget.webcode, ...createParams }),
  });
  if (response.status !== 201) throw new Error(`sandbox answered ${response.status}`);
  await response.text();
};
async function sandboxLoad(milliseconds, create) {
  let created = 0;
  const end = performance.now() + milliseconds;
  await Promise.all(
    sandboxClients.map(async (sandboxClient) => {
      while (performance.now() < end) {
        await create(sandboxClient);
        created++;
      }
    }),
  );
  return Math.round((created * 1000) / milliseconds);
}
const SANDBOX_MS = Number(process.env.BENCH_SANDBOX_MS ?? 3_000);
const sdkCreate = (sandboxClient) => sandboxClient.sessions.create(createParams);
await sandboxLoad(500, sdkCreate);
results.sandbox = {
  concurrentClients: 50,
  durationMs: SANDBOX_MS,
  createsPerSecondSdkClients: await sandboxLoad(SANDBOX_MS, sdkCreate),
  createsPerSecondRawClients: await sandboxLoad(SANDBOX_MS, rawCreate),
};
sandboxProcess.kill('SIGTERM');

// Helpers: operations per second.
const head = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');
const payload = Buffer.from(JSON.stringify({ paymentReference: 'SHOP1-PXTT-1', amount: 2599, currency: 'EUR' })).toString('base64url');
const token = `${head}.${payload}.${createHmac('sha256', 'secret').update(`${head}.${payload}`).digest('base64url')}`;
const webhook = JSON.stringify({
  event_code: 'AUTHORISATION',
  data: { amount: 2599, currency: 'EUR', paymentReference: 'SHOP1-PXTT-1', paymentStatus: 'AUTHORISED' },
});
async function opsPerSecond(operation, milliseconds = 1_000) {
  for (let warm = 0; warm < 500; warm++) await operation();
  let count = 0;
  const end = performance.now() + milliseconds;
  while (performance.now() < end) {
    await operation();
    count++;
  }
  return Math.round((count * 1000) / milliseconds);
}
results.helpers.decodeRedirectDataPerSecond = await opsPerSecond(() => decodeRedirectData(token, 'secret'));
results.helpers.parseWebhookPerSecond = await opsPerSecond(() => parseWebhook(webhook));

// Cold import of the root entry, minus a bare node start.
function medianStartMs(args) {
  const times = [];
  for (let run = 0; run < 9; run++) {
    const started = performance.now();
    execFileSync(process.execPath, args, { stdio: 'ignore' });
    times.push(performance.now() - started);
  }
  return quantile(
    times.sort((a, b) => a - b),
    0.5,
  );
}
const bare = medianStartMs(['-e', '']);
const withSdk = medianStartMs([
  '--input-type=module',
  '-e',
  `await import(${JSON.stringify(new URL('../dist/index.mjs', import.meta.url).href)})`,
]);
results.import = { bareNodeMs: bare, rootImportMs: withSdk - bare };

// Bundle size: esbuild, minified, gzip, dependencies included, as an app bundler ships it. Ours
// whole (every lazy chunk inlined) and as loaded in stages; the peers whole.
const benchRequire = createRequire(import.meta.url);
async function bundleGzip(contents, splitting = false) {
  const output = await build({
    stdin: { contents, resolveDir: new URL('.', import.meta.url).pathname, loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    splitting,
    ...(splitting ? { outdir: 'out' } : {}),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const sizes = output.outputFiles.map((file) => gzipSync(file.contents).length);
  return { gzipBytes: sizes.reduce((sum, size) => sum + size, 0), files: sizes.length };
}
results.bundle = {
  sdk: await bundleGzip(`export * from ${JSON.stringify(new URL('../dist/index.mjs', import.meta.url).pathname)};`),
  stripe: await bundleGzip(`export { default } from ${JSON.stringify(benchRequire.resolve('stripe'))};`),
  openai: await bundleGzip(`export { default } from ${JSON.stringify(benchRequire.resolve('openai'))};`),
};

server.kill();
writeFileSync(new URL('./results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);

const ms = (value) => `${value.toFixed(3)} ms`;
console.log(`Node ${process.version}, ${results.machine.cpus} cores, ${BLOCKS} blocks x ${CALLS_PER_BLOCK} calls per variant`);
for (const [operation, stats] of Object.entries(results.perCall)) {
  for (const [name, stat] of Object.entries(stats)) {
    console.log(
      `${operation.padEnd(9)} ${name.padEnd(6)} median ${ms(stat.medianMs)}  p95 ${ms(stat.p95Ms)}  ratio ${stat.ratioToRaw.toFixed(2)}`,
    );
  }
}
const { page100, walk10k } = results.listing;
console.log(
  `one 100-item page: raw ${ms(page100.raw.medianMs)}, sdk ${ms(page100.sdk.medianMs)}, ratio ${page100.sdk.ratioToRaw.toFixed(2)}`,
);
console.log(`10 000 items: raw ${ms(walk10k.raw.medianMs)}, sdk ${ms(walk10k.sdk.medianMs)}, ratio ${walk10k.sdk.ratioToRaw.toFixed(2)}`);
for (const [name, memory] of Object.entries(results.memory)) {
  const retained = memory.heapAfterGcEvery10kMB;
  console.log(
    `100 000 items, ${name.padEnd(3)}: heap after GC ${retained[0]} MB at 10 000 -> ${retained.at(-1)} MB at 100 000; RSS ${memory.at10k.rssMB} MB at 10 000, peak ${memory.peak.rssMB} MB`,
  );
}
console.log(
  `sandbox: ${results.sandbox.createsPerSecondSdkClients} sessions.create/s with 50 concurrent SDK clients, ${results.sandbox.createsPerSecondRawClients}/s with 50 raw fetch clients`,
);
console.log(`decodeRedirectData ${results.helpers.decodeRedirectDataPerSecond}/s, parseWebhook ${results.helpers.parseWebhookPerSecond}/s`);
console.log(
  `cold import of the root entry: ${results.import.rootImportMs.toFixed(1)} ms over bare node (${results.import.bareNodeMs.toFixed(1)} ms)`,
);
const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
console.log(
  `bundle, min+gzip with dependencies: sdk ${kB(results.bundle.sdk.gzipBytes)} (all of it; \`npm run size\` shows the load stages), stripe ${kB(results.bundle.stripe.gzipBytes)}, openai ${kB(results.bundle.openai.gzipBytes)}`,
);
