import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';

/**
 * The build for runtimes that forbid code generation (dist/worker/, the root entry's `workerd`,
 * `edge-light`, `worker` and `browser` conditions), as an app's Worker bundles it from the package:
 * `payment-service-sdk` resolved through package.json's `exports` (not tsconfig's paths to src/),
 * with no schema compiler and no `new Function` in the bundle, run in workerd (miniflare). Responses
 * are checked by zod's runtime parser: valid data handed back as it came (unknown fields kept),
 * invalid data refused with the issues worded as in Node. `npm test` builds dist/ first.
 */
const WORKER = `
import { PaymentClient, ResponseValidationError } from 'payment-service-sdk';

const record = { sessionId: 'SHOP1-EXTT-1700000000', status: 'pending', amount: { value: 1050, currency: 'EUR' }, createdAt: '2026-01-01 10:00:00', extra: { kept: true } };

export default {
  async fetch(request) {
    const { baseUrl, apiKey, webcode } = await request.json();
    const statuses = [];
    const client = new PaymentClient({ apiKey, webcode, baseUrl, maxRetries: 0, hooks: { afterResponse: (_request, response) => void statuses.push(response.status) } });
    const session = await client.sessions.create({ amount: { value: 1250, currency: 'EUR' }, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' });
    const terminals = await client.terminals.list({ syncFromProvider: true });
    const answering = (data) => new PaymentClient({ apiKey, webcode: 'SHOP1', baseUrl: 'https://pay.example', maxRetries: 0, fetch: async () => Response.json({ success: true, data }) });
    const valid = await answering(record).sessions.retrieve(record.sessionId);
    let issues;
    try {
      await answering({ ...record, amount: { value: 10.5, currency: 'EUR' } }).sessions.retrieve(record.sessionId);
    } catch (error) {
      issues = error instanceof ResponseValidationError ? error.issues : String(error);
    }
    return Response.json({ sessionId: session.sessionId, terminals: terminals.length, statuses, valid, issues });
  },
};
`;

const root = fileURLToPath(new URL('..', import.meta.url));
let sandbox: Sandbox;
let miniflare: Miniflare;
let bundle: esbuild.BuildResult<{ metafile: true; write: false }>;

beforeAll(async () => {
  sandbox = createSandbox({ posDelayMs: 0 });
  await sandbox.listen();
  bundle = await esbuild.build({
    stdin: { contents: WORKER, resolveDir: root, loader: 'js' },
    absWorkingDir: root,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    tsconfigRaw: {},
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  miniflare = new Miniflare({ modules: true, script: bundle.outputFiles[0]?.text ?? '', compatibilityDate: '2026-07-01' });
}, 60_000);

afterAll(async () => {
  await miniflare?.dispose();
  await sandbox?.close();
});

it('bundles dist/worker/ for the workerd condition, without the schema compiler, new Function, ky, p-retry or uuid', () => {
  const inputs = Object.keys(bundle.metafile.inputs);
  expect(inputs).toContain('dist/worker/index.mjs');
  expect(
    inputs.filter((input) =>
      /^dist\/(?!worker\/)|schema-compiler|zod\/v4\/core\/compile\.js$|node_modules\/(ky|p-retry|is-network-error|uuid)\//.test(input),
    ),
  ).toEqual([]);
  expect(bundle.outputFiles[0]?.text).not.toMatch(/new Function|\bFunction\(/);
});

it('runs in workerd: calls with hooks (run without ky), hands back valid data as it came and words invalid data', async () => {
  const response = await miniflare.dispatchFetch('http://worker.local/', {
    method: 'POST',
    body: JSON.stringify({ baseUrl: sandbox.baseUrl, apiKey: sandbox.keys.test, webcode: sandbox.webcode }),
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  const result = JSON.parse(text) as Record<string, unknown>;
  expect(response.status).toBe(200);
  expect(result).toMatchObject({
    terminals: 2,
    statuses: [201, 200],
    valid: {
      sessionId: 'SHOP1-EXTT-1700000000',
      status: 'pending',
      amount: { value: 1050, currency: 'EUR' },
      createdAt: '2026-01-01 10:00:00',
      extra: { kept: true },
    },
    issues: [{ path: 'data.amount.value', message: 'must be an integer' }],
  });
  expect(sandbox.records.sessions().map((session) => session.sessionId)).toContain(result.sessionId);
}, 30_000);
