/**
 * The shop of examples/express-server.ts as a Hono app. Hono speaks fetch-standard `Request` and
 * `Response`, so the webhook handler is mounted as it is: `(c) => webhook(c.req.raw)`. The same app
 * runs on Node (below), Cloudflare Workers, Deno and Bun.
 *
 *   npm run build && node examples/hono-app.ts      # then open the printed URL
 *
 * With PAYMENT_SERVICE_API_KEY, PAYMENT_SERVICE_WEBCODE, PAYMENT_SERVICE_BASE_URL (and
 * PAYMENT_SERVICE_ENVIRONMENT, PAYMENT_SERVICE_CLIENT_SECRET) set, it talks to the real service;
 * otherwise to a local sandbox that delivers its webhooks to this server. PORT picks the port (3001).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Hono } from 'hono';
import { connect, isMain } from './setup.ts';
import { checkout, FAILED_PAGE, type Order, paymentWebhook, type ShopOptions, UNCONFIRMED_PAGE, verifyPaidRedirect } from './shop.ts';

export type { Order, ShopOptions };

export function createApp({ client, clientSecret, orders, publicUrl }: ShopOptions): Hono {
  const app = new Hono();

  const webhook = paymentWebhook(client, orders);
  app.post('/webhooks', (c) => webhook(c.req.raw));

  // `orderId` from a form or JSON; the amount comes from the order.
  app.post('/checkout', async (c) => {
    const body = c.req.header('content-type')?.includes('json') ? await c.req.json<{ orderId?: unknown }>() : await c.req.parseBody();
    const order = orders.get(String(body.orderId));
    if (order?.status !== 'open') return c.text('no such open order', 404);
    return c.redirect(await checkout(client, order, publicUrl ?? new URL(c.req.url).origin), 303);
  });

  // urlOk: the service adds `data`, a token signed with the client secret; compare it with the order.
  app.get('/paid', async (c) => {
    const order = orders.get(c.req.query('order') ?? '');
    if (!order) return c.text('unknown order', 404);
    const data = await verifyPaidRedirect(c.req.url, clientSecret, order);
    if (!data) return c.text(UNCONFIRMED_PAGE, 400);
    return c.text(`paid: thank you, payment ${data.paymentReference} received for ${order.id}`);
  });

  app.get('/failed', (c) => c.text(FAILED_PAGE));

  app.get('/', (c) => {
    const open = [...orders.values()].filter((order) => order.status === 'open');
    return c.json({
      checkout: 'POST /checkout with orderId',
      open: open.map(({ id, amountCents, currency }) => ({ id, amountCents, currency })),
    });
  });

  return app;
}

/**
 * Serves a fetch-standard app on Node's `http` (what `@hono/node-server` does, in a few lines):
 * each request is buffered into a `Request`, and the `Response` written back.
 */
export function toNodeHandler(app: { fetch(request: Request): Response | Promise<Response> }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      const headers = new Headers();
      for (let index = 0; index + 1 < req.rawHeaders.length; index += 2) {
        headers.append(req.rawHeaders[index] ?? '', req.rawHeaders[index + 1] ?? '');
      }
      const method = req.method ?? 'GET';
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const init: RequestInit = { method, headers };
      if (method !== 'GET' && method !== 'HEAD') init.body = Buffer.concat(chunks);
      const response = await app.fetch(new Request(new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`), init));
      res.statusCode = response.status;
      for (const [name, value] of response.headers) res.appendHeader(name, value);
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (error) {
      console.error('request failed:', error);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    }
  };
}

if (isMain(import.meta.url)) {
  const setup = await connect();
  const orders = new Map<string, Order>([
    ['order-2001', { id: 'order-2001', amountCents: 1250, currency: 'EUR', description: 'A croissant, warm', status: 'open' }],
  ]);
  const port = Number(process.env.PORT ?? 3001);
  const url = `http://127.0.0.1:${port}`;
  const server: Server = createServer(toNodeHandler(createApp({ client: setup.client, clientSecret: setup.clientSecret, orders })));
  server.listen(port, '127.0.0.1', () => {
    // The local sandbox delivers its webhooks here; with the real service, set the URL in its dashboard.
    setup.sandbox?.webhookUrls.push(`${url}/webhooks`);
    console.log(`Hono shop on ${url}: POST ${url}/checkout with orderId=order-2001 and follow the redirect (Ctrl+C to stop)`);
  });
  const stop = () => {
    server.close(() => void setup.close());
    server.closeAllConnections();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
