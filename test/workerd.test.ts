import { createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';

/**
 * The root entry in a Web-standard runtime: Cloudflare's workerd (through miniflare) runs a worker
 * bundled from the SDK, which calls a sandbox on 127.0.0.1 and uses the helpers.
 */
const WORKER = `
import { PaymentClient, decodeRedirectData, parseWebhook, parseReference, TerminalBusyError } from './src/index.ts';

export default {
  async fetch(request, env) {
    const { baseUrl, apiKey, webcode, token, secret } = await request.json();
    const client = new PaymentClient({ apiKey, webcode, baseUrl, maxRetries: 0 });
    const terminals = await client.terminals.list({ syncFromProvider: true });
    const session = await client.sessions.create({ amount: { value: 1250, currency: 'EUR' }, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' });
    let busy = false;
    try {
      await client.pos.createPayment({ poiId: terminals[0].poiId, amount: { value: 1055, currency: 'EUR' } }, { recover: false });
    } catch (error) {
      busy = error instanceof TerminalBusyError;
    }
    const pages = [];
    for await (const item of client.sessions.list({ take: 1 })) pages.push(item.sessionId);
    const redirect = await decodeRedirectData(token, secret);
    const event = parseWebhook(JSON.stringify({ event_code: 'AUTHORISATION', data: { paymentReference: 'SHOP-PXTT-1', amount: 1250 } }));
    return Response.json({
      terminals: terminals.length,
      sessionId: session.sessionId,
      reference: parseReference(session.sessionId),
      busy,
      listed: pages.length,
      redirect: redirect.paymentReference,
      event: event.event_code,
    });
  },
};
`;

let sandbox: Sandbox;
let miniflare: Miniflare;

beforeAll(async () => {
  sandbox = createSandbox({ posDelayMs: 0 });
  await sandbox.listen();
  const bundle = await esbuild.build({
    stdin: { contents: WORKER, resolveDir: fileURLToPath(new URL('..', import.meta.url)), loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['browser', 'module', 'main'],
    conditions: ['worker', 'browser', 'import'],
    write: false,
    logLevel: 'silent',
  });
  miniflare = new Miniflare({ modules: true, script: bundle.outputFiles[0]?.text ?? '', compatibilityDate: '2026-07-01' });
}, 60_000);

afterAll(async () => {
  await miniflare?.dispose();
  await sandbox?.close();
});

it('runs the client and the helpers in workerd against a sandbox on 127.0.0.1', async () => {
  const head = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');
  const body = Buffer.from('{"paymentReference":"SANDBOX-PXTT-7"}').toString('base64url');
  const signature = createHmac('sha256', 'worker-secret').update(`${head}.${body}`).digest('base64url');
  const response = await miniflare.dispatchFetch('http://worker.local/', {
    method: 'POST',
    body: JSON.stringify({
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.keys.test,
      webcode: sandbox.webcode,
      token: `${head}.${body}.${signature}`,
      secret: 'worker-secret',
    }),
  });
  const result = (await response.json()) as Record<string, unknown>;
  expect(response.status).toBe(200);
  expect(result).toMatchObject({
    terminals: 2,
    reference: { kind: 'session', webcode: 'SANDBOX', environment: 'test' },
    busy: true,
    listed: 1,
    redirect: 'SANDBOX-PXTT-7',
    event: 'AUTHORISATION',
  });
  expect(sandbox.records.sessions().map((session) => session.sessionId)).toContain(result.sessionId);
}, 30_000);
