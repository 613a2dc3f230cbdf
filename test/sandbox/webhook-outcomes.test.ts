/**
 * Every payment outcome's webhook is handled, end to end over 127.0.0.1: the sandbox POSTs its
 * AUTHORISATION to a shop running the handler of docs/webhooks.md (`createWebhookHandler` with its
 * `onAuthorisation`), which confirms it through the sandbox's API and answers. A refused payment's
 * webhook is answered 200 once and never redelivered.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { paymentWebhook, type Order as ShopOrder } from '../../examples/shop.ts';
import {
  type AuthorisationEvent,
  createWebhookHandler,
  type PaymentClient,
  type PaymentOutcome,
  parseWebhook,
  WebhookNotConfirmedError,
} from '../../src/index.js';
import { manualClock } from '../../src/sandbox/index.js';
import { sessionParams, useSandboxes } from './support.js';

const { start: sandbox } = useSandboxes();
const shops: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(shops.map((close) => close())));

interface Order {
  id: string;
  totalCents: number;
  currency: string;
  status: 'open' | 'paid' | 'failed';
}

/** A shop on 127.0.0.1 whose webhook endpoint is the handler of docs/webhooks.md, with `orders` as its order store. */
async function startShop(client: PaymentClient, orders: Order[]) {
  const errors: unknown[] = [];
  const confirmed: { outcome: PaymentOutcome; orderId: string }[] = [];
  const findOrder = async (customReference: string | null | undefined) => orders.find((order) => order.id === customReference);
  const mark = (status: Order['status']) => async (orderId: string, _record: unknown) => {
    const order = orders.find((candidate) => candidate.id === orderId);
    if (order) order.status = status;
    confirmed.push({ outcome: status === 'paid' ? 'authorised' : 'refused', orderId });
  };
  const markOrderPaid = mark('paid');
  const markOrderFailed = mark('failed');

  // The onAuthorisation of docs/webhooks.md's Verify a webhook, as written there.
  const webhook = createWebhookHandler({
    onAuthorisation: async (event) => {
      const order = await findOrder(event.data.customReference);
      if (!order) return;
      if (event.data.amount !== order.totalCents || event.data.currency !== order.currency) {
        console.warn(`${event.data.paymentReference}: ${event.data.amount} ${event.data.currency} is not the total of order ${order.id}`);
        return;
      }
      const { outcome, record } = await client.webhooks.confirm(event);
      if (outcome === 'refused') await markOrderFailed(order.id, record);
      else await markOrderPaid(order.id, record);
    },
    onError: (error) => {
      errors.push(error);
    },
  });
  const server = createServer(webhook.node);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  shops.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/payments`, errors, confirmed };
}

describe('the webhook handler of docs/webhooks.md against the sandbox', () => {
  it('answers 200 to a declined POS payment (amount ending in 77), confirmed as refused, and it is never redelivered', async () => {
    const clock = manualClock();
    const ctx = await sandbox({ clock });
    const orders: Order[] = [{ id: 'order-77', totalCents: 1077, currency: 'EUR', status: 'open' }];
    const shop = await startShop(ctx.test, orders);
    ctx.sandbox.webhookUrls = [shop.url];

    const payment = await ctx.test.pos.createPayment({
      poiId: 'V400m-TEST-000001',
      amount: { value: 1077, currency: 'EUR' },
      customReference: 'order-77',
    });
    expect(payment.status).toBe('failed');
    await clock.advance(0);
    await ctx.sandbox.webhooksSettled();

    const [delivery, ...others] = ctx.sandbox.records.deliveries();
    expect(others).toEqual([]);
    expect(delivery?.event).toMatchObject({
      event_code: 'AUTHORISATION',
      data: { paymentReference: payment.posPaymentId, paymentStatus: 'REFUSED', amount: 1077 },
    });
    expect(delivery?.attempts.map((attempt) => attempt.status)).toEqual([200]);
    expect(delivery).toMatchObject({ delivered: true, abandoned: false });
    expect(shop.errors).toEqual([]);
    expect(shop.confirmed).toEqual([{ outcome: 'refused', orderId: 'order-77' }]);
    expect(orders[0]?.status).toBe('failed');

    // Far past every retry the sandbox would make (6 attempts, doubling from 1 s): nothing more.
    await clock.advance(3_600_000);
    await ctx.sandbox.webhooksSettled();
    expect(ctx.sandbox.records.deliveries()).toHaveLength(1);
    expect(ctx.sandbox.records.deliveries()[0]?.attempts).toHaveLength(1);
  });

  it('answers 200 to an authorised POS payment, confirmed as authorised', async () => {
    const ctx = await sandbox({ webhookRetry: { initialDelayMs: 1 } });
    const orders: Order[] = [{ id: 'order-10', totalCents: 1000, currency: 'EUR', status: 'open' }];
    const shop = await startShop(ctx.test, orders);
    ctx.sandbox.webhookUrls = [shop.url];

    await ctx.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' }, customReference: 'order-10' });
    await ctx.sandbox.webhooksSettled();

    expect(ctx.sandbox.records.deliveries().map((delivery) => delivery.attempts.map((attempt) => attempt.status))).toEqual([[200]]);
    expect(shop.confirmed).toEqual([{ outcome: 'authorised', orderId: 'order-10' }]);
    expect(orders[0]?.status).toBe('paid');
  });
});

describe('confirming refusals against the sandbox', () => {
  it('confirms the REFUSED webhook of a POS payment declined at the terminal, and refuses it as an authorisation', async () => {
    const ctx = await sandbox();
    const hook = await startShop(ctx.test, []);
    ctx.sandbox.webhookUrls = [hook.url];
    const payment = await ctx.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 2577, currency: 'EUR' } });
    await ctx.sandbox.webhooksSettled();
    const event = parseWebhook(ctx.sandbox.records.deliveries()[0]?.event) as AuthorisationEvent;

    const confirmed = await ctx.test.webhooks.confirm(event);
    expect(confirmed).toMatchObject({
      kind: 'posPayment',
      outcome: 'refused',
      record: { posPaymentId: payment.posPaymentId, status: 'failed' },
    });

    const forged = { ...event, data: { ...event.data, paymentStatus: 'AUTHORISED' } };
    const error = await ctx.test.webhooks.confirm(forged).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(WebhookNotConfirmedError);
    expect((error as WebhookNotConfirmedError).message).toContain('status is "failed", the webhook says paymentStatus "AUTHORISED"');
  });

  it('confirms a refusal of an online payment by the failed attempt of its session (the sandbox itself sends no webhook for it)', async () => {
    const ctx = await sandbox();
    const hook = await startShop(ctx.test, []);
    ctx.sandbox.webhookUrls = [hook.url];
    const created = await ctx.test.sessions.create(sessionParams);
    const declined = await ctx.sandbox.paySession('test', created.sessionId, { holderName: 'DECLINED' });
    expect(declined.status).toBe('failed');
    expect(ctx.sandbox.records.deliveries()).toEqual([]);

    const session = await ctx.test.sessions.retrieve(created.sessionId);
    const attempt = session.attempts?.[0]?.paymentReference;
    expect(attempt).toMatch(/-PXTT-/);
    const event = parseWebhook({
      event_code: 'AUTHORISATION',
      data: { paymentReference: attempt, paymentStatus: 'REFUSED', amount: 2599, currency: 'EUR', customReference: 'order-42' },
    });
    const confirmed = await ctx.test.webhooks.confirm(event, { sessionId: created.sessionId });
    expect(confirmed).toMatchObject({ kind: 'session', outcome: 'refused', record: { sessionId: created.sessionId, status: 'failed' } });
  });

  it("leaves the example shop's order open when a refusal of its session is confirmed", async () => {
    const ctx = await sandbox();
    const created = await ctx.test.sessions.create({ ...sessionParams, customReference: 'order-9' });
    await ctx.sandbox.paySession('test', created.sessionId, { holderName: 'DECLINED' });
    const attempt = (await ctx.test.sessions.retrieve(created.sessionId)).attempts?.[0]?.paymentReference;
    const order: ShopOrder = {
      id: 'order-9',
      amountCents: 2599,
      currency: 'EUR',
      description: 'Order 9',
      status: 'open',
      sessionId: created.sessionId,
    };
    const webhook = paymentWebhook(ctx.test, new Map([[order.id, order]]));
    const body = {
      event_code: 'AUTHORISATION',
      data: { paymentReference: attempt, paymentStatus: 'REFUSED', amount: 2599, currency: 'EUR', customReference: 'order-9' },
    };

    const answer = await webhook(new Request('http://127.0.0.1/webhooks', { method: 'POST', body: JSON.stringify(body) }));

    expect(answer.status).toBe(200);
    expect(order.status).toBe('open');
    expect(order.paymentReference).toBeUndefined();
  });
});
