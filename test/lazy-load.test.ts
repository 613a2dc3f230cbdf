import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

// Importing the built package must not load ky, p-retry, uuid, jose or zod's schema compiler (nor
// Node's fetch with ky): they load on first use. `npm test` builds dist/ first.
const script = `
import { registerHooks } from 'node:module';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
const packages = () => [...new Set(loaded.flatMap((url) => /node_modules\\/(ky|p-retry|uuid|jose|zod)\\/|dist\\/(schema-compiler)\\.mjs$/.exec(url)?.slice(1).filter(Boolean) ?? []))].sort();
const sdk = await import(${JSON.stringify(new URL('../dist/index.mjs', import.meta.url).href)});
const afterImport = packages();
sdk.parseWebhook({ event_code: 'AUTHORISATION', data: { paymentReference: 'SHOP1-PXTT-1' } });
const afterWebhook = packages();
const client = new sdk.PaymentClient({
  apiKey: 'sk_test_lazy', webcode: 'SHOP1', baseUrl: 'http://127.0.0.1:9', maxRetries: 0,
  fetch: async () => new Response(JSON.stringify({ success: true, data: { sessionId: 'SHOP1-EXTT-1', paymentUrl: 'http://127.0.0.1/p', status: 'pending', amount: { value: 100, currency: 'EUR' } } })),
});
const session = await client.sessions.create({ amount: { value: 100, currency: 'EUR' }, urlOk: 'https://a.example/ok', urlKo: 'https://a.example/ko' });
console.log(JSON.stringify({ afterImport, afterWebhook, afterRequest: packages(), sessionId: session.sessionId }));
`;

it('loads ky, p-retry, uuid and the schema compiler on the first request, not on import', async () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
  const result = JSON.parse(stdout) as Record<string, unknown>;
  expect(result).toEqual({
    afterImport: [],
    afterWebhook: [],
    afterRequest: ['ky', 'p-retry', 'schema-compiler', 'uuid'],
    sessionId: 'SHOP1-EXTT-1',
  });
}, 20_000);
