// CommonJS consumer of the packed package, run by scripts/check-package.mjs from a clean install.
const assert = require('node:assert/strict');
const { decodeRedirectData, PaymentClient, RedirectDataError, TerminalBusyError, VERSION } = require('payment-service-sdk');
const { createSandbox } = require('payment-service-sdk/sandbox');
const { sqliteWebhookStore } = require('payment-service-sdk/stores/sqlite');
const { postgresWebhookStore } = require('payment-service-sdk/stores/postgres');
const { redisWebhookStore } = require('payment-service-sdk/stores/redis');
const { pgBossFollowUpQueue } = require('payment-service-sdk/queues/pg-boss');
const { posTestAmount, TEST_TERMINALS } = require('payment-service-sdk/testing');

const b64url = (bytes) => Buffer.from(bytes).toString('base64url');

/** An HS256 JWT made with WebCrypto, so the consumer needs no JOSE library of its own. */
async function hs256(payload, secret) {
  const signingInput = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(payload))}`;
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return `${signingInput}.${b64url(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(signingInput)))}`;
}

async function main() {
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

    const token = await hs256({ paymentReference: 'PAY-1', amount: 1_500, currency: 'EUR' }, sandbox.clientSecrets.test);
    const data = await decodeRedirectData(token, sandbox.clientSecrets.test);
    assert.equal(data.paymentReference, 'PAY-1');
    await assert.rejects(
      decodeRedirectData(token, 'another-secret'),
      (error) => error instanceof RedirectDataError && error.reason === 'signature',
    );

    // The store subpaths load without pg or redis installed (optional peers).
    assert.equal(typeof postgresWebhookStore, 'function');
    assert.equal(typeof redisWebhookStore, 'function');
    const store = sqliteWebhookStore({ path: ':memory:' });
    const claim = await store.claim('REFUND:RF-1:success', 60_000);
    assert.equal(claim.status, 'claimed');
    assert.equal((await store.claim('REFUND:RF-1:success', 60_000)).status, 'busy');
    store.close();
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
    const { bullMqFollowUpQueue } = require('payment-service-sdk/queues/bullmq');
    const bullQueue = bullMqFollowUpQueue({ host: '127.0.0.1', port: 1 });
    await assert.rejects(
      bullQueue.schedule({ id: 'session:x#0', target: { sessionId: 'x' }, check: 0, trackedAt: Date.now() }, 0),
      (error) => error.name === 'ConfigurationError' && error.message.includes('npm install bullmq@^6'),
    );
    // The testcontainers subpath needs its optional peer, which this app lacks: loading it names it.
    assert.throws(
      () => require('payment-service-sdk/testcontainers'),
      (error) => error.code === 'MODULE_NOT_FOUND' && error.message.includes("'testcontainers'"),
    );

    console.log(JSON.stringify({ consumer: 'cjs', terminals: terminals.length, pos: payment.status }));
  } finally {
    await sandbox.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
