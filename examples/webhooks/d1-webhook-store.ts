/**
 * A `WebhookStore` of your own, on a Cloudflare D1 database, used by ./cloudflare-worker.ts: each
 * method is one SQL statement, atomic in SQLite, so that of racing claims exactly one wins. Create
 * the table once: `wrangler d1 execute <db> --remote --command "<D1_SCHEMA>"`. (In a module of its
 * own: a Worker's entry module may export only handlers.)
 */
import type { D1Database } from '@cloudflare/workers-types/index';
import type { WebhookStore } from 'payment-service-sdk';

export const D1_SCHEMA =
  'CREATE TABLE IF NOT EXISTS webhook_events (key TEXT PRIMARY KEY, token TEXT, expires_at INTEGER NOT NULL, done INTEGER NOT NULL DEFAULT 0)';

/** A `WebhookStore` on D1. Each method is one statement, atomic in SQLite: of racing claims, one wins. */
export function d1WebhookStore(db: D1Database): WebhookStore {
  return {
    async claim(key, leaseMs) {
      const token = crypto.randomUUID();
      const now = Date.now();
      // Inserts a free key, or takes over a claim whose lease ended; a done or held key is left alone.
      const claimed = await db
        .prepare(
          `INSERT INTO webhook_events (key, token, expires_at) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO UPDATE
           SET token = excluded.token, expires_at = excluded.expires_at WHERE done = 0 AND expires_at <= ?4 RETURNING token`,
        )
        .bind(key, token, now + leaseMs, now)
        .first<{ token: string }>();
      if (claimed) return { status: 'claimed', token };
      const row = await db
        .prepare('SELECT done, expires_at FROM webhook_events WHERE key = ?1')
        .bind(key)
        .first<{ done: number; expires_at: number }>();
      return row?.done ? { status: 'done' } : { status: 'busy', retryAfterMs: Math.max(1, (row?.expires_at ?? now) - now) };
    },
    async complete(key, token) {
      await db
        .prepare('UPDATE webhook_events SET done = 1, token = NULL WHERE key = ?1 AND token = ?2 AND done = 0')
        .bind(key, token)
        .run();
    },
    async release(key, token) {
      await db.prepare('DELETE FROM webhook_events WHERE key = ?1 AND token = ?2 AND done = 0').bind(key, token).run();
    },
  };
}
