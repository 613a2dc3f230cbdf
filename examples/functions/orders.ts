/**
 * The orders of the POS examples of this folder and where they are kept: your database. Replace
 * `OrderStore` with your own table (PostgreSQL, DynamoDB, D1...); the examples need `load` and
 * `save` only. Two stores are here: `d1OrderStore` (a Cloudflare D1 database, for the Worker) and,
 * in ./sqlite-order-store.ts, `sqliteOrderStore` (one SQLite file through `node:sqlite`, for Node:
 * the tests, a local run). Both use the SQL below.
 *
 * No Node module is imported here: a Worker's bundle includes this file.
 */
import type { D1Database } from '@cloudflare/workers-types/index';
import type { PosRecoveryState } from 'payment-service-sdk';

/** What the till knows about an order and its charge. */
export interface Order {
  id: string;
  /** In cents. */
  amountCents: number;
  currency: 'EUR' | 'GBP' | 'USD';
  /** The terminal the cashier charges on. */
  poiId: string;
  description?: string | undefined;
  /**
   * `open`: nothing sent yet (or the last attempt failed: the next charge is a new attempt);
   * `charging`: `charge` holds the state of a charge that may be under way; `paid` and `failed`: final.
   */
  status: 'open' | 'charging' | 'paid' | 'failed';
  /** The attempt number of `charge` (0 before the first). It moves on only after a final `failed`. */
  attempt: number;
  /**
   * The charge of the current attempt, saved BEFORE it is sent: its Idempotency-Key, its params and
   * when it was made (plus `posPaymentId` once known). Whoever picks the order up later (the
   * cashier's retry, the status route, a follow-up) finishes this charge with it, never a new one.
   */
  charge?: PosRecoveryState | undefined;
  /** The payment, once final. */
  posPaymentId?: string | undefined;
  /** Why a final `failed` failed, in the service's words. */
  failure?: string | undefined;
}

export interface OrderStore {
  load(id: string): Promise<Order | undefined>;
  /**
   * Stores the order. Two invocations may handle one order at once (the cashier pressed again while
   * the first was still running), so a save never undoes what another one learned: it is refused
   * (silently) when the stored order is of a later attempt, or of the same attempt and already
   * final while this one is not. ORDER_SAVE does that in one statement.
   */
  save(order: Order): Promise<void>;
}

/** One row per order: the attempt and status as columns (for the conditional save), the rest as JSON. */
export const ORDERS_SCHEMA =
  'CREATE TABLE IF NOT EXISTS pos_orders (id TEXT PRIMARY KEY, attempt INTEGER NOT NULL, final INTEGER NOT NULL, data TEXT NOT NULL)';

/** Parameters: id, attempt, final (0 or 1), data (the order as JSON). */
export const ORDER_SAVE = `INSERT INTO pos_orders (id, attempt, final, data) VALUES (?1, ?2, ?3, ?4)
  ON CONFLICT (id) DO UPDATE SET attempt = excluded.attempt, final = excluded.final, data = excluded.data
  WHERE excluded.attempt > pos_orders.attempt OR (excluded.attempt = pos_orders.attempt AND (pos_orders.final = 0 OR excluded.final = 1))`;

export const ORDER_LOAD = 'SELECT data FROM pos_orders WHERE id = ?1';

/** The parameters of ORDER_SAVE for `order`. */
export function saveParameters(order: Order): [string, number, number, string] {
  const final = order.status === 'paid' || order.status === 'failed' ? 1 : 0;
  return [order.id, order.attempt, final, JSON.stringify(order)];
}

/** An `OrderStore` on a Cloudflare D1 database (create the table once with ORDERS_SCHEMA). */
export function d1OrderStore(db: D1Database): OrderStore {
  return {
    async load(id) {
      const row = await db.prepare(ORDER_LOAD).bind(id).first<{ data: string }>();
      return row ? (JSON.parse(row.data) as Order) : undefined;
    },
    async save(order) {
      await db
        .prepare(ORDER_SAVE)
        .bind(...saveParameters(order))
        .run();
    },
  };
}
