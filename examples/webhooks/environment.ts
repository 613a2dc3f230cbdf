/**
 * The handler of the Node framework examples, as a deployment makes it: the client from
 * PAYMENT_SERVICE_* variables, the store in the PostgreSQL database DATABASE_URL names (the table
 * is created on first use), shared by every instance of the app.
 */

import { PaymentClient, type WebhookHandler } from 'payment-service-sdk';
import { postgresWebhookStore } from 'payment-service-sdk/stores/postgres';
import pg from 'pg';
import { createShopWebhook } from './webhook.ts';

export function fromEnvironment(): WebhookHandler {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
  return createShopWebhook({
    client: new PaymentClient(),
    store: postgresWebhookStore(pool, { createTable: true }),
    fulfil: (orderId, paymentReference) => console.log(`ship ${orderId} (${paymentReference})`),
  });
}
