/**
 * The shop as a Hono app: the webhook handler is fetch-standard, so Hono passes `c.req.raw` to it.
 *
 *   npm run build && node examples/hono-app.ts
 */
import { createServer } from 'node:http';
import { Hono } from 'hono';
import { createWebhookHandler, type PaymentClient, verifyRedirect, type WebhookEvent } from 'payment-service-sdk';
import { connect, isMain } from './setup.ts';

export function createApp(options: { client: PaymentClient; clientSecret: string; publicUrl: () => string; events: WebhookEvent[] }) {
  const { client, clientSecret, publicUrl, events } = options;
  const app = new Hono();
  const webhook = createWebhookHandler({
    onAuthorisation: async (event) => {
      await client.webhooks.confirm(event);
      events.push(event);
    },
    onRefund: (event) => {
      events.push(event);
    },
  });

  app.post('/webhooks', (c) => webhook(c.req.raw));
  app.post('/checkout', async (c) => {
    const { cents = 1500, orderId = 'order-1' } = await c.req.json<{ cents?: number; orderId?: string }>();
    const session = await client.sessions.create({
      amount: { value: cents, currency: 'EUR' },
      urlOk: `${publicUrl()}/paid`,
      urlKo: `${publicUrl()}/failed`,
      customReference: orderId,
    });
    return c.json({ paymentUrl: session.paymentUrl, sessionId: session.sessionId });
  });
  app.get('/paid', async (c) => {
    const data = await verifyRedirect(c.req.url, clientSecret, {});
    return c.text(`paid ${data.paymentReference}`);
  });
  app.get('/failed', (c) => c.text('not paid'));
  return app;
}

if (isMain(import.meta.url)) {
  const setup = await connect();
  const url = 'http://127.0.0.1:3001';
  const app = createApp({ client: setup.client, clientSecret: setup.clientSecret, publicUrl: () => url, events: [] });
  setup.sandbox?.webhookUrls.push(`${url}/webhooks`);
  createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = req.method === 'GET' ? null : Buffer.concat(chunks);
    const response = await app.fetch(
      new Request(new URL(req.url ?? '/', url), { method: req.method ?? 'GET', headers: req.headers as HeadersInit, body }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  }).listen(3001, '127.0.0.1', () => console.log(`Hono shop on ${url} (Ctrl+C to stop)`));
}
