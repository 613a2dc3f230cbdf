/**
 * A Next.js App Router route handler for the service's webhooks, as `app/api/webhooks/route.ts`.
 * `createWebhookHandler` returns a fetch-standard `(request: Request) => Promise<Response>`, which
 * is exactly what Next.js calls for `export const POST`; the same export works in any framework that
 * hands you a `Request` (Remix, SvelteKit, Workers, Deno, Bun).
 *
 * Next.js accepts only route exports (`POST`, `GET`, `runtime`, ...) from a route file: in an app,
 * keep `createWebhookRoute` and the store in `lib/payments.ts` and only `export const POST` here.
 *
 * The client comes from PAYMENT_SERVICE_API_KEY, PAYMENT_SERVICE_WEBCODE, PAYMENT_SERVICE_BASE_URL
 * and PAYMENT_SERVICE_ENVIRONMENT. Run directly, it starts a sandbox, pays a session and posts the
 * AUTHORISATION webhook the sandbox sent to `POST`, then a malformed body:
 *
 *   npm run build && node examples/nextjs-route.ts
 */
import {
  type AuthorisationEvent,
  createWebhookHandler,
  PaymentClient,
  type RefundEvent,
  type WebhookHandler,
  WebhookNotConfirmedError,
} from 'payment-service-sdk';
import { isMain } from './setup.ts';

/** Where confirmed events go: your database. `save` must be idempotent, the service may redeliver. */
export interface EventStore {
  save(event: AuthorisationEvent | RefundEvent): unknown;
}

/** An in-memory store, keyed so that a redelivered event is stored once. */
export function memoryStore(): EventStore & { events: Map<string, AuthorisationEvent | RefundEvent> } {
  const events = new Map<string, AuthorisationEvent | RefundEvent>();
  return {
    events,
    save(event) {
      const key = event.event_code === 'REFUND' ? event.data.refundReference : event.data.paymentReference;
      events.set(`${event.event_code}:${key}`, event);
    },
  };
}

/**
 * The route's `POST`. Each event is confirmed against the API before it is stored: deliveries are
 * not signed. Answers 200 once stored, 400 for a malformed body, 500 when the confirmation or the
 * store fails (the service then redelivers).
 */
export function createWebhookRoute({ client, store }: { client: () => PaymentClient; store: EventStore }): WebhookHandler {
  const confirmThenSave = async (event: AuthorisationEvent | RefundEvent) => {
    try {
      await client().webhooks.confirm(event);
    } catch (error) {
      // `not-found` may be a delay: rethrown, it answers 500 and the service redelivers.
      // `mismatch` or `unsupported` will not change: acknowledge and drop the event.
      if (!(error instanceof WebhookNotConfirmedError) || error.reason === 'not-found') throw error;
      console.warn(`webhook ${event.event_code} ${event.data.paymentReference} not confirmed (${error.reason}): dropped`);
      return;
    }
    await store.save(event);
  };
  return createWebhookHandler({
    onAuthorisation: confirmThenSave,
    onRefund: confirmThenSave,
    onError: (error, event) => console.error(`webhook ${event.event_code} failed:`, error),
  });
}

/** The client, made on first use from PAYMENT_SERVICE_* variables (not at build time, when they may be unset). */
let client: PaymentClient | undefined;
export const store = memoryStore();

export const POST = createWebhookRoute({ client: () => (client ??= new PaymentClient()), store });

if (isMain(import.meta.url)) {
  // No Next.js here: a sandbox plays the service, and delivers its webhooks by calling the route
  // as Next.js would (its `fetch` option), instead of over the network.
  const { createSandbox } = await import('payment-service-sdk/sandbox');
  const { TEST_CARDS, TEST_SUCCESS_CARDHOLDER } = await import('payment-service-sdk/testing');
  const sandbox = createSandbox({
    posDelayMs: 0,
    webhookUrls: ['http://localhost:3000/api/webhooks'],
    fetch: async (input, init) => {
      const response = await POST(new Request(input, init));
      console.log(`${new URL(String(input)).pathname} <- sandbox webhook: ${response.status} ${await response.clone().text()}`);
      return response;
    },
  });
  const { baseUrl } = await sandbox.listen();
  client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl });
  try {
    const session = await client.sessions.create({
      amount: { value: 4200, currency: 'EUR' },
      urlOk: 'https://shop.example/paid',
      urlKo: 'https://shop.example/failed',
      customReference: 'order-42',
    });
    const card = TEST_CARDS.visa;
    const form = { cardNumber: card.number, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, cvc: card.cvc };
    await fetch(session.paymentUrl, { method: 'POST', body: new URLSearchParams({ ...form, holderName: TEST_SUCCESS_CARDHOLDER }) });
    const delivered = () => sandbox.records.deliveries().some((delivery) => delivery.delivered);
    for (let tries = 0; tries < 100 && !delivered(); tries++) await new Promise((resolve) => setTimeout(resolve, 20));
    console.log('stored:', [...store.events.keys()]);
    const bad = await POST(new Request('http://localhost:3000/api/webhooks', { method: 'POST', body: '{"event_code":' }));
    console.log(`a malformed body -> ${bad.status} ${await bad.text()}`);
  } finally {
    await sandbox.close();
  }
}
