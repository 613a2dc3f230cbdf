/**
 * An Express shop: `POST /checkout` sends the customer to the hosted payment page, `GET /paid`
 * and `GET /failed` are the `urlOk` and `urlKo` the customer comes back to, and `POST /webhooks`
 * receives the service's events, confirms them against the API and marks the order paid.
 *
 * The redirect only shows the customer a page: the customer may close the browser after paying,
 * and a `urlKo` visit proves nothing. The order is marked paid by the confirmed AUTHORISATION webhook.
 *
 *   npm run build && node examples/express-server.ts      # then open the printed URL
 *
 * With PAYMENT_SERVICE_API_KEY, PAYMENT_SERVICE_WEBCODE, PAYMENT_SERVICE_BASE_URL (and
 * PAYMENT_SERVICE_ENVIRONMENT, PAYMENT_SERVICE_CLIENT_SECRET) set, it talks to the real service;
 * otherwise to a local sandbox that delivers its webhooks to this server. PORT picks the port (3000).
 */
import express from 'express';
import { connect, isMain } from './setup.ts';
import { checkout, FAILED_PAGE, type Order, paymentWebhook, type ShopOptions, UNCONFIRMED_PAGE, verifyPaidRedirect } from './shop.ts';

export type { Order, ShopOptions };

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

export function createApp({ client, clientSecret, orders, publicUrl }: ShopOptions): express.Express {
  const app = express();
  const originOf = (req: express.Request) => publicUrl ?? `${req.protocol}://${req.get('host')}`;

  // A page with a Pay button per open order, so the script can be tried in a browser.
  app.get('/', (_req, res) => {
    const open = [...orders.values()].filter((order) => order.status === 'open');
    const forms = open.map(
      (order) =>
        `<form method="post" action="/checkout"><input type="hidden" name="orderId" value="${escapeHtml(order.id)}">` +
        `<button>Pay ${escapeHtml(order.id)}: ${(order.amountCents / 100).toFixed(2)} ${order.currency}</button></form>`,
    );
    res.type('html').send(`<!doctype html><title>Shop</title><h1>Shop</h1>${forms.join('') || '<p>No open orders.</p>'}`);
  });

  // `orderId` from a form or JSON; the amount comes from the order.
  app.post('/checkout', express.urlencoded({ extended: false }), express.json(), async (req, res) => {
    const order = orders.get(String(req.body?.orderId));
    if (order?.status !== 'open') return void res.status(404).send('no such open order');
    res.redirect(303, await checkout(client, order, originOf(req)));
  });

  // urlOk: the service adds `data`, a token signed with the client secret; compare it with the order.
  app.get('/paid', async (req, res) => {
    const order = orders.get(String(req.query.order));
    if (!order) return void res.status(404).send('unknown order');
    const data = await verifyPaidRedirect(new URL(req.originalUrl, originOf(req)), clientSecret, order);
    if (data) res.send(`paid: thank you, payment ${data.paymentReference} received for ${order.id}`);
    else res.status(400).send(UNCONFIRMED_PAGE);
  });

  app.get('/failed', (_req, res) => void res.send(FAILED_PAGE));

  // The handler reads the raw body itself; behind express.json() or express.raw() it works too.
  app.post('/webhooks', paymentWebhook(client, orders).node);

  return app;
}

if (isMain(import.meta.url)) {
  const setup = await connect();
  const orders = new Map<string, Order>([
    ['order-1042', { id: 'order-1042', amountCents: 2599, currency: 'EUR', description: 'Two coffees, one "large"', status: 'open' }],
  ]);
  const port = Number(process.env.PORT ?? 3000);
  const url = `http://127.0.0.1:${port}`;
  const server = createApp({ client: setup.client, clientSecret: setup.clientSecret, orders }).listen(port, '127.0.0.1', (error) => {
    if (error) throw error;
    // The local sandbox delivers its webhooks here; with the real service, set the URL in its dashboard.
    setup.sandbox?.webhookUrls.push(`${url}/webhooks`);
    console.log(`Shop on ${url}: open it in a browser, or POST ${url}/checkout with orderId=order-1042 (Ctrl+C to stop)`);
  });
  const stop = () => {
    server.close(() => void setup.close());
    server.closeAllConnections();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
