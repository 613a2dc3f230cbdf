/**
 * A Next.js App Router route handler on Vercel, as `app/orders/[id]/[action]/route.ts`:
 * `POST /orders/{id}/charge` and `GET /orders/{id}/status`, the flow of ./pos-charge.ts.
 *
 * Vercel stops a function at its `maxDuration` (in seconds, exported by the route file): the
 * deadline is the request's start plus `maxDuration`, less `marginMs` to save the outcome and
 * answer. The SDK stops waiting 100 ms before it and throws `PosPaymentPendingError`; the route then
 * answers 202, and the cashier's screen polls the status route.
 *
 * Next.js accepts only route exports (`POST`, `GET`, `maxDuration`, `runtime`, ...) from a route
 * file: in an app, keep `createOrderRoutes` in `lib/` and only those exports here. The client comes
 * from PAYMENT_SERVICE_API_KEY, PAYMENT_SERVICE_WEBCODE, PAYMENT_SERVICE_BASE_URL (and
 * PAYMENT_SERVICE_ENVIRONMENT), read on the first request, not at build time.
 */
import { PaymentClient } from 'payment-service-sdk';
import type { OrderStore } from './orders.ts';
import { type Answer, answering, type ChargeContext, chargeOrder, orderStatus } from './pos-charge.ts';
import { sqliteOrderStore } from './sqlite-order-store.ts';

/** Seconds: Vercel's limit for this route (what your plan allows). `node:sqlite` needs the Node.js runtime. */
export const maxDuration = 30;
export const runtime = 'nodejs';

/** What Next.js passes as the second argument of a dynamic route's handler. */
export interface RouteContext {
  params: Promise<{ id: string; action: string }>;
}

export interface OrderRouteOptions extends Omit<ChargeContext, 'deadline' | 'client' | 'store'> {
  client: () => PaymentClient;
  store: () => OrderStore;
  /** The route's limit in ms. Default `maxDuration * 1000`. */
  limitMs?: number | undefined;
  /** Kept free before the limit, to save the outcome and answer. Default 1 000 ms. */
  marginMs?: number | undefined;
}

const json = (result: Answer) => Response.json(result.body, { status: result.status });

/** `POST` and `GET` for a client and a store of your choosing (the tests give theirs). */
export function createOrderRoutes(options: OrderRouteOptions) {
  const { client, store, limitMs = maxDuration * 1_000, marginMs = 1_000, ...rest } = options;
  const context = (started: number): ChargeContext => ({
    ...rest,
    client: client(),
    store: store(),
    deadline: started + limitMs - marginMs,
  });
  return {
    async POST(_request: Request, { params }: RouteContext): Promise<Response> {
      const started = Date.now(); // the function's time runs from here (near enough)
      const { id, action } = await params;
      if (action !== 'charge') return Response.json({ status: 'not-found' }, { status: 404 });
      return json(await answering(id, () => chargeOrder(context(started), id)));
    },
    async GET(_request: Request, { params }: RouteContext): Promise<Response> {
      const started = Date.now();
      const { id, action } = await params;
      if (action !== 'status') return Response.json({ status: 'not-found' }, { status: 404 });
      return json(await answering(id, () => orderStatus(context(started), id)));
    },
  };
}

let client: PaymentClient | undefined;
let store: OrderStore | undefined;
const routes = createOrderRoutes({
  client: () => (client ??= new PaymentClient()),
  // Your database goes here: an `OrderStore` every function instance reaches (PostgreSQL...). A
  // file in /tmp, as below, is each instance's own: enough to try the route, not for production.
  store: () => (store ??= sqliteOrderStore(process.env.ORDERS_DB ?? '/tmp/orders.db')),
});

export const { POST, GET } = routes;
