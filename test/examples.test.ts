import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp as createExpressApp, type Order } from '../examples/express-server.ts';
import { createApp as createHonoApp } from '../examples/hono-app.ts';
import { POST, received } from '../examples/nextjs-route.ts';
import { chargeAtTerminal } from '../examples/pos-recovery.ts';
import { reconcile } from '../examples/reconciliation.ts';
import { connect, type Setup } from '../examples/setup.ts';
import { tour } from '../examples/usage.ts';
import type { WebhookEvent } from '../src/index.js';
import { posTestAmount, TEST_CARDS, TEST_SUCCESS_CARDHOLDER } from '../src/testing/index.js';

// Each example, run over real HTTP on 127.0.0.1 against its own sandbox.

const opened: { close(): unknown }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0)) await item.close();
});

async function sandboxed(options: Parameters<typeof connect>[0] = {}): Promise<Setup> {
  const setup = await connect(options);
  opened.push({ close: () => setup.close() });
  return setup;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  opened.push({ close: () => new Promise((resolve) => server.close(resolve)) });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Pays on the hosted page as the customer's browser would; returns where it sends the customer. */
async function pay(paymentUrl: string, holderName = TEST_SUCCESS_CARDHOLDER): Promise<string> {
  const card = TEST_CARDS.visa;
  const form = {
    cardNumber: card.number,
    expiryMonth: card.expiryMonth,
    expiryYear: card.expiryYear,
    cvc: card.cvc,
    holderName,
    action: 'pay',
  };
  const response = await fetch(paymentUrl, { method: 'POST', body: new URLSearchParams(form) });
  return (response.headers.get('refresh') ?? '').replace(/^\d+;\s*url=/i, '');
}

async function eventually(check: () => boolean): Promise<void> {
  for (let tries = 0; tries < 100 && !check(); tries++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(check()).toBe(true);
}

describe('examples/express-server.ts', () => {
  it('checks out, confirms the redirect and marks the order paid from the webhook', async () => {
    const setup = await sandboxed();
    const orders = new Map<string, Order>();
    let url = '';
    const app = createExpressApp({ client: setup.client, clientSecret: setup.clientSecret, publicUrl: () => url, orders });
    const { createServer } = await import('node:http');
    url = await listen(createServer(app));
    setup.sandbox?.webhookUrls.push(`${url}/webhooks`);

    const checkout = await fetch(`${url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: 'order-7', cents: 3150 }),
      redirect: 'manual',
    });
    expect(checkout.status).toBe(303);
    const back = await pay(checkout.headers.get('location') ?? '');
    const paid = await fetch(back);
    expect(paid.status).toBe(200);
    expect(await paid.text()).toMatch(/Payment \S+-PXTT-\d+ received for order-7/);
    await eventually(() => orders.get('order-7')?.status === 'paid');

    const second = await fetch(`${url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"orderId":"order-8"}',
      redirect: 'manual',
    });
    const declined = await fetch(await pay(second.headers.get('location') ?? '', 'DECLINED'));
    expect(await declined.text()).toContain('not completed');
    expect(orders.get('order-8')?.status).toBe('failed');
    const forged = await fetch(`${url}/paid?order=order-7&data=abc.def.ghi`);
    expect(forged.status).toBe(400);
  });
});

describe('examples/hono-app.ts', () => {
  it('serves checkout, the redirect and the confirmed webhook through Hono', async () => {
    const setup = await sandboxed();
    const events: WebhookEvent[] = [];
    let url = '';
    const app = createHonoApp({ client: setup.client, clientSecret: setup.clientSecret, publicUrl: () => url, events });
    const { createServer } = await import('node:http');
    url = await listen(
      createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const init: RequestInit = { method: req.method ?? 'GET', headers: req.headers as HeadersInit };
        if (req.method !== 'GET') init.body = Buffer.concat(chunks);
        const response = await app.fetch(new Request(new URL(req.url ?? '/', url), init));
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      }),
    );
    setup.sandbox?.webhookUrls.push(`${url}/webhooks`);
    const checkout = (await (await fetch(`${url}/checkout`, { method: 'POST', body: '{"cents":1200,"orderId":"hono-1"}' })).json()) as {
      paymentUrl: string;
    };
    const paid = await fetch(await pay(checkout.paymentUrl));
    expect(await paid.text()).toMatch(/^paid \S+-PXTT-\d+$/);
    await eventually(() => events.some((event) => event.event_code === 'AUTHORISATION'));
  });
});

describe('examples/nextjs-route.ts', () => {
  it('answers 200 for an event and 400 for a malformed body', async () => {
    const body = {
      event_code: 'REFUND',
      data: { amount: 500, currency: 'EUR', paymentReference: 'SHOP1-PXTT-1', refundReference: 'SHOP1-RFXT-2', status: 'success' },
    };
    const ok = await POST(new Request('http://localhost/api/webhooks', { method: 'POST', body: JSON.stringify(body) }));
    expect(ok.status).toBe(200);
    expect(received.at(-1)?.data.refundReference).toBe('SHOP1-RFXT-2');
    const bad = await POST(new Request('http://localhost/api/webhooks', { method: 'POST', body: '{"event_code":' }));
    expect(bad.status).toBe(400);
  });
});

describe('examples/pos-recovery.ts', () => {
  it('reports each terminal outcome, recovering a timeout without a second charge', async () => {
    const setup = await sandboxed({ posTimeoutResolveMs: 50 });
    const fast = { initialDelayMs: 10, pollIntervalMs: 10, maxWaitMs: 5_000 };
    const charge = (cents: number, poiId = 'V400m-TEST-000001') =>
      chargeAtTerminal(setup.client, { poiId, amountCents: cents, reference: `r${cents}` }, fast);
    expect(await charge(posTestAmount('success'))).toMatchObject({ kind: 'paid', recovered: false });
    expect(await charge(posTestAmount('failed'))).toMatchObject({ kind: 'declined' });
    expect(await charge(posTestAmount('busy'))).toEqual({ kind: 'busy' });
    expect(await charge(1_000, 'P400Plus-TEST-000003')).toEqual({ kind: 'offline' });
    expect(await charge(posTestAmount('timeout'))).toMatchObject({ kind: 'paid', recovered: true });
    expect(setup.sandbox?.state.posPayments.filter((payment) => payment.amount.value === posTestAmount('timeout'))).toHaveLength(1);
    const pending = await chargeAtTerminal(
      setup.client,
      { poiId: 'V400m-TEST-000001', amountCents: 2_099, reference: 'slow' },
      { ...fast, maxWaitMs: 0 },
    );
    expect(pending).toMatchObject({ kind: 'pending', state: { params: { poiId: 'V400m-TEST-000001' } } });
  });
});

describe('examples/reconciliation.ts', () => {
  it('writes one CSV row per paid session and per modification, quoted where needed', async () => {
    const setup = await sandboxed({ modificationResolveMs: 0 });
    for (const description of ['Two coffees, one "large"', 'Plain tea']) {
      const session = await setup.client.sessions.create({
        amount: { value: 900, currency: 'EUR' },
        urlOk: 'https://s.example/ok',
        urlKo: 'https://s.example/ko',
        description,
      });
      await pay(session.paymentUrl);
    }
    const [first] = setup.sandbox?.state.sessions ?? [];
    await setup.client.modifications.refund({
      paymentReference: first?.paymentReference ?? '',
      amount: { value: 300, currency: 'EUR' },
      reason: 'cold,\nsorry',
    });
    const csv = await reconcile(setup.client);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe('type,reference,paymentReference,amount,currency,status,date,note');
    expect(csv).toContain('"Two coffees, one ""large"""');
    expect(csv).toContain('"cold,\nsorry"');
    expect(lines.filter((line) => line.startsWith('payment,'))).toHaveLength(2);
    expect(lines.filter((line) => line.startsWith('refund,'))).toHaveLength(1);
    expect(csv).toMatch(/refund,\S+-RFXT-\d+,\S+-PXTT-\d+,300,EUR,/);
  });
});

describe('examples/usage.ts', () => {
  it('tours every namespace against a sandbox', async () => {
    const setup = await sandboxed({ modificationResolveMs: 0 });
    const log = console.log;
    console.log = () => {};
    try {
      await tour(setup.client);
    } finally {
      console.log = log;
    }
    expect(setup.sandbox?.state.sessions).toHaveLength(1);
    expect(setup.sandbox?.state.modifications.map((modification) => modification.operationType)).toEqual(['refund']);
    expect(Object.keys(setup.sandbox?.state.idempotency.test ?? {})).toContain(
      `refund-${setup.sandbox?.state.posPayments[0]?.posPaymentId}`,
    );
  });
});
