/**
 * Next.js (App Router), as `app/api/webhooks/route.ts`: the handler is fetch-standard, so it is
 * the route's `POST` as it is. It is made on the first delivery, not when the module loads: Next.js
 * loads route files at build time, when PAYMENT_SERVICE_* and DATABASE_URL may be unset. A route
 * file exports only route handlers, hence nothing else is exported here.
 */

import { createWebhookHandler, PaymentClient, type WebhookHandler } from 'payment-service-sdk';
import { postgresWebhookStore } from 'payment-service-sdk/stores/postgres';
import pg from 'pg';

let handler: WebhookHandler | undefined;

function webhook(): WebhookHandler {
  handler ??= createWebhookHandler({
    store: postgresWebhookStore(new pg.Pool({ connectionString: process.env.DATABASE_URL }), { createTable: true }),
    confirm: new PaymentClient(),
    onAuthorisation: async (event, _request, { confirmed }) => {
      if (confirmed?.outcome === 'authorised') console.log(`ship ${event.data.customReference}`); // once per payment
    },
  });
  return handler;
}

export const POST = (request: Request): Promise<Response> => webhook()(request);
