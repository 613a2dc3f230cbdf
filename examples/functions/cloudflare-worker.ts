/**
 * A Cloudflare Worker for a till's POS charges: `POST /orders/{id}/charge` and
 * `GET /orders/{id}/status`, the flow of ./pos-charge.ts, with the orders in a D1 database bound as
 * `DB` (`d1OrderStore`, ./orders.ts; create its table once with ORDERS_SCHEMA). The secrets
 * PAYMENT_SERVICE_API_KEY, PAYMENT_SERVICE_WEBCODE and PAYMENT_SERVICE_BASE_URL are set with
 * `wrangler secret put`.
 *
 * The limit, an assumption to check against your plan and your callers: a Worker is billed CPU
 * time, and a request waiting on the network uses almost none, so the platform does not cut it at a
 * fixed wall-clock time while its client stays connected. Its callers do (the till's HTTP client,
 * a proxy in front), and `ctx.waitUntil` work is cut 30 s after the answer. So this Worker gives
 * each request WORKER_LIMIT_MS (30 s) of wall-clock time from its start, less `marginMs` to save
 * the outcome and answer: the SDK stops waiting 100 ms before that deadline and throws
 * `PosPaymentPendingError`, and the Worker answers 202 (the cashier's screen polls the status route).
 */
import type { D1Database } from '@cloudflare/workers-types/index';
import { PaymentClient } from 'payment-service-sdk';
import { d1OrderStore, type OrderStore } from './orders.ts';
import { type Answer, answerBody, answering, type ChargeContext, chargeOrder, orderStatus, route } from './pos-charge.ts';

/** The wall-clock time this Worker allows itself per request (see above). */
export const WORKER_LIMIT_MS = 30_000;

interface Env {
  DB: D1Database;
  PAYMENT_SERVICE_API_KEY: string;
  PAYMENT_SERVICE_WEBCODE: string;
  PAYMENT_SERVICE_BASE_URL?: string;
}

export interface WorkerOptions<E> extends Omit<ChargeContext, 'deadline' | 'client' | 'store'> {
  client: (env: E) => PaymentClient;
  store: (env: E) => OrderStore;
  /** Default WORKER_LIMIT_MS. */
  limitMs?: number | undefined;
  /** Kept free before the limit, to save the outcome and answer. Default 1 000 ms. */
  marginMs?: number | undefined;
}

/** The Worker's `fetch`, for a client and a store of your choosing (the tests give theirs). */
export function createWorker<E>(options: WorkerOptions<E>) {
  const { client, store, limitMs = WORKER_LIMIT_MS, marginMs = 1_000, ...rest } = options;
  return {
    async fetch(request: Request, env: E, _ctx?: unknown): Promise<Response> {
      const deadline = Date.now() + limitMs - marginMs;
      const matched = route(request.method, new URL(request.url).pathname);
      if (!matched) return Response.json({ status: 'not-found' }, { status: 404 });
      const { action, orderId } = matched;
      const context: ChargeContext = { ...rest, client: client(env), store: store(env), deadline };
      const result: Answer = await answering(orderId, () => (action === 'charge' ? chargeOrder : orderStatus)(context, orderId));
      return new Response(answerBody(result), { status: result.status, headers: { 'content-type': 'application/json' } });
    },
  };
}

let client: PaymentClient | undefined;

export default createWorker<Env>({
  // Made on the first request, when `env` is known; one client per isolate.
  client: (env) =>
    (client ??= new PaymentClient({
      apiKey: env.PAYMENT_SERVICE_API_KEY,
      webcode: env.PAYMENT_SERVICE_WEBCODE,
      baseUrl: env.PAYMENT_SERVICE_BASE_URL,
    })),
  store: (env) => d1OrderStore(env.DB),
});
