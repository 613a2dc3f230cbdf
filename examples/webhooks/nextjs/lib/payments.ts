/**
 * The payment service's parts of a Next.js app, as `lib/payments.ts`: each is made on its first use,
 * never when the module loads. `next build` imports every route and page module to collect its
 * configuration, without the runtime's environment: a `new PaymentClient()` at the top of a module
 * would throw `ConfigurationError: Missing option "apiKey"` there and fail the build.
 */
import { createWebhookHandler, PaymentClient, type WebhookHandler } from 'payment-service-sdk';
import { postgresWebhookStore } from 'payment-service-sdk/stores/postgres';
import pg from 'pg';
import { markPaid } from './orders';

let client: PaymentClient | undefined;
let handler: WebhookHandler | undefined;

/** The client, from PAYMENT_SERVICE_API_KEY, _WEBCODE, _BASE_URL and _ENVIRONMENT. */
export function paymentClient(): PaymentClient {
  client ??= new PaymentClient();
  return client;
}

/**
 * The webhook handler: a store every instance shares (PostgreSQL at DATABASE_URL, the table made on
 * first use) and `confirm`, so each payment marks its order paid once.
 */
export function webhook(): WebhookHandler {
  handler ??= createWebhookHandler({
    store: postgresWebhookStore(new pg.Pool({ connectionString: process.env.DATABASE_URL }), { createTable: true }),
    confirm: paymentClient(),
    onAuthorisation: async (event, _request, { confirmed }) => {
      if (confirmed?.outcome === 'authorised') await markPaid(event.data.customReference, event.data.paymentReference);
    },
  });
  return handler;
}
