/**
 * Hono: the handler is fetch-standard, so it takes Hono's `Request` as it is. The same app runs on
 * Workers, Bun and Deno; on Node through `@hono/node-server`.
 *
 *   npm run build && DATABASE_URL=postgres://... node examples/webhooks/hono.ts
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { WebhookHandler } from 'payment-service-sdk';
import { isMain } from '../setup.ts';

export function honoApp(webhook: WebhookHandler): Hono {
  const app = new Hono();
  app.post('/webhooks', (c) => webhook(c.req.raw));
  return app;
}

if (isMain(import.meta.url)) {
  const { fromEnvironment } = await import('./environment.ts');
  serve({ fetch: honoApp(fromEnvironment()).fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' });
}
