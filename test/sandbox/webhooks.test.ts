/**
 * Webhooks of the sandbox, end to end over 127.0.0.1: `{ event_code, data }` POSTed to every
 * configured URL, retried with backoff against a receiver that fails first, with the delivery log
 * in `sandbox.records.deliveries()`; the events of online payments, POS payments and refunds.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { WebhookDelivery } from '../../src/sandbox/index.js';
import { manualClock } from '../../src/sandbox/index.js';
import { paidSession, sessionParams, submitForm, useSandboxes } from './support.js';

const START = Date.UTC(2026, 0, 1);
const EUR = (value: number) => ({ value, currency: 'EUR' as const });

const { start: sandbox, receiver } = useSandboxes();

const statuses = (delivery: WebhookDelivery | undefined) => delivery?.attempts.map((attempt) => attempt.status);

describe('webhook deliveries', () => {
  it('retries a receiver that fails first, with doubling backoff on the clock, and logs every attempt', async () => {
    const hook = await receiver({ failFirst: 2 });
    const clock = manualClock();
    const ctx = await sandbox({ clock, webhookUrls: [hook.url] });
    const step = async (ms: number) => {
      await clock.advance(ms);
      await ctx.sandbox.webhooksSettled();
    };

    const paid = await paidSession(ctx.test);
    const log = () => ctx.sandbox.records.deliveries();
    expect(log()).toHaveLength(1);
    expect(log()[0]).toMatchObject({ url: hook.url, environment: 'test', delivered: false, event: { event_code: 'AUTHORISATION' } });

    await step(0);
    expect(statuses(log()[0])).toEqual([500]);
    expect(log()[0]?.delivered).toBe(false);
    await step(999);
    expect(statuses(log()[0])).toEqual([500]);
    await step(1);
    expect(statuses(log()[0])).toEqual([500, 500]);
    await step(1_999);
    expect(statuses(log()[0])).toEqual([500, 500]);
    await step(1);
    expect(statuses(log()[0])).toEqual([500, 500, 200]);
    expect(log()[0]).toMatchObject({ delivered: true, abandoned: false });
    expect(log()[0]?.attempts.map((attempt) => attempt.at - START)).toEqual([0, 1_000, 3_000]);
    // Delivered: no more attempts.
    await step(600_000);
    expect(hook.received).toHaveLength(3);

    // Every attempt carried the same event, as JSON, by POST.
    const bodies = hook.received.map((item) => item.json);
    expect(bodies[0]).toEqual(bodies[1]);
    expect(bodies[1]).toEqual(bodies[2]);
    expect(hook.received[0]?.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(bodies[0]).sort()).toEqual(['data', 'event_code']);
    expect(bodies[0]).toEqual({
      event_code: 'AUTHORISATION',
      data: expect.objectContaining({
        amount: 2599,
        currency: 'EUR',
        paymentReference: paid.paymentReference,
        paymentStatus: 'AUTHORISED',
        description: 'Order 42',
        customReference: 'order-42',
        paymentSource: 'external_api',
      }),
    });
    // The SDK confirms the delivery against the sandbox's API.
    const confirmed = await ctx.test.webhooks.confirm(bodies[2], { sessionId: paid.sessionId });
    expect(confirmed).toMatchObject({ kind: 'session', record: { sessionId: paid.sessionId, status: 'completed' } });
  });

  it('retries on the real clock with a short initialDelayMs', async () => {
    const hook = await receiver({ failFirst: 1 });
    const ctx = await sandbox({ webhookUrls: [hook.url], webhookRetry: { initialDelayMs: 10 } });
    await paidSession(ctx.test);
    const [accepted] = await hook.waitFor(1);
    expect(hook.received.map((item) => item.status)).toEqual([500, 200]);
    expect(accepted?.json.event_code).toBe('AUTHORISATION');
    await ctx.sandbox.webhooksSettled();
    expect(ctx.sandbox.records.deliveries()[0]).toMatchObject({ delivered: true });
    expect(statuses(ctx.sandbox.records.deliveries()[0])).toEqual([500, 200]);
  });

  it('delivers to each configured URL, with a log per URL', async () => {
    const first = await receiver();
    const second = await receiver({ failFirst: 1, failStatus: 503 });
    const clock = manualClock();
    const ctx = await sandbox({ clock, webhookUrls: [first.url, second.url] });
    await paidSession(ctx.test);
    await clock.advance(0);
    await ctx.sandbox.webhooksSettled();
    await clock.advance(1_000);
    await ctx.sandbox.webhooksSettled();
    const log = ctx.sandbox.records.deliveries();
    expect(log.map((delivery) => delivery.url)).toEqual([first.url, second.url]);
    expect(statuses(log[0])).toEqual([200]);
    expect(statuses(log[1])).toEqual([503, 200]);
    expect(log.every((delivery) => delivery.delivered)).toBe(true);
    expect(first.accepted()[0]?.json).toEqual(second.accepted()[0]?.json);

    // URLs can be changed at runtime.
    const third = await receiver();
    ctx.sandbox.webhookUrls = [third.url];
    await ctx.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1000) });
    await clock.advance(0);
    await ctx.sandbox.webhooksSettled();
    expect(third.accepted()).toHaveLength(1);
    expect(first.received).toHaveLength(1);
  });

  it('gives up after the configured attempts and marks the delivery abandoned', async () => {
    const hook = await receiver({ failFirst: 1_000 });
    const clock = manualClock();
    const ctx = await sandbox({ clock, webhookUrls: [hook.url], webhookRetry: { attempts: 3, initialDelayMs: 100 } });
    await paidSession(ctx.test);
    for (const ms of [0, 100, 200, 400, 800, 60_000]) {
      await clock.advance(ms);
      await ctx.sandbox.webhooksSettled();
    }
    const [delivery] = ctx.sandbox.records.deliveries();
    expect(statuses(delivery)).toEqual([500, 500, 500]);
    expect(delivery).toMatchObject({ delivered: false, abandoned: true });
    expect(hook.received).toHaveLength(3);
  });

  it('logs a network failure as an error and retries it', async () => {
    const gone = await receiver();
    await gone.close();
    const clock = manualClock();
    const ctx = await sandbox({ clock, webhookUrls: [gone.url] });
    await paidSession(ctx.test);
    await clock.advance(0);
    await ctx.sandbox.webhooksSettled();
    await clock.advance(1_000);
    await ctx.sandbox.webhooksSettled();
    const [delivery] = ctx.sandbox.records.deliveries();
    expect(delivery?.attempts).toHaveLength(2);
    for (const attempt of delivery?.attempts ?? []) {
      expect(attempt.status).toBeNull();
      expect(attempt.error).toEqual(expect.any(String));
    }
    expect(delivery).toMatchObject({ delivered: false, abandoned: false });
  });

  it('never follows a redirect of a receiver: the 3xx is a failed attempt and the other address gets nothing', async () => {
    const elsewhere = await receiver();
    const redirecting = createServer((request, response) => {
      request.resume();
      response.writeHead(307, { location: elsewhere.url }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = redirecting.address() as AddressInfo;
      const ctx = await sandbox({ webhookUrls: [`http://127.0.0.1:${port}/hook`], webhookRetry: { attempts: 2, initialDelayMs: 10 } });
      await paidSession(ctx.test);
      await waitUntil(() => ctx.sandbox.records.deliveries()[0]?.abandoned === true);
      expect(statuses(ctx.sandbox.records.deliveries()[0])).toEqual([307, 307]);
      expect(elsewhere.received).toHaveLength(0);
    } finally {
      await new Promise((resolve) => redirecting.close(resolve));
    }
  });

  it('sends nothing without webhook URLs', async () => {
    const ctx = await sandbox();
    await paidSession(ctx.test);
    expect(ctx.sandbox.records.deliveries()).toEqual([]);
  });

  it('stops retrying once the sandbox is closed', async () => {
    const hook = await receiver({ failFirst: 1_000 });
    const ctx = await sandbox({ webhookUrls: [hook.url], webhookRetry: { initialDelayMs: 100 } });
    await paidSession(ctx.test);
    await waitUntil(() => hook.received.length >= 1);
    await ctx.sandbox.close();
    const count = hook.received.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    // `close()` "stops the server and timers": no request leaves a closed sandbox.
    expect(hook.received).toHaveLength(count);
  });
});

describe('webhook events', () => {
  it('sends the REFUND webhook under 1 s after the refund, with the documented fields', async () => {
    const hook = await receiver();
    const ctx = await sandbox({ webhookUrls: [hook.url] });
    const paid = await paidSession(ctx.test);
    await hook.waitFor(1);
    const began = Date.now();
    const refund = await ctx.test.modifications.refund({
      paymentReference: paid.paymentReference,
      amount: EUR(500),
      reason: 'Damaged item',
    });
    const [, event] = await hook.waitFor(2, 2_000);
    expect(Date.now() - began).toBeLessThan(1_000);
    expect(event?.json).toEqual({
      event_code: 'REFUND',
      data: expect.objectContaining({
        amount: 500,
        currency: 'EUR',
        paymentReference: paid.paymentReference,
        refundReason: 'Damaged item',
        refundReference: refund.refundReference,
        status: 'success',
        customReference: 'order-42',
        paymentSource: 'external_api',
      }),
    });
    // By the time it arrives, the listing agrees; the SDK confirms it.
    const confirmed = await ctx.test.webhooks.confirm(event?.json);
    expect(confirmed).toMatchObject({ kind: 'refund', record: { operationReference: refund.refundReference, status: 'success' } });
  });

  it('sends no webhook for captures, cancels and extends (no event code is documented)', async () => {
    const hook = await receiver();
    const clock = manualClock();
    const ctx = await sandbox({ clock, webhookUrls: [hook.url] });
    const first = await paidSession(ctx.test, { isPreAuth: true });
    const second = await paidSession(ctx.test, { isPreAuth: true });
    await ctx.test.modifications.extend({ paymentReference: first.paymentReference });
    await ctx.test.modifications.capture({ paymentReference: first.paymentReference });
    await ctx.test.modifications.cancel({ paymentReference: second.paymentReference });
    await clock.advance(5_000);
    await ctx.sandbox.webhooksSettled();
    expect(hook.received.map((item) => item.json.event_code)).toEqual(['AUTHORISATION', 'AUTHORISATION']);
  });

  it('sends AUTHORISATION for POS payments, and for a timeout once it completes later', async () => {
    const hook = await receiver();
    const clock = manualClock();
    const ctx = await sandbox({ clock, webhookUrls: [hook.url], posTimeoutResolveMs: 5_000 });
    const flush = async (ms = 0) => {
      await clock.advance(ms);
      await ctx.sandbox.webhooksSettled();
    };

    const sale = await ctx.test.pos.createPayment({
      poiId: 'V400m-TEST-000001',
      amount: EUR(1200),
      customReference: 'pos-1',
      description: 'Bar',
    });
    await flush();
    expect(hook.accepted().map((item) => item.json)).toEqual([
      {
        event_code: 'AUTHORISATION',
        data: expect.objectContaining({
          amount: 1200,
          currency: 'EUR',
          paymentReference: sale.posPaymentId,
          paymentStatus: 'AUTHORISED',
          customReference: 'pos-1',
          description: 'Bar',
          paymentSource: 'external_api',
        }),
      },
    ]);
    expect(await ctx.test.webhooks.confirm(hook.accepted()[0]?.json)).toMatchObject({
      kind: 'posPayment',
      record: { posPaymentId: sale.posPaymentId },
    });

    // A declined Test POS payment also produces a simulated webhook.
    const declined = await ctx.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1077) });
    await flush();
    expect(hook.accepted()[1]?.json).toMatchObject({ event_code: 'AUTHORISATION', data: { paymentReference: declined.posPaymentId } });
    expect(hook.accepted()[1]?.json.data.paymentStatus).not.toBe('AUTHORISED');

    // A timeout: no webhook until it completes, then AUTHORISATION with the final result.
    const late = await ctx.test.pos.createPayment({ poiId: 'S1F2-TEST-000002', amount: EUR(2099) }, { recover: false });
    expect(late.status).toBe('timeout');
    await flush(4_999);
    expect(hook.accepted()).toHaveLength(2);
    expect((await ctx.test.pos.list({ status: 'timeout' }).toArray()).map((item) => item.posPaymentId)).toEqual([late.posPaymentId]);
    await flush(1);
    expect(hook.accepted()).toHaveLength(3);
    expect(hook.accepted()[2]?.json).toEqual({
      event_code: 'AUTHORISATION',
      data: expect.objectContaining({ amount: 2099, currency: 'EUR', paymentReference: late.posPaymentId, paymentStatus: 'AUTHORISED' }),
    });
    const listed = (await ctx.test.pos.list().toArray()).find((item) => item.posPaymentId === late.posPaymentId);
    expect(listed).toMatchObject({ status: 'success', pspReference: expect.any(String) });
    expect(await ctx.test.webhooks.confirm(hook.accepted()[2]?.json)).toMatchObject({ kind: 'posPayment', record: { status: 'success' } });
  });

  it('lets the SDK end a POS recovery wait with the webhook as a hint', async () => {
    const hook = await receiver();
    const ctx = await sandbox({ webhookUrls: [hook.url], posTimeoutResolveMs: 100 });
    const webhook = hook.waitFor(1, 3_000).then((received) => received[0]?.json);
    const result = await ctx.test.pos.createPayment(
      { poiId: 'V400m-TEST-000001', amount: EUR(5099) },
      { recover: { initialDelayMs: 5_000, pollIntervalMs: 5_000, maxWaitMs: 8_000, webhook } },
    );
    expect(result).toMatchObject({ status: 'success', recovered: true });
    expect(ctx.sandbox.records.posPayments()).toHaveLength(1);
  });

  it('sends the sessions of each environment with their environment in the log', async () => {
    const hook = await receiver();
    const clock = manualClock();
    const ctx = await sandbox({ clock, webhookUrls: [hook.url] });
    const created = await ctx.live.sessions.create({ ...sessionParams });
    await submitForm(created.paymentUrl);
    await clock.advance(0);
    await ctx.sandbox.webhooksSettled();
    expect(ctx.sandbox.records.deliveries()[0]).toMatchObject({ environment: 'live', delivered: true });
    expect(hook.accepted()[0]?.json.data.paymentReference).toMatch(new RegExp(`^${ctx.sandbox.webcode}-PXT-\\d+$`));
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
