/**
 * Express: the handler's `.node` adapter is an Express route handler. Mount it before any body
 * parser (it reads the raw body) or after `express.json()` (it takes the parsed body).
 *
 *   npm run build && DATABASE_URL=postgres://... node examples/webhooks/express.ts
 */
import express, { type Express } from 'express';
import type { WebhookHandler } from 'payment-service-sdk';
import { isMain } from '../setup.ts';

export function expressApp(webhook: WebhookHandler): Express {
  const app = express();
  app.post('/webhooks', webhook.node);
  return app;
}

if (isMain(import.meta.url)) {
  const { fromEnvironment } = await import('./environment.ts');
  expressApp(fromEnvironment()).listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
}
