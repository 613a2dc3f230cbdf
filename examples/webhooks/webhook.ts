/**
 * The webhook handler every framework example of this folder mounts: a `store` shared by all the
 * app's instances makes `fulfil` run once per payment, however many times and to however many
 * instances the service delivers the event; `confirm` re-reads the payment from the API first
 * (deliveries are not signed), so `fulfil` runs only for a payment the API shows as authorised.
 */
import { createWebhookHandler, type PaymentClient, type WebhookHandler, type WebhookStore } from 'payment-service-sdk';

export interface ShopWebhookOptions {
  client: PaymentClient;
  store: WebhookStore;
  /** The side effect: ship the order. Make it idempotent too if you can (a lease can end mid-call). */
  fulfil(orderId: string, paymentReference: string): unknown;
}

export function createShopWebhook({ client, store, fulfil }: ShopWebhookOptions): WebhookHandler {
  return createWebhookHandler({
    store,
    confirm: client,
    onAuthorisation: async (event, _request, { confirmed }) => {
      if (confirmed?.outcome === 'authorised') await fulfil(event.data.customReference ?? '', event.data.paymentReference);
    },
    onError: (error, event) => console.error(`webhook ${event.event_code} failed:`, error),
  });
}
