import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

// Importing the built package must not load ky, p-retry, uuid, jose, zod's schema compiler, the
// network chunk (which holds the OpenTelemetry glue) or the optional @opentelemetry/api (installed
// here as a devDependency): they load on first use, and ky only for a client with
// beforeRequest/afterResponse hooks, which it runs. Nor does anything load pg or redis (optional
// peers too, used only by the store subpaths, which take the app's client). `npm test` builds dist/ first.
const script = `
import { registerHooks } from 'node:module';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
const packages = () => [...new Set(loaded.flatMap((url) => /node_modules\\/(ky|p-retry|uuid|jose|zod|@opentelemetry\\/api|pg|redis|@redis\\/client)\\/|dist\\/(schema-compiler)\\.mjs$|dist\\/(network)-\\w+\\.mjs$/.exec(url)?.slice(1).filter(Boolean) ?? []))].sort();
const sdk = await import(${JSON.stringify(new URL('../dist/index.mjs', import.meta.url).href)});
const afterImport = packages();
sdk.parseWebhook({ event_code: 'AUTHORISATION', data: { paymentReference: 'SHOP1-PXTT-1' } });
const afterWebhook = packages();
const options = {
  apiKey: 'sk_test_lazy', webcode: 'SHOP1', baseUrl: 'http://127.0.0.1:9', maxRetries: 0,
  fetch: async () => new Response(JSON.stringify({ success: true, data: { sessionId: 'SHOP1-EXTT-1', paymentUrl: 'http://127.0.0.1/p', status: 'pending', amount: { value: 100, currency: 'EUR' } } })),
};
const params = { amount: { value: 100, currency: 'EUR' }, urlOk: 'https://a.example/ok', urlKo: 'https://a.example/ko' };
const session = await new sdk.PaymentClient(options).sessions.create(params);
const afterRequest = packages();
const statuses = [];
const hooked = await new sdk.PaymentClient({ ...options, hooks: { afterResponse: (_request, response) => { statuses.push(response.status); } } }).sessions.create(params);
console.log(JSON.stringify({ afterImport, afterWebhook, afterRequest, afterHookedRequest: packages(), sessionIds: [session.sessionId, hooked.sessionId], statuses }));
`;

it('loads p-retry, uuid, the schema compiler and @opentelemetry/api on the first request, and ky on the first request with hooks', async () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
  const result = JSON.parse(stdout) as Record<string, unknown>;
  expect(result).toEqual({
    afterImport: [],
    afterWebhook: [],
    afterRequest: ['@opentelemetry/api', 'network', 'p-retry', 'schema-compiler', 'uuid'],
    afterHookedRequest: ['@opentelemetry/api', 'ky', 'network', 'p-retry', 'schema-compiler', 'uuid'],
    sessionIds: ['SHOP1-EXTT-1', 'SHOP1-EXTT-1'],
    statuses: [200],
  });
}, 20_000);

// `testcontainers` (an optional peer, a devDependency here) is for the testcontainers subpath only:
// importing or requiring any other entry point, ESM or CJS, loads none of it.
it('loads testcontainers only from payment-service-sdk/testcontainers', async () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const entries = ['index', 'testing', 'sandbox', 'stores/sqlite', 'stores/postgres', 'stores/redis', 'queues/pg-boss', 'queues/bullmq'];
  const check = `
import { registerHooks, createRequire } from 'node:module';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
const fromTestcontainers = () => loaded.filter((url) => /node_modules\\/(testcontainers|dockerode|docker-modem)\\//.test(url)).length;
const require = createRequire(${JSON.stringify(`${root}/`)});
const result = {};
for (const entry of ${JSON.stringify(entries)}) {
  await import(${JSON.stringify(`${new URL('../dist/', import.meta.url).href}`)} + entry + '.mjs');
  require('./dist/' + entry + '.cjs');
  result[entry] = fromTestcontainers();
}
await import(${JSON.stringify(new URL('../dist/testcontainers.mjs', import.meta.url).href)});
result.testcontainers = fromTestcontainers() > 0;
console.log(JSON.stringify(result));
`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', check], { cwd: root });
  expect(JSON.parse(stdout)).toEqual({ ...Object.fromEntries(entries.map((entry) => [entry, 0])), testcontainers: true });
}, 20_000);

// `pg-boss` and `bullmq` (optional peers, devDependencies here) are for the follow-up queues only:
// no entry point loads either when imported, ESM or CJS; queues/pg-boss never does (it takes the
// app's boss), and queues/bullmq imports bullmq on the queue's first use (so that importing it
// without bullmq installed works, and the first use says what to install: test/optional-peers.test.ts).
it('loads pg-boss and bullmq only from payment-service-sdk/queues/*, bullmq on first use', async () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const entries = [
    'index',
    'testing',
    'sandbox',
    'stores/sqlite',
    'stores/postgres',
    'stores/redis',
    'testcontainers',
    'queues/pg-boss',
    'queues/bullmq',
  ];
  const check = `
import { registerHooks, createRequire } from 'node:module';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
const from = (name) => loaded.filter((url) => url.includes('/node_modules/' + name + '/')).length;
const require = createRequire(${JSON.stringify(`${root}/`)});
const result = {};
for (const entry of ${JSON.stringify(entries)}) {
  await import(${JSON.stringify(`${new URL('../dist/', import.meta.url).href}`)} + entry + '.mjs');
  require('./dist/' + entry + '.cjs');
  result[entry] = [from('pg-boss'), from('bullmq')];
}
const { bullMqFollowUpQueue } = await import(${JSON.stringify(new URL('../dist/queues/bullmq.mjs', import.meta.url).href)});
bullMqFollowUpQueue({ host: '127.0.0.1', port: 1 }); // made, not used: nothing loaded, nothing connected
result.made = [from('pg-boss'), from('bullmq')];
console.log(JSON.stringify(result));
`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', check], { cwd: root });
  expect(JSON.parse(stdout)).toEqual({ ...Object.fromEntries(entries.map((entry) => [entry, [0, 0]])), made: [0, 0] });
}, 30_000);
