/**
 * The framework examples of examples/webhooks/ (Express, Fastify, Hono), each served over real HTTP
 * on 127.0.0.1 with a store, receiving the sandbox's webhooks: every AUTHORISATION is sent twice at
 * once, and the callback runs once per payment; every delivery is acknowledged. And the test script
 * of docs/webhooks.md, run as written against the built package.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, describe, expect, it } from 'vitest';
import { expressApp } from '../examples/webhooks/express.ts';
import { fastifyApp } from '../examples/webhooks/fastify.ts';
import { honoApp } from '../examples/webhooks/hono.ts';
import { createShopWebhook } from '../examples/webhooks/webhook.ts';
// @ts-expect-error: a plain .mjs script without declarations
import { codeBlocks } from '../scripts/check-docs-code.mjs';
import { memoryWebhookStore, PaymentClient, type WebhookHandler } from '../src/index.js';
import { createSandbox } from '../src/sandbox/index.js';
import { posTestAmount, TEST_TERMINALS } from '../src/testing/index.js';
import { buildOnce, ROOT } from './sandbox/cli-process.js';

const closing: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

function closeServer(server: Server): Promise<void> {
  return new Promise((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });
}

/** Each framework's app on a free port of 127.0.0.1: its base URL. */
const frameworks: Record<string, (webhook: WebhookHandler) => Promise<string>> = {
  express: async (webhook) => {
    const server = expressApp(webhook).listen(0, '127.0.0.1');
    await new Promise((listening) => server.once('listening', listening));
    closing.push(() => closeServer(server));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  },
  fastify: async (webhook) => {
    const app = fastifyApp(webhook);
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    closing.push(() => app.close());
    return url;
  },
  hono: async (webhook) => {
    const server = serve({ fetch: honoApp(webhook).fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    await new Promise((listening) => server.once('listening', listening));
    closing.push(() => closeServer(server));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  },
};

describe('examples/webhooks/: a webhook delivered twice at once runs the callback once', () => {
  for (const [name, start] of Object.entries(frameworks)) {
    it(name, async () => {
      const sandbox = createSandbox({ posDelayMs: 0, webhookRetry: { initialDelayMs: 50 } });
      closing.push(() => sandbox.close());
      const { baseUrl } = await sandbox.listen();
      const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, maxRetries: 0 });
      const fulfilled: string[] = [];
      const url = await start(
        createShopWebhook({
          client,
          store: memoryWebhookStore(),
          fulfil: (orderId) => {
            fulfilled.push(orderId);
          },
        }),
      );
      sandbox.webhookUrls.push(`${url}/webhooks`);
      sandbox.faults.add({ event: 'AUTHORISATION', effect: { type: 'duplicate', copies: 2 } });

      const session = await client.sessions.create({
        amount: { value: 2_500, currency: 'EUR' },
        urlOk: 'https://shop.example/ok',
        urlKo: 'https://shop.example/ko',
        customReference: 'order-online',
      });
      await sandbox.paySession('test', session.sessionId);
      const poiId = TEST_TERMINALS[0].poiId;
      await client.pos.createPayment({
        poiId,
        amount: { value: posTestAmount('success'), currency: 'EUR' },
        customReference: 'order-till',
      });
      await client.pos.createPayment({
        poiId,
        amount: { value: posTestAmount('failed'), currency: 'EUR' },
        customReference: 'order-declined',
      });
      for (let round = 0; round < 50 && sandbox.records.deliveries({ status: 'pending' }).length > 0; round++) {
        await sandbox.webhooksSettled();
        await sandbox.advanceClock(1_000);
      }

      expect(fulfilled.sort()).toEqual(['order-online', 'order-till']);
      const deliveries = sandbox.records.deliveries();
      expect(deliveries).toHaveLength(6);
      expect(deliveries.map((delivery) => delivery.delivered)).toEqual(Array(6).fill(true));
      const bodies = deliveries.map((delivery) => JSON.parse(delivery.attempts.at(-1)?.responseBody ?? '{}') as { duplicate?: boolean });
      expect(bodies.filter((body) => body.duplicate)).toHaveLength(3);
    });
  }
});

describe('docs/webhooks.md', () => {
  it('its sandbox test script runs as written and prints what its comments say', { timeout: 60_000 }, async () => {
    buildOnce();
    const blocks = (codeBlocks as (markdown: string) => { code: string }[])(readFileSync(`${ROOT}/docs/webhooks.md`, 'utf8'));
    const script = blocks.find((block) => block.code.includes('copies: 3'))?.code ?? '';
    const shown = script.split('\n').flatMap((line) => /^console\.log\(.*\); \/\/ (.*)$/.exec(line)?.[1] ?? []);
    expect(shown).toEqual(['1', '3']);
    // In the repository, so that `payment-service-sdk` is the built package, as for a reader.
    const file = `${ROOT}/.webhooks-doc-${process.pid}.ts`;
    writeFileSync(file, script);
    try {
      const child = spawn(process.execPath, [file], { cwd: ROOT, timeout: 50_000 });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const code = await new Promise((done) => child.on('close', done));
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout.trimEnd().split('\n')).toEqual(shown);
    } finally {
      rmSync(file, { force: true });
    }
  });
});
