// ESM consumer of the packed package, run by scripts/check-package.mjs from a clean install.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  decodeRedirectData,
  memoryWebhookStore,
  PaymentClient,
  parseReference,
  RedirectDataError,
  TerminalBusyError,
  VERSION,
} from 'payment-service-sdk';
import openapi from 'payment-service-sdk/openapi.json' with { type: 'json' };
import { pgBossFollowUpQueue } from 'payment-service-sdk/queues/pg-boss';
import { createSandbox } from 'payment-service-sdk/sandbox';
import { postgresWebhookStore } from 'payment-service-sdk/stores/postgres';
import { redisWebhookStore } from 'payment-service-sdk/stores/redis';
import { sqliteWebhookStore } from 'payment-service-sdk/stores/sqlite';
import { posTestAmount, TEST_TERMINALS } from 'payment-service-sdk/testing';

const b64url = (bytes) => Buffer.from(bytes).toString('base64url');

/** An HS256 JWT made with WebCrypto, so the consumer needs no JOSE library of its own. */
async function hs256(payload, secret) {
  const signingInput = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(payload))}`;
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return `${signingInput}.${b64url(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(signingInput)))}`;
}

assert.match(VERSION, /^\d+\.\d+\.\d+/);
const sandbox = createSandbox({ posDelayMs: 0 });
const { baseUrl } = await sandbox.listen({ port: 0, host: '127.0.0.1' });
try {
  const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, environment: 'test', maxRetries: 0 });
  const terminals = await client.terminals.list({ syncFromProvider: true });
  assert.ok(terminals.length > 0, 'terminals.list returned no terminal');
  const poiId = terminals[0]?.poiId ?? TEST_TERMINALS[0].poiId;

  const payment = await client.pos.createPayment({ poiId, amount: { value: posTestAmount('success', 1_500), currency: 'EUR' } });
  assert.equal(payment.status, 'success');
  await assert.rejects(
    client.pos.createPayment({ poiId, amount: { value: posTestAmount('busy', 1_500), currency: 'EUR' } }),
    TerminalBusyError,
  );

  // jose is loaded with a dynamic import: exercise it, both ways.
  const token = await hs256({ paymentReference: 'PAY-1', amount: 1_500, currency: 'EUR' }, sandbox.clientSecrets.test);
  const data = await decodeRedirectData(token, sandbox.clientSecrets.test);
  assert.equal(data.paymentReference, 'PAY-1');
  await assert.rejects(
    decodeRedirectData(token, 'another-secret'),
    (error) => error instanceof RedirectDataError && error.reason === 'signature',
  );
  assert.equal(typeof parseReference, 'function');

  // The store subpaths load without pg or redis installed (optional peers): the app hands its own client in.
  assert.equal(typeof postgresWebhookStore, 'function');
  assert.equal(typeof redisWebhookStore, 'function');
  const dir = mkdtempSync(join(tmpdir(), 'consumer-store-'));
  try {
    const store = sqliteWebhookStore({ path: join(dir, 'webhooks.db') });
    for (const each of [store, memoryWebhookStore()]) {
      const claim = await each.claim('AUTHORISATION:PAY-1:AUTHORISED', 60_000);
      assert.equal(claim.status, 'claimed');
      await each.complete('AUTHORISATION:PAY-1:AUTHORISED', claim.token);
      assert.deepEqual(await each.claim('AUTHORISATION:PAY-1:AUTHORISED', 60_000), { status: 'done' });
    }
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // The contract in the package is the one the sandbox serves, but for the server.
  assert.equal(openapi.openapi, '3.1.0');
  const served = await (await fetch(`${baseUrl}/openapi.json`)).json();
  assert.deepEqual({ ...served, servers: openapi.servers }, openapi);

  // The pg-boss queue's subpath loads without pg-boss (the app hands its boss in)...
  const sent = [];
  const boss = {
    createQueue: async () => {},
    send: async (_name, _data, { id }) => {
      sent.push(id);
      return id;
    },
    work: async () => 'w',
    offWork: async () => {},
  };
  await pgBossFollowUpQueue(boss).schedule({ id: 'session:S-1#0', target: { sessionId: 'S-1' }, check: 0, trackedAt: 0 }, 0);
  assert.match(sent[0], /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  // ...and BullMQ's needs its optional peer, which this app lacks: the subpath loads, and its first
  // use says which package to install.
  const { bullMqFollowUpQueue } = await import('payment-service-sdk/queues/bullmq');
  const bullQueue = bullMqFollowUpQueue({ host: '127.0.0.1', port: 1 });
  await assert.rejects(
    bullQueue.schedule({ id: 'session:x#0', target: { sessionId: 'x' }, check: 0, trackedAt: Date.now() }, 0),
    (error) => error.name === 'ConfigurationError' && error.message.includes('npm install bullmq@^6'),
  );
  // The testcontainers subpath needs its optional peer, which this app lacks: loading it names it.
  await assert.rejects(
    import('payment-service-sdk/testcontainers'),
    (error) => error.code === 'ERR_MODULE_NOT_FOUND' && error.message.includes("'testcontainers'"),
  );

  console.log(JSON.stringify({ consumer: 'esm', terminals: terminals.length, pos: payment.status }));
} finally {
  await sandbox.close();
}
