import { execFile } from 'node:child_process';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp as createExpressApp, type Order as ExpressOrder } from '../examples/express-server.ts';
import { createApp as createHonoApp, type Order as HonoOrder, toNodeHandler } from '../examples/hono-app.ts';
import { createWebhookRoute, memoryStore, POST, store } from '../examples/nextjs-route.ts';
import { chargeAtTerminal, resumeCharge } from '../examples/pos-recovery.ts';
import { CSV_COLUMNS, csvField, reconcile } from '../examples/reconciliation.ts';
import { tour } from '../examples/usage.ts';
import { PaymentClient } from '../src/index.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/index.js';
import { payTestSession, posTestAmount, TEST_CARDS, TEST_SUCCESS_CARDHOLDER, TEST_TERMINALS } from '../src/testing/index.js';

// Each example, driven over real HTTP on 127.0.0.1 against its own sandbox.

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function startSandbox(options: SandboxOptions = {}): Promise<{ sandbox: Sandbox; client: PaymentClient }> {
  const sandbox = createSandbox({ posDelayMs: 0, ...options });
  cleanup.push(() => sandbox.close());
  const { baseUrl } = await sandbox.listen();
  return { sandbox, client: new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, maxRetries: 0 }) };
}

/** A server on 127.0.0.1, listening before its app exists (the sandbox needs its URL for webhooks). */
async function startServer(): Promise<{ server: Server; url: string; serve(listener: RequestListener): void }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, url, serve: (listener) => server.on('request', listener) };
}

/** Pays on the hosted page as the customer's browser would; returns where the page sends the customer. */
async function pay(paymentUrl: string, holderName: string = TEST_SUCCESS_CARDHOLDER): Promise<string> {
  const { redirectUrl } = await payTestSession(paymentUrl, { holderName, card: TEST_CARDS.visa });
  expect(redirectUrl).toBeDefined();
  return redirectUrl ?? '';
}

/** Waits for the sandbox's webhook deliveries, then for `check`. */
async function eventually(sandbox: Sandbox, check: () => boolean): Promise<void> {
  for (let tries = 0; tries < 100 && !check(); tries++) {
    await sandbox.webhooksSettled();
    if (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(check()).toBe(true);
}

const checkout = (url: string, orderId: string) =>
  fetch(`${url}/checkout`, { method: 'POST', body: new URLSearchParams({ orderId }), redirect: 'manual' });

/** The Express and the Hono example build the same shop: one suite for both. */
const shops = [
  {
    name: 'examples/express-server.ts',
    serve: (options: { client: PaymentClient; clientSecret: string; orders: Map<string, ExpressOrder> }) => createExpressApp(options),
  },
  {
    name: 'examples/hono-app.ts',
    serve: (options: { client: PaymentClient; clientSecret: string; orders: Map<string, HonoOrder> }) =>
      toNodeHandler(createHonoApp(options)),
  },
];

for (const shop of shops) {
  describe(shop.name, () => {
    let url: string;
    let sandbox: Sandbox;
    const orders = new Map<string, ExpressOrder & HonoOrder>();
    const order = (id: string, amountCents: number, description = `Order ${id}`) => {
      orders.set(id, { id, amountCents, currency: 'EUR', description, status: 'open' });
      return orders.get(id)!;
    };
    beforeAll(async () => {
      // The shops log paid orders and refused tokens.
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      cleanup.push(async () => {
        log.mockRestore();
        warn.mockRestore();
      });
      const server = await startServer();
      url = server.url;
      const started = await startSandbox({ webhookUrls: [`${url}/webhooks`] });
      sandbox = started.sandbox;
      server.serve(shop.serve({ client: started.client, clientSecret: sandbox.clientSecrets.test, orders }));
    });

    it('checks out, verifies the urlOk redirect and marks the order paid from the confirmed webhook', async () => {
      const paidOrder = order('order-7', 3150, 'Two coffees, one "large"');
      const answer = await checkout(url, 'order-7');
      expect(answer.status).toBe(303);
      const paymentUrl = answer.headers.get('location') ?? '';
      expect(paymentUrl).toMatch(/\/pay-external-test\/\w+$/);
      const session = sandbox.records.sessions().find((candidate) => candidate.sessionId === paidOrder.sessionId);
      expect(session).toMatchObject({
        amount: { value: 3150, currency: 'EUR' },
        customReference: 'order-7',
        urlOk: `${url}/paid?order=order-7`,
        urlKo: `${url}/failed?order=order-7`,
      });

      const back = await pay(paymentUrl);
      expect(back.startsWith(`${url}/paid?order=order-7&data=`)).toBe(true);
      const paid = await fetch(back);
      expect(paid.status).toBe(200);
      expect(await paid.text()).toMatch(/^paid: .*payment \S+-PXTT-\d+ received for order-7$/);

      await eventually(sandbox, () => paidOrder.status === 'paid');
      expect(paidOrder.paymentReference).toBe(sandbox.records.session(paidOrder.sessionId ?? '')?.paymentReference);
      await sandbox.webhooksSettled(); // the order is paid before the answer reaches the sandbox
      const deliveries = sandbox.records.deliveries().filter((delivery) => delivery.event.data.customReference === 'order-7');
      expect(deliveries.map((delivery) => [delivery.url, delivery.attempts.map((attempt) => attempt.status)])).toEqual([
        [`${url}/webhooks`, [200]],
      ]);
      // A paid order cannot be checked out again.
      expect((await checkout(url, 'order-7')).status).toBe(404);
    });

    it('sends a declined customer to urlKo and leaves the order open for another try', async () => {
      const openOrder = order('order-8', 990);
      const back = await pay((await checkout(url, 'order-8')).headers.get('location') ?? '', 'DECLINED');
      expect(back).toBe(`${url}/failed?order=order-8`);
      const failed = await fetch(back);
      expect(failed.status).toBe(200);
      expect(await failed.text()).toMatch(/^not paid/);
      expect(openOrder.status).toBe('open');

      // A second checkout makes a new session, which the customer pays.
      const retry = await checkout(url, 'order-8');
      expect(retry.status).toBe(303);
      expect((await fetch(await pay(retry.headers.get('location') ?? ''))).status).toBe(200);
      await eventually(sandbox, () => openOrder.status === 'paid');
    });

    it('refuses a forged or another order’s redirect with 400', async () => {
      order('order-9', 500);
      order('order-10', 700);
      const back = await pay((await checkout(url, 'order-9')).headers.get('location') ?? '');
      const token = new URL(back).searchParams.get('data') ?? '';
      const forged = await fetch(`${url}/paid?order=order-9&data=${token.slice(0, -4)}AAAA`);
      expect(forged.status).toBe(400);
      const missing = await fetch(`${url}/paid?order=order-9`);
      expect(missing.status).toBe(400);
      const otherOrder = await fetch(`${url}/paid?order=order-10&data=${token}`);
      expect(otherOrder.status).toBe(400);
      expect((await fetch(`${url}/paid?order=nope&data=${token}`)).status).toBe(404);
      expect((await checkout(url, 'nope')).status).toBe(404);
    });

    it('does not mark an order paid from a webhook the API does not confirm', async () => {
      const openOrder = order('order-11', 1200);
      await checkout(url, 'order-11'); // a session exists, but nobody paid it
      const post = (body: string) => fetch(`${url}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const forged = await post(
        JSON.stringify({
          event_code: 'AUTHORISATION',
          data: { amount: 1200, currency: 'EUR', paymentReference: `${sandbox.webcode}-PXTT-999999`, customReference: 'order-11' },
        }),
      );
      expect(forged.status).toBe(200); // acknowledged: redelivering a mismatch would not change it
      expect(openOrder.status).toBe('open');
      expect((await post('{"event_code":')).status).toBe(400);
      expect((await fetch(`${url}/webhooks`)).status).toBe(404); // only POST is routed
    });
  });
}

describe('examples/nextjs-route.ts', () => {
  let sandbox: Sandbox;
  let client: PaymentClient;
  const request = (body: string, method = 'POST') =>
    new Request('http://localhost:3000/api/webhooks', method === 'POST' ? { method, body } : { method });

  beforeAll(async () => {
    ({ sandbox, client } = await startSandbox({ modificationResolveMs: 0 }));
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  async function paidEvent(customReference: string) {
    const session = await client.sessions.create({
      amount: { value: 4200, currency: 'EUR' },
      urlOk: 'https://shop.example/paid',
      urlKo: 'https://shop.example/failed',
      customReference,
    });
    await pay(session.paymentUrl);
    const paid = await client.sessions.retrieve(session.sessionId);
    return {
      event_code: 'AUTHORISATION',
      data: { amount: 4200, currency: 'EUR', paymentReference: paid.paymentReference, customReference, paymentStatus: 'AUTHORISED' },
    };
  }

  it('the exported POST confirms and stores an AUTHORISATION (200), once per redelivery, and answers 400 to a malformed body', async () => {
    // As in a deployment: the route's client comes from the environment.
    vi.stubEnv('PAYMENT_SERVICE_API_KEY', sandbox.keys.test);
    vi.stubEnv('PAYMENT_SERVICE_WEBCODE', sandbox.webcode);
    vi.stubEnv('PAYMENT_SERVICE_BASE_URL', sandbox.baseUrl);
    vi.stubEnv('PAYMENT_SERVICE_ENVIRONMENT', 'test');
    const event = await paidEvent('order-42');
    const ok = await POST(request(JSON.stringify(event)));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ received: true });
    expect((await POST(request(JSON.stringify(event)))).status).toBe(200);
    expect([...store.events.keys()]).toEqual([`AUTHORISATION:${event.data.paymentReference}`]);

    const malformed = await POST(request('{"event_code":'));
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ received: false, error: expect.stringContaining('not valid JSON') });
    expect((await POST(request('', 'GET'))).status).toBe(405);

    // A refund goes through the same confirmation.
    const refund = await client.modifications.refund({
      paymentReference: event.data.paymentReference ?? '',
      amount: { value: 200, currency: 'EUR' },
      reason: 'Cold',
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const refundEvent = {
      event_code: 'REFUND',
      data: { amount: 200, currency: 'EUR', paymentReference: event.data.paymentReference, refundReference: refund.refundReference },
    };
    expect((await POST(request(JSON.stringify(refundEvent)))).status).toBe(200);
    expect(store.events.has(`REFUND:${refund.refundReference}`)).toBe(true);
  });

  it('drops an event the API contradicts, and answers 500 when the store fails so that the service redelivers', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const saved = memoryStore();
      const route = createWebhookRoute({ client: () => client, store: saved });
      const event = await paidEvent('order-43');
      const inflated = { ...event, data: { ...event.data, amount: 9900 } };
      expect((await route(request(JSON.stringify(inflated)))).status).toBe(200);
      expect(saved.events.size).toBe(0);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('not confirmed (mismatch)'));

      const failing = createWebhookRoute({
        client: () => client,
        store: {
          save() {
            throw new Error('database down');
          },
        },
      });
      expect((await failing(request(JSON.stringify(event)))).status).toBe(500);
      expect(error).toHaveBeenCalledWith('webhook AUTHORISATION failed:', expect.any(Error));
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
  });
});

describe('examples/pos-recovery.ts', () => {
  it('reports each terminal outcome, recovers a timeout with one charge, and resumes a saved pending state', async () => {
    const { sandbox, client } = await startSandbox({ posTimeoutResolveMs: 50 });
    const lines: string[] = [];
    const recover = { initialDelayMs: 10, pollIntervalMs: 10, maxWaitMs: 5_000 };
    const log = (line: string) => lines.push(line);
    const [online, , offline] = TEST_TERMINALS;
    const charge = (amountCents: number, reference: string, poiId: string = online.poiId) =>
      chargeAtTerminal(client, { poiId, amountCents, reference }, { recover, log });

    expect(await charge(posTestAmount('success'), 'till-1')).toMatchObject({ kind: 'paid', recovered: false });
    expect(await charge(posTestAmount('failed'), 'till-2')).toMatchObject({ kind: 'declined', message: expect.any(String) });
    expect(await charge(posTestAmount('busy'), 'till-3')).toEqual({ kind: 'busy' });
    expect(await charge(1_000, 'till-4', offline.poiId)).toEqual({ kind: 'offline' });
    const timeout = await charge(posTestAmount('timeout'), 'till-5');
    expect(timeout).toMatchObject({ kind: 'paid', recovered: true });
    expect(sandbox.records.posPayments().filter((payment) => payment.customReference === 'till-5')).toHaveLength(1);
    expect(lines).toEqual([
      expect.stringMatching(/^till-1: 10\.00 EUR paid, \S+-POSXT-\d+$/),
      expect.stringMatching(/^till-2: 10\.77 EUR declined by the terminal/),
      expect.stringMatching(/^till-3: terminal V400m-TEST-000001 is busy/),
      expect.stringMatching(/^till-4: terminal P400Plus-TEST-000003 is offline/),
      expect.stringMatching(/^till-5: 10\.99 EUR paid, \S+ \(recovered after a timeout, charged once\)$/),
    ]);

    // Giving up at once leaves the outcome unknown: the state is saved, then resumed. The late
    // completion is held back (moved to by the sandbox clock), so no machine load can make it early.
    const held = await startSandbox({ posTimeoutResolveMs: 600_000 });
    const saved = new Map<string, string>();
    const pending = await chargeAtTerminal(
      held.client,
      { poiId: online.poiId, amountCents: posTestAmount('timeout', 2_000), reference: 'till-6' },
      { recover: { ...recover, maxWaitMs: 0 }, log, saveState: (reference, json) => saved.set(reference, json) },
    );
    expect(pending.kind).toBe('pending');
    const state = JSON.parse(saved.get('till-6') ?? '{}');
    expect(state).toMatchObject({ params: { poiId: online.poiId, customReference: 'till-6' }, idempotencyKey: expect.any(String) });
    expect(lines.at(-1)).toContain('client.pos.resumeRecovery({"idempotencyKey"');
    expect(held.sandbox.records.posPayments({ status: 'timeout' })).toHaveLength(1);
    await held.sandbox.advanceClock(600_000);
    const resumed = await resumeCharge(held.client, saved.get('till-6') ?? '', { recover: { pollIntervalMs: 10, maxWaitMs: 5_000 }, log });
    expect(resumed).toMatchObject({ kind: 'paid', recovered: true });
    expect(held.sandbox.records.posPayments().filter((payment) => payment.customReference === 'till-6')).toHaveLength(1);
  });
});

/** Reads RFC 4180 CSV (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      index++;
    } else field += char;
  }
  expect(field).toBe('');
  expect(row).toEqual([]);
  return rows;
}

describe('examples/reconciliation.ts', () => {
  it('pages through sessions and modifications into CSV, quoted where needed', async () => {
    const { sandbox, client } = await startSandbox({ modificationResolveMs: 0 });
    const descriptions = ['Two coffees, one "large"', 'Tea\nwith milk', '=HYPERLINK("http://evil.example")'];
    for (const [index, description] of descriptions.entries()) {
      const session = await client.sessions.create({
        amount: { value: 900 + index, currency: 'EUR' },
        urlOk: 'https://shop.example/paid',
        urlKo: 'https://shop.example/failed',
        description,
      });
      await pay(session.paymentUrl);
    }
    const declined = await client.sessions.create({
      amount: { value: 100, currency: 'EUR' },
      urlOk: 'https://shop.example/paid',
      urlKo: 'https://shop.example/failed',
      description: 'never paid',
    });
    await pay(declined.paymentUrl, 'DECLINED');
    const [first] = sandbox.records.sessions();
    const refund = await client.modifications.refund({
      paymentReference: first?.paymentReference ?? '',
      amount: { value: 300, currency: 'EUR' },
      reason: 'cold, "sorry"',
    });
    await new Promise((resolve) => setTimeout(resolve, 20));

    const csv = await reconcile(client);
    expect(csv.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = parseCsv(csv);
    expect(header).toEqual([...CSV_COLUMNS]);
    expect(rows.every((row) => row.length === CSV_COLUMNS.length)).toBe(true);
    const payments = rows.filter((row) => row[0] === 'payment');
    expect(payments.map((row) => row.slice(1, 6))).toEqual(
      sandbox.records
        .sessions()
        .filter((session) => session.status === 'completed')
        .map((session) => [session.sessionId, session.paymentReference, String(session.amount.value), 'EUR', 'AUTHORISED']),
    );
    expect(payments.map((row) => row[7])).toEqual(['Two coffees, one "large"', 'Tea\nwith milk', `'=HYPERLINK("http://evil.example")`]);
    expect(payments.every((row) => /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(row[6] ?? ''))).toBe(true);
    expect(rows.filter((row) => row[0] === 'refund')).toEqual([
      ['refund', refund.refundReference, first?.paymentReference, '300', 'EUR', 'success', expect.any(String), 'cold, "sorry"'],
    ]);
    expect(rows).toHaveLength(4);
    expect(csv).toContain('"Two coffees, one ""large"""');
    expect(csv).toContain('"cold, ""sorry"""');

    // Dates: the sandbox writes UTC record timestamps.
    expect(await reconcile(client, { from: new Date(Date.now() + 60_000) })).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
    expect(await reconcile(client, { from: new Date(Date.now() - 60_000), to: new Date(Date.now() + 60_000) })).toBe(csv);
  });

  it('quotes a CSV field only when it must', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\r\nlines')).toBe('"two\r\nlines"');
    expect(csvField('-1+1')).toBe("'-1+1");
    expect(csvField(-250)).toBe('-250');
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
  });
});

describe('examples/usage.ts', () => {
  // `npm run example examples/usage.ts` is a build, then this (a build here would race other tests' dist/).
  it('runs as a script, against a sandbox of its own', async () => {
    const environment = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PAYMENT_SERVICE_')));
    const { stdout } = await promisify(execFile)(process.execPath, ['examples/usage.ts'], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      env: environment,
      timeout: 60_000,
    });
    expect(stdout).toContain('send the customer to http://127.0.0.1:');
    expect(stdout).toMatch(/^refund SANDBOX-RFXT-\d+ 202 refund-SANDBOX-POSXT-/m);
    expect(stdout).toMatch(/^1 sessions$/m);
  }, 90_000);

  it('tours every namespace against a sandbox', async () => {
    const { sandbox, client } = await startSandbox({ modificationResolveMs: 0 });
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      await tour(client);
    } finally {
      log.mockRestore();
    }
    expect(sandbox.records.sessions()).toHaveLength(1);
    expect(sandbox.records.modifications().map((modification) => modification.operationType)).toEqual(['refund']);
    expect(sandbox.records.idempotency({ environment: 'test' }).map((entry) => entry.key)).toContain(
      `refund-${sandbox.records.posPayments()[0]?.posPaymentId}`,
    );
  });
});
