/**
 * Fastify: hand the raw Node response to `.node` (`reply.hijack()` tells Fastify not to answer
 * itself) with the body Fastify parsed.
 *
 *   npm run build && DATABASE_URL=postgres://... node examples/webhooks/fastify.ts
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { WebhookHandler } from 'payment-service-sdk';
import { isMain } from '../setup.ts';

export function fastifyApp(webhook: WebhookHandler): FastifyInstance {
  const app = Fastify();
  app.post('/webhooks', async (request, reply) => {
    reply.hijack();
    await webhook.node({ method: request.method, url: request.url, headers: request.headers, body: request.body }, reply.raw);
  });
  return app;
}

if (isMain(import.meta.url)) {
  const { fromEnvironment } = await import('./environment.ts');
  await fastifyApp(fromEnvironment()).listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
}
