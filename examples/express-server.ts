/**
 * An Express shop: `POST /checkout` sends the customer to the payment page, `GET /paid` and
 * `GET /failed` are the `urlOk` and `urlKo`, and `POST /webhooks` receives the service's events,
 * confirms them against the API and marks the order paid.
 *
 *   npm run build && node examples/express-server.ts
 */
import express from 'express';
import { createWebhookHandler, type PaymentClient, RedirectDataError, RedirectMismatchError, verifyRedirect } from 'payment-service-sdk';
import { connect, isMain } from './setup.ts';

export interface Order {
  id: string;
  cents: number;
  status: 'new' | 'paid' | 'failed';
}

export function createApp(options: { client: PaymentClient; clientSecret: string; publicUrl: () => string; orders: Map<string, Order> }) {
  const { client, clientSecret, publicUrl, orders } = options;
  const app = express();

  app.post('/checkout', express.json(), async (req, res) => {
    const order: Order = {
      id: String(req.body?.orderId ?? `order-${orders.size + 1}`),
      cents: Number(req.body?.cents ?? 2599),
      status: 'new',
    };
    orders.set(order.id, order);
    const session = await client.sessions.create({
      amount: { value: order.cents, currency: 'EUR' },
      urlOk: `${publicUrl()}/paid?order=${encodeURIComponent(order.id)}`,
      urlKo: `${publicUrl()}/failed?order=${encodeURIComponent(order.id)}`,
      customReference: order.id,
    });
    res.redirect(303, session.paymentUrl);
  });

  app.get('/paid', async (req, res) => {
    const order = orders.get(String(req.query.order));
    if (!order) return void res.status(404).send('unknown order');
    try {
      const data = await verifyRedirect(new URL(req.originalUrl, publicUrl()), clientSecret, {
        customReference: order.id,
        amount: order.cents,
      });
      res.send(`Thank you! Payment ${data.paymentReference} received for ${order.id}.`);
    } catch (error) {
      if (!(error instanceof RedirectDataError || error instanceof RedirectMismatchError)) throw error;
      res.status(400).send('We could not confirm your payment; we will email you once it is confirmed.');
    }
  });

  app.get('/failed', (req, res) => {
    const order = orders.get(String(req.query.order));
    if (order) order.status = 'failed';
    res.send('The payment was not completed. You have not been charged.');
  });

  const webhook = createWebhookHandler({
    onAuthorisation: async (event) => {
      const confirmed = await client.webhooks.confirm(event);
      const order = orders.get(String(event.data.customReference));
      if (order && confirmed.record.status) order.status = 'paid';
    },
    onError: (error, event) => console.error(`webhook ${event.event_code} failed:`, error),
  });
  app.post('/webhooks', webhook.node);
  return app;
}

if (isMain(import.meta.url)) {
  const setup = await connect();
  let url = '';
  const app = createApp({ client: setup.client, clientSecret: setup.clientSecret, publicUrl: () => url, orders: new Map() });
  const server = app.listen(3000, '127.0.0.1', () => {
    url = 'http://127.0.0.1:3000';
    setup.sandbox?.webhookUrls.push(`${url}/webhooks`);
    console.log(`Shop on ${url}: POST ${url}/checkout to start a payment (Ctrl+C to stop)`);
  });
  process.once('SIGINT', () => server.close(() => void setup.close()));
}
