/**
 * A Cloudflare Worker receiving webhooks with a store of your own: `d1WebhookStore`
 * (./d1-webhook-store.ts), the `WebhookStore` interface over a D1 database bound as `DB`. The
 * secrets PAYMENT_SERVICE_API_KEY, PAYMENT_SERVICE_WEBCODE and PAYMENT_SERVICE_BASE_URL are set
 * with `wrangler secret put`. The handler is made on the first request, when `env` is known.
 */
import type { D1Database } from '@cloudflare/workers-types/index';
import { createWebhookHandler, PaymentClient, type WebhookHandler } from 'payment-service-sdk';
import { d1WebhookStore } from './d1-webhook-store.ts';

interface Env {
  DB: D1Database;
  PAYMENT_SERVICE_API_KEY: string;
  PAYMENT_SERVICE_WEBCODE: string;
  PAYMENT_SERVICE_BASE_URL?: string;
}

let handler: WebhookHandler | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    handler ??= createWebhookHandler({
      store: d1WebhookStore(env.DB),
      confirm: new PaymentClient({
        apiKey: env.PAYMENT_SERVICE_API_KEY,
        webcode: env.PAYMENT_SERVICE_WEBCODE,
        baseUrl: env.PAYMENT_SERVICE_BASE_URL,
      }),
      onAuthorisation: async (event, _request, { confirmed }) => {
        if (confirmed?.outcome === 'authorised') console.log(`ship ${event.data.customReference}`); // once per payment
      },
    });
    return handler(request);
  },
};
