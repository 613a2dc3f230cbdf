// The one test body of the Jest consumer projects (scripts/consumers/jest-*), copied into each by
// scripts/check-package.mjs. Each project loads the package its own way (`require`, ts-jest,
// babel-jest, native ESM) and hands the modules in; this file uses Jest's globals only, so that it
// runs unchanged under every one of them. Everything it starts is closed in `afterAll`: Jest must
// exit on its own.
const { createServer } = require('node:http');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const TIMEOUT_MS = 20_000;

/** Resolves once `predicate()` is true; bounded by `ms`. */
async function until(predicate, what, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * @param {{ sdk: any, sandboxModule: any, testing: any, sqlite: any }} modules the root
 * (`payment-service-sdk`) and the `/sandbox`, `/testing` and `/stores/sqlite` subpaths
 */
function paymentsSuite({ sdk, sandboxModule, testing, sqlite }) {
  const { PaymentClient, PermissionDeniedError, RedirectDataError, createWebhookHandler, decodeRedirectData } = sdk;
  let dir;
  let store;
  let handler;
  let shop;
  let sandbox;
  let baseUrl;
  let client;
  /** AUTHORISATION events whose callback ran, with the store's key. */
  const authorised = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'jest-consumer-'));
    store = sqlite.sqliteWebhookStore({ path: join(dir, 'webhooks.db') });
    handler = createWebhookHandler({
      store,
      onAuthorisation: async (event, _request, { key }) => {
        authorised.push({ key, event });
      },
    });
    shop = createServer((req, res) => void handler.node(req, res));
    await new Promise((resolve) => shop.listen(0, '127.0.0.1', resolve));
    sandbox = sandboxModule.createSandbox({
      posDelayMs: 5,
      posTimeoutResolveMs: 200,
      webhookUrls: [`http://127.0.0.1:${shop.address().port}/webhooks`],
    });
    ({ baseUrl } = await sandbox.listen({ port: 0, host: '127.0.0.1' }));
    client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, environment: 'test' });
  }, TIMEOUT_MS);

  afterAll(async () => {
    await sandbox?.close();
    await new Promise((resolve) => (shop ? shop.close(resolve) : resolve()));
    store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const session = (cents, extra = {}) => ({
    amount: { value: cents, currency: 'EUR' },
    urlOk: 'https://shop.example/ok',
    urlKo: 'https://shop.example/ko',
    ...extra,
  });

  test(
    'a client call retries a 503 and succeeds (through ky, with hooks)',
    async () => {
      const rule = sandbox.faults.add({ route: 'POST /payment/session', times: 1, effect: { type: 'error', status: 503, when: 'before' } });
      const retries = [];
      const statuses = [];
      const hooked = new PaymentClient({
        apiKey: sandbox.keys.test,
        webcode: sandbox.webcode,
        baseUrl,
        environment: 'test',
        hooks: {
          onRetry: ({ attempt, error }) => void retries.push(`${attempt} ${error.name}`),
          afterResponse: (_request, response) => void statuses.push(response.status),
        },
      });
      const created = await hooked.sessions.create(session(1_000));
      expect(created.sessionId).toMatch(new RegExp(`^${sandbox.webcode}-`));
      expect(retries).toEqual(['1 ServerError']);
      expect(statuses).toEqual([503, 201]);
      expect(sandbox.faults.list().find((listed) => listed.id === rule.id).injected).toBe(1);
      sandbox.faults.remove(rule.id);
    },
    TIMEOUT_MS,
  );

  test(
    'pos.createPayment recovers a terminal timeout without a second charge',
    async () => {
      const poiId = testing.TEST_TERMINALS[0].poiId;
      const customReference = `jest-pos-${Date.now()}`;
      const amount = { value: testing.posTestAmount('timeout', 1_500), currency: 'EUR' };
      expect(amount.value % 100).toBe(99);
      const payment = await client.pos.createPayment(
        { poiId, amount, customReference },
        { recover: { initialDelayMs: 50, pollIntervalMs: 50, maxWaitMs: 10_000 } },
      );
      expect(payment.status).toBe('success');
      expect(payment.recovered).toBe(true);
      const charges = [];
      for await (const listed of client.pos.list({ take: 100 })) if (listed.customReference === customReference) charges.push(listed);
      expect(charges.map((listed) => listed.posPaymentId)).toEqual([payment.posPaymentId]);
    },
    TIMEOUT_MS,
  );

  test(
    'pagination: for await walks every page of a listing',
    async () => {
      const tag = `jest-page-${Date.now()}`;
      const made = [];
      for (let index = 0; index < 5; index++)
        made.push((await client.sessions.create(session(2_000 + index, { customReference: `${tag}-${index}` }))).sessionId);
      const seen = [];
      for await (const listed of client.sessions.list({ take: 2 }))
        if (listed.customReference?.startsWith(tag)) seen.push(listed.sessionId);
      expect(seen.sort()).toEqual([...made].sort());
      let pages = 0;
      for await (const page of client.sessions.list({ take: 2 }).pages()) {
        pages += 1;
        expect(page.items.length).toBeLessThanOrEqual(2);
      }
      expect(pages).toBeGreaterThanOrEqual(3);
    },
    TIMEOUT_MS,
  );

  test(
    'a paid session: decodeRedirectData, and the AUTHORISATION webhook handled once with the SQLite store',
    async () => {
      const created = await client.sessions.create(session(4_990, { customReference: `jest-order-${Date.now()}` }));
      await fetch(created.paymentUrl);
      const card = testing.TEST_CARDS.visa;
      const paid = await fetch(created.paymentUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          cardNumber: card.number,
          expiryMonth: card.expiryMonth,
          expiryYear: card.expiryYear,
          cvc: card.cvc,
          holderName: testing.TEST_SUCCESS_CARDHOLDER,
          action: 'pay',
        }),
        redirect: 'manual',
      });
      expect(paid.status).toBe(303);
      const token = new URL(paid.headers.get('location')).searchParams.get('data');
      const data = await decodeRedirectData(token, sandbox.clientSecrets.test);
      expect(data.amount).toBe(4_990);
      const reference = data.paymentReference;
      await expect(decodeRedirectData(token, 'cs_test_not-the-secret')).rejects.toBeInstanceOf(RedirectDataError);

      await until(
        () => authorised.some(({ event }) => event.data.paymentReference === reference),
        `the AUTHORISATION webhook of ${reference}`,
      );
      const [{ key, event }] = authorised.filter((each) => each.event.data.paymentReference === reference);
      expect(key).toBe(`AUTHORISATION:${reference}:${event.data.paymentStatus}`);
      // The same event delivered again: the store knows it is done, the callback does not run again.
      const again = await handler(
        new Request('http://127.0.0.1/webhooks', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(event),
        }),
      );
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ received: true, duplicate: true });
      expect(authorised.filter((each) => each.event.data.paymentReference === reference)).toHaveLength(1);
      expect(await store.claim(key, 60_000)).toEqual({ status: 'done' });
    },
    TIMEOUT_MS,
  );

  test(
    'the tenants helper of payment-service-sdk/testing',
    async () => {
      const tenant = await testing.sandboxTenant({ baseUrl, controlKey: sandbox.keys.test, name: 'jest worker' });
      expect(tenant.client).toBeInstanceOf(PaymentClient);
      const made = await tenant.client.sessions.create(session(1_234));
      expect(made.sessionId.startsWith(`${tenant.webcode}-`)).toBe(true);
      const ownListing = await client.sessions.list({ take: 100 }).toArray({ max: 1_000 });
      expect(ownListing.some((listed) => listed.sessionId === made.sessionId)).toBe(false);
      await tenant.remove();
      await expect(tenant.client.sessions.retrieve(made.sessionId)).rejects.toBeInstanceOf(PermissionDeniedError);
    },
    TIMEOUT_MS,
  );
}

module.exports = { paymentsSuite };
