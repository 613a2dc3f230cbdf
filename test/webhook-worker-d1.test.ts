/**
 * examples/webhooks/cloudflare-worker.ts in Cloudflare's workerd (through miniflare), with a real
 * D1 database: the same AUTHORISATION posted five times at once runs the callback once (it logs
 * once; one plain 200, the others 409 in progress or 200 duplicate), and the event ends done in D1. The worker
 * confirms the event against a sandbox on 127.0.0.1.
 */
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { D1_SCHEMA } from '../examples/webhooks/d1-webhook-store.ts';
import { PaymentClient } from '../src/index.js';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';

let sandbox: Sandbox;
let miniflare: Miniflare;

beforeAll(async () => {
  sandbox = createSandbox({ posDelayMs: 0 });
  const { baseUrl } = await sandbox.listen();
  const root = fileURLToPath(new URL('..', import.meta.url));
  const bundle = await esbuild.build({
    entryPoints: [`${root}examples/webhooks/cloudflare-worker.ts`],
    alias: { 'payment-service-sdk': `${root}src/index.ts` },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['browser', 'module', 'main'],
    conditions: ['worker', 'browser', 'import'],
    write: false,
    logLevel: 'silent',
  });
  miniflare = new Miniflare({
    modules: true,
    script: bundle.outputFiles[0]?.text ?? '',
    compatibilityDate: '2026-07-01',
    d1Databases: ['DB'],
    bindings: { PAYMENT_SERVICE_API_KEY: sandbox.keys.test, PAYMENT_SERVICE_WEBCODE: sandbox.webcode, PAYMENT_SERVICE_BASE_URL: baseUrl },
  });
  await (await miniflare.getD1Database('DB')).exec(D1_SCHEMA);
}, 60_000);

afterAll(async () => {
  await miniflare?.dispose();
  await sandbox?.close();
});

it('runs the callback once for five concurrent deliveries, with the D1 store', { timeout: 30_000 }, async () => {
  const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl: sandbox.baseUrl, maxRetries: 0 });
  const created = await client.sessions.create({
    amount: { value: 4_200, currency: 'EUR' },
    urlOk: 'https://shop.example/ok',
    urlKo: 'https://shop.example/ko',
    customReference: 'order-d1',
  });
  await sandbox.paySession('test', created.sessionId);
  const { paymentReference } = await client.sessions.retrieve(created.sessionId);
  const event = JSON.stringify({
    event_code: 'AUTHORISATION',
    data: { amount: 4_200, currency: 'EUR', paymentReference, paymentStatus: 'AUTHORISED', customReference: 'order-d1' },
  });
  const deliver = async () => {
    const response = await miniflare.dispatchFetch('http://worker.local/webhooks', { method: 'POST', body: event });
    return { status: response.status, body: (await response.json()) as { received: boolean; duplicate?: boolean } };
  };

  // The worker's callback logs `ship <order>`; miniflare hands the worker's console to this process's.
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  const answers = await Promise.all(Array.from({ length: 5 }, deliver));
  expect(answers.filter((answer) => answer.status === 200 && !answer.body.duplicate)).toHaveLength(1);
  expect(answers.filter((answer) => answer.status !== 200).map((answer) => answer.status)).toEqual(
    answers.filter((answer) => answer.status !== 200).map(() => 409),
  );
  // Later redeliveries are duplicates, answered without running anything.
  expect(await deliver()).toEqual({ status: 200, body: { received: true, duplicate: true } });
  const db = await miniflare.getD1Database('DB');
  const rows = await db.prepare('SELECT key, done FROM webhook_events').all();
  expect(rows.results).toEqual([{ key: `AUTHORISATION:${paymentReference}:AUTHORISED`, done: 1 }]);
  expect(log.mock.calls.filter(([line]) => String(line).includes('ship order-d1'))).toHaveLength(1);
  log.mockRestore();
});
