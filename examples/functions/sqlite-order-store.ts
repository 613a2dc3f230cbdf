/**
 * An `OrderStore` on one SQLite file through `node:sqlite` (Node 22.5+): your database, for a local
 * run and the tests, where several processes share the file. On Lambda or Vercel, whose disks are
 * per instance, use a database every instance reaches (PostgreSQL, DynamoDB...) with the same
 * `load` and `save`.
 */
import { DatabaseSync } from 'node:sqlite';
import { ORDER_LOAD, ORDER_SAVE, ORDERS_SCHEMA, type Order, type OrderStore, saveParameters } from './orders.ts';

export function sqliteOrderStore(path: string): OrderStore & { close(): void } {
  // WAL and a busy timeout: processes write the same file at once.
  const db = new DatabaseSync(path, { timeout: 10_000 });
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(ORDERS_SCHEMA);
  const load = db.prepare(ORDER_LOAD);
  const save = db.prepare(ORDER_SAVE);
  return {
    async load(id) {
      const row = load.get(id) as { data: string } | undefined;
      return row ? (JSON.parse(row.data) as Order) : undefined;
    },
    async save(order) {
      save.run(...saveParameters(order));
    },
    close: () => db.close(),
  };
}
