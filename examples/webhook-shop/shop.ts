/**
 * A shop that fulfils each paid order exactly once, however many of its instances receive the
 * same webhook and however often: `createWebhookHandler` with a shared `WebhookStore` (PostgreSQL,
 * Redis or one SQLite file) and `confirm`. Its side effect is a line appended to a log file, with
 * no unique constraint anywhere, so that a second run would show as a second line.
 * test/webhook-proof.test.ts runs four of these against the sandbox and counts the lines.
 *
 *   npm run build
 *   SHOP_STORE=sqlite:/tmp/shop.db SHOP_LOG=/tmp/fulfilled.log PORT=3005 \
 *   PAYMENT_SERVICE_API_KEY=... PAYMENT_SERVICE_WEBCODE=... PAYMENT_SERVICE_BASE_URL=... \
 *   node examples/webhook-shop/shop.ts
 *
 * - SHOP_STORE: `postgres://...`, `redis://...` or `sqlite:<file>`; SHOP_STORE_NAME: the table or
 *   key prefix (default: the store's); SHOP_LEASE_MS: the lease (default 60 000).
 * - SHOP_LOG: the append-only log, one line per run of the callback:
 *   `fulfil <order> <paymentReference> <pid>` or `refuse <order> <paymentReference> <pid>`.
 * - PORT: 0 (default) picks a free port; the shop prints `listening on <url>` once it listens.
 * - SHOP_EFFECTS_TABLE (PostgreSQL and SQLite stores): the side effect is a row of this table
 *   (`action, order_ref, payment_reference, pid`, no unique constraint), written through
 *   `context.transaction` with the event's done mark, instead of a line of SHOP_LOG: exactly once
 *   even when the process is killed mid-callback. SHOP_EFFECT_HOLD_MS keeps each transaction open
 *   that long after its insert (for the kill proof: the kills then land inside transactions).
 * - SHOP_SLOW_ORDER and SHOP_SLOW_MARKER (for the proof): the first callback run for that order
 *   creates the marker file, writes its pid in it and hangs there, as a callback stuck in slow work
 *   would, until the process is killed.
 */
import { openSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { type AuthorisationEvent, createWebhookHandler, PaymentClient, type WebhookHandler, type WebhookStore } from 'payment-service-sdk';
import type { PoolClient } from 'pg';

/** A store and how to let go of its connection. */
export interface OpenedStore {
  store: WebhookStore;
  /** The store's database, for effects written through `context.transaction`. */
  kind: 'postgres' | 'redis' | 'sqlite';
  close(): Promise<void>;
}

/** The store SHOP_STORE names, shared by every instance given the same value. */
export async function openStore(location: string, name?: string): Promise<OpenedStore> {
  if (location.startsWith('postgres://') || location.startsWith('postgresql://')) {
    const { Pool } = await import('pg');
    const { postgresWebhookStore } = await import('payment-service-sdk/stores/postgres');
    const pool = new Pool({ connectionString: location, max: 4 });
    return { store: postgresWebhookStore(pool, { table: name, createTable: true }), kind: 'postgres', close: () => pool.end() };
  }
  if (location.startsWith('redis://')) {
    const { createClient } = await import('redis');
    const { redisWebhookStore } = await import('payment-service-sdk/stores/redis');
    const client = await createClient({ url: location }).connect();
    return { store: redisWebhookStore(client, { prefix: name && `${name}:` }), kind: 'redis', close: async () => void client.destroy() };
  }
  if (location.startsWith('sqlite:')) {
    const { sqliteWebhookStore } = await import('payment-service-sdk/stores/sqlite');
    const store = sqliteWebhookStore({ path: location.slice('sqlite:'.length), table: name });
    return { store, kind: 'sqlite', close: async () => store.close() };
  }
  throw new TypeError('SHOP_STORE must be postgres://..., redis://... or sqlite:<file>');
}

/** Options of {@link createShop}. */
export interface ShopOptions {
  client: PaymentClient;
  store: WebhookStore;
  /** File descriptor of the append-only fulfilment log. */
  log: number;
  leaseMs?: number | undefined;
  /** The order whose first callback run hangs (see SHOP_SLOW_ORDER), and the marker file it creates. */
  slow?: { order: string; marker: string } | undefined;
  /** Write the effect as a row of this table through `context.transaction` (see SHOP_EFFECTS_TABLE), on the store's database. */
  effects?: { table: string; kind: 'postgres' | 'sqlite'; holdMs?: number | undefined } | undefined;
}

/** The SQL of the effects table: append-only, no unique constraint, so that a second run shows as a second row. */
export function effectsTableSql(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (action text NOT NULL, order_ref text NOT NULL, payment_reference text NOT NULL, pid integer NOT NULL)`;
}

/** The shop's webhook endpoint: one line in the log per confirmed payment, whatever the deliveries. */
export function createShop({ client, store, log, leaseMs, slow, effects }: ShopOptions): WebhookHandler {
  return createWebhookHandler({
    store,
    confirm: client,
    leaseMs,
    onAuthorisation: async (event: AuthorisationEvent, _request, { confirmed, transaction }) => {
      const order = event.data.customReference ?? '';
      if (slow?.order === order && createdMarker(slow.marker)) await new Promise(() => {});
      // The side effect. A real shop would ship the order here, or queue its shipping.
      const action = confirmed?.outcome === 'authorised' ? 'fulfil' : 'refuse';
      const row = [action, order, event.data.paymentReference, process.pid];
      if (effects?.kind === 'postgres') {
        await transaction(async (db: PoolClient) => {
          await db.query(`INSERT INTO ${effects.table} VALUES ($1, $2, $3, $4)`, row);
          if (effects.holdMs) await sleep(effects.holdMs);
        });
      } else if (effects?.kind === 'sqlite') {
        await transaction(async (db: DatabaseSync) => {
          db.prepare(`INSERT INTO ${effects.table} VALUES (?, ?, ?, ?)`).run(...row);
          if (effects.holdMs) await sleep(effects.holdMs);
        });
      } else {
        writeSync(log, `${row.join(' ')}\n`);
      }
    },
    onError: (error, event) => console.error(`webhook ${event.event_code} failed:`, error),
  });
}

/** Creates the marker with this process's pid; false when it exists (the slow run already happened). */
function createdMarker(path: string): boolean {
  try {
    writeFileSync(path, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    return false;
  }
}

// Run as a script (not imported); ../setup.ts has the same check but loads the sandbox, which a shop does not need.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { store, kind, close } = await openStore(process.env.SHOP_STORE ?? '', process.env.SHOP_STORE_NAME);
  const table = process.env.SHOP_EFFECTS_TABLE;
  if (table && kind === 'redis') throw new TypeError('SHOP_EFFECTS_TABLE needs a PostgreSQL or SQLite store');
  const effects = table && kind !== 'redis' ? { table, kind, holdMs: Number(process.env.SHOP_EFFECT_HOLD_MS ?? 0) } : undefined;
  // O_APPEND: each line lands whole at the end of the file, whichever process writes it.
  const log = openSync(process.env.SHOP_LOG ?? 'fulfilled.log', 'a');
  const { SHOP_SLOW_ORDER: order, SHOP_SLOW_MARKER: marker } = process.env;
  const handler = createShop({
    client: new PaymentClient({ maxRetries: 2 }),
    store,
    log,
    leaseMs: process.env.SHOP_LEASE_MS ? Number(process.env.SHOP_LEASE_MS) : undefined,
    slow: order && marker ? { order, marker } : undefined,
    effects,
  });
  const server = createServer(handler.node);
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  const stop = () => {
    server.close(() => void close());
    server.closeAllConnections();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
