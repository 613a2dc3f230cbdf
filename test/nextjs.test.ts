/**
 * The Next.js App Router example of examples/webhooks/nextjs/: its route (`app/api/webhooks/route.ts`)
 * and its redirect page (`app/checkout/done/page.tsx`) load as `next build` loads them, with none of
 * their environment set, reading none of it and making no client; then, with the environment set,
 * the route receives a real sandbox's webhooks (each AUTHORISATION delivered twice) into a real
 * PostgreSQL store, and the page checks a real `urlOk` token from paying a session, refusing a
 * tampered one and one for another order.
 */
import pg from 'pg';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { findOrder, saveOrder } from '../examples/webhooks/nextjs/lib/orders.ts';
import { ConfigurationError, PaymentClient } from '../src/index.js';
import { createSandbox } from '../src/sandbox/index.js';
import { payTestSession } from '../src/testing/index.js';
import { postgresUrl, uniqueName } from './support/services.js';

/** What the example reads from the environment, at run time only. */
const VARIABLES = [
  'PAYMENT_SERVICE_API_KEY',
  'PAYMENT_SERVICE_WEBCODE',
  'PAYMENT_SERVICE_BASE_URL',
  'PAYMENT_SERVICE_ENVIRONMENT',
  'PAYMENT_SERVICE_CLIENT_SECRET',
  'DATABASE_URL',
];

type RouteModule = typeof import('../examples/webhooks/nextjs/app/api/webhooks/route.ts');
type PageModule = typeof import('../examples/webhooks/nextjs/app/checkout/done/page.tsx');
let route: RouteModule;
let page: PageModule;

const closing: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  vi.unstubAllEnvs();
  for (const close of closing.splice(0).reverse()) await close();
});

describe('as `next build` loads them: no PAYMENT_SERVICE_* nor DATABASE_URL', () => {
  it('imports the route and the page without reading the environment or making a client', async () => {
    for (const name of VARIABLES) vi.stubEnv(name, undefined);
    // What an eager module does here: the trial's `Missing option "apiKey"`.
    expect(() => new PaymentClient()).toThrow(ConfigurationError);
    const environment = process.env;
    const read: string[] = [];
    process.env = new Proxy(environment, {
      get(target, name, receiver) {
        if (typeof name === 'string' && VARIABLES.includes(name)) read.push(name);
        return Reflect.get(target, name, receiver);
      },
    });
    try {
      route = await import('../examples/webhooks/nextjs/app/api/webhooks/route.ts');
      page = await import('../examples/webhooks/nextjs/app/checkout/done/page.tsx');
    } finally {
      process.env = environment;
    }
    expect(read).toEqual([]);
    // Next.js accepts only its own exports from these files.
    expect(Object.keys(route)).toEqual(['POST']);
    expect(Object.keys(page)).toEqual(['default']);
  });
});

/** The page rendered as Next.js renders a server component: awaited, then to HTML. */
async function render(searchParams: Record<string, string>): Promise<string> {
  return renderToStaticMarkup(await page.default({ searchParams: Promise.resolve(searchParams) }));
}

describe('with the environment set', () => {
  const url = postgresUrl();
  it.skipIf(!url)(
    'the route takes the sandbox webhooks into PostgreSQL once per payment; the page checks the redirect against the order',
    async () => {
      // Its own schema, so that the example's default table is this test's alone.
      const schema = uniqueName('nextjs');
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      closing.push(async () => {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      });
      await admin.query(`CREATE SCHEMA ${schema}`);
      const databaseUrl = new URL(url ?? '');
      databaseUrl.searchParams.set('options', `-c search_path=${schema}`);

      // The sandbox delivers to the route as Next.js would call it: a fetch-standard Request.
      const deliveries: number[] = [];
      const sandbox = createSandbox({
        posDelayMs: 0,
        webhookRetry: { initialDelayMs: 50 },
        webhookUrls: ['http://localhost:3000/api/webhooks'],
        fetch: async (input, init) => {
          const response = await route.POST(new Request(input, init));
          deliveries.push(response.status);
          return response;
        },
      });
      closing.push(() => sandbox.close());
      const { baseUrl } = await sandbox.listen();
      sandbox.faults.add({ event: 'AUTHORISATION', effect: { type: 'duplicate', copies: 2 } });
      vi.stubEnv('PAYMENT_SERVICE_API_KEY', sandbox.keys.test);
      vi.stubEnv('PAYMENT_SERVICE_WEBCODE', sandbox.webcode);
      vi.stubEnv('PAYMENT_SERVICE_BASE_URL', baseUrl);
      vi.stubEnv('PAYMENT_SERVICE_ENVIRONMENT', 'test');
      vi.stubEnv('PAYMENT_SERVICE_CLIENT_SECRET', sandbox.clientSecrets.test);
      vi.stubEnv('DATABASE_URL', databaseUrl.href);

      const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, maxRetries: 0 });
      await saveOrder({ id: 'order-1042', totalCents: 2590, currency: 'EUR' });
      await saveOrder({ id: 'order-1043', totalCents: 9900, currency: 'EUR' });
      const session = await client.sessions.create({
        amount: { value: 2590, currency: 'EUR' },
        urlOk: 'https://shop.example/checkout/done?order=order-1042',
        urlKo: 'https://shop.example/checkout/failed?order=order-1042',
        customReference: 'order-1042',
      });
      const paid = await payTestSession(session.paymentUrl);
      expect(paid.paid).toBe(true);
      const query = Object.fromEntries(new URL(paid.redirectUrl ?? '').searchParams);
      expect(Object.keys(query).sort()).toEqual(['data', 'order']);

      // The webhook: two copies of one AUTHORISATION at once, both acknowledged in the end (the one that
      // finds the other's claim gets 409 and is sent again), one done row, the order marked paid.
      const { paymentReference } = await client.sessions.retrieve(session.sessionId);
      const acknowledged = () => deliveries.filter((status) => status === 200).length;
      for (let tries = 0; tries < 200 && acknowledged() < 2; tries++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(acknowledged()).toBe(2);
      expect(deliveries.filter((status) => status !== 200 && status !== 409)).toEqual([]);
      expect((await findOrder('order-1042'))?.paymentReference).toBe(paymentReference);
      const rows = await admin.query(`SELECT key, done_at FROM ${schema}.payment_webhook_events`);
      expect(rows.rows).toEqual([{ key: expect.stringContaining(paymentReference ?? '-'), done_at: expect.anything() }]);
      // A body that is not an event is refused by the route as by any handler.
      expect((await route.POST(new Request('http://localhost:3000/api/webhooks', { method: 'POST', body: '{"event_code":' }))).status).toBe(
        400,
      );

      // The page: paid for the right order; not confirmed for a tampered token or another order.
      expect(await render(query)).toContain(`Order order-1042 is paid (payment ${paymentReference})`);
      const data = query.data ?? '';
      const tampered = `${data.slice(0, -2)}${data.endsWith('AA') ? 'BB' : 'AA'}`;
      expect(await render({ ...query, data: tampered })).toContain('We could not confirm your payment here');
      expect(await render({ ...query, order: 'order-1043' })).toContain('We could not confirm your payment here');
      expect(await render({ order: 'order-1042' })).toContain('We could not confirm your payment here');
      expect(await render({ ...query, order: 'order-9999' })).toContain('Unknown order');
      vi.stubEnv('PAYMENT_SERVICE_CLIENT_SECRET', undefined);
      await expect(render(query)).rejects.toThrow('Set PAYMENT_SERVICE_CLIENT_SECRET');
    },
    30_000,
  );
});
