/**
 * The shop logic shared by examples/express-server.ts and examples/hono-app.ts: its orders, the
 * checkout that opens a payment session for one, the check of the `urlOk` redirect, and the
 * webhook that marks an order paid. The two apps only wire these to their framework's routes.
 */
import {
  createWebhookHandler,
  type PaymentClient,
  type RedirectData,
  RedirectDataError,
  RedirectMismatchError,
  verifyRedirect,
  type WebhookHandler,
  WebhookNotConfirmedError,
} from 'payment-service-sdk';

/** An order of the shop. Its amount is decided here, never by the customer's request. */
export interface Order {
  id: string;
  amountCents: number;
  currency: 'EUR' | 'GBP' | 'USD';
  description: string;
  status: 'open' | 'paid';
  /** The session of the latest checkout; a declined payment needs a new session. */
  sessionId?: string;
  paymentReference?: string;
}

export interface ShopOptions {
  client: PaymentClient;
  /** The environment's client secret: it signs the `data` the customer brings back to `urlOk`. */
  clientSecret: string;
  /** The shop's orders (a database in a real shop). */
  orders: Map<string, Order>;
  /** The address customers reach the shop at. Default: the origin of the checkout request. */
  publicUrl?: string;
}

/** What the customer sees when `/paid` cannot confirm the payment from the redirect alone. */
export const UNCONFIRMED_PAGE = 'We could not confirm your payment here; we will email you once it is confirmed.';

/** What the customer sees on `urlKo`. It is unsigned, so it changes nothing: the order stays open. */
export const FAILED_PAGE = 'not paid: the payment was not completed and you have not been charged. You can try again.';

/** Opens a session for an open order and returns the hosted page to send the customer to. */
export async function checkout(client: PaymentClient, order: Order, origin: string): Promise<string> {
  const back = `order=${encodeURIComponent(order.id)}`;
  const session = await client.sessions.create({
    amount: { value: order.amountCents, currency: order.currency },
    urlOk: `${origin}/paid?${back}`,
    urlKo: `${origin}/failed?${back}`,
    description: order.description,
    customReference: order.id,
  });
  order.sessionId = session.sessionId;
  return session.paymentUrl;
}

/**
 * Checks the `data` token the service adds to `urlOk` (signed with the client secret) against the
 * order. Returns `undefined`, after logging why, when the token is bad or is for another payment.
 */
export async function verifyPaidRedirect(url: string | URL, clientSecret: string, order: Order): Promise<RedirectData | undefined> {
  try {
    return await verifyRedirect(url, clientSecret, { customReference: order.id, amount: order.amountCents, currency: order.currency });
  } catch (error) {
    if (error instanceof RedirectMismatchError) console.warn(`redirect for ${order.id} does not match the order:`, error.fields);
    else if (error instanceof RedirectDataError) console.warn(`redirect for ${order.id} has a bad token: ${error.reason}`);
    else throw error;
    return undefined;
  }
}

/**
 * The webhook endpoint: an AUTHORISATION event marks its order paid once the API confirms it is
 * an authorised payment of that order's session for the order's amount; a confirmed refusal
 * leaves the order open for another try. Deliveries are unsigned, so nothing is trusted before
 * that confirmation.
 */
export function paymentWebhook(client: PaymentClient, orders: Map<string, Order>): WebhookHandler {
  return createWebhookHandler({
    onAuthorisation: async (event) => {
      // Cheap checks first: anyone can post here, and each confirmation costs API requests.
      const order = orders.get(event.data.customReference ?? '');
      if (!order?.sessionId || order.status === 'paid') return; // not ours, or a redelivery
      try {
        const confirmed = await client.webhooks.confirm(event, { sessionId: order.sessionId });
        if (confirmed.outcome === 'refused') {
          console.log(`order ${order.id}: payment ${event.data.paymentReference} refused, the order stays open`);
          return;
        }
        const { amount } = confirmed.record;
        if (confirmed.kind !== 'session' || amount.value !== order.amountCents || amount.currency !== order.currency) {
          console.warn(`webhook for ${order.id} confirms another payment: ignored`);
          return;
        }
      } catch (error) {
        // `not-found` may be a delay: throw, the handler answers 500 and the service redelivers.
        // `mismatch` or `unsupported` will not change: acknowledge and ignore the event.
        if (!(error instanceof WebhookNotConfirmedError) || error.reason === 'not-found') throw error;
        console.warn(`webhook for ${order.id} not confirmed (${error.reason}): ignored`);
        return;
      }
      order.status = 'paid';
      order.paymentReference = event.data.paymentReference;
      console.log(`order ${order.id} paid: ${order.paymentReference}`);
    },
    onError: (error, event) => console.error(`webhook ${event.event_code} failed:`, error),
  });
}
