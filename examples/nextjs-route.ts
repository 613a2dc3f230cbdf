/**
 * A Next.js App Router route handler for webhooks (`app/api/webhooks/route.ts`). The handler is
 * fetch-standard, so the same export works in any framework that hands you a `Request`.
 */
import { type AuthorisationEvent, createWebhookHandler, PaymentClient, type RefundEvent } from 'payment-service-sdk';

/** Where the events go; a real app writes to its database. */
export const received: (AuthorisationEvent | RefundEvent)[] = [];

let client: PaymentClient | undefined;
/** Created on first use, from PAYMENT_SERVICE_* variables. */
function payments(): PaymentClient {
  client ??= new PaymentClient();
  return client;
}

export const POST = createWebhookHandler({
  onAuthorisation: async (event) => {
    if (process.env.CONFIRM_WEBHOOKS === '1') await payments().webhooks.confirm(event);
    received.push(event);
  },
  onRefund: async (event) => {
    received.push(event);
  },
  onError: (error, event) => console.error(`webhook ${event.event_code} failed`, error),
});
