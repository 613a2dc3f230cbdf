/**
 * `payment-service-sdk/stores/sqlite`: the `WebhookStore` of the app instances of one host,
 * sharing one SQLite file through `node:sqlite` (built into Node 22.13+: no native addon).
 */
import { ConfigurationError } from '../core/errors.js';
import { type Database, loadSqlite } from '../core/sqlite.js';
import { checkStoreArguments, claimLost, newClaimToken, type WebhookClaim, type WebhookStore } from '../helpers/webhook-store.js';
import { type ColumnShape, checkColumns } from './shape.js';
import { tableOption } from './table.js';

/** Options of {@link sqliteWebhookStore}. */
export interface SqliteWebhookStoreOptions {
  /**
   * The database file, created when absent, with its folder (mode 0700, owner only) when that is
   * absent too. Every process of the app on this host opens the same one.
   */
  path: string;
  /** The table of claims, created when absent. Default `payment_webhook_events`. */
  table?: string | undefined;
  /**
   * How long a statement waits for another process's write to end, in ms, before failing (the
   * handler then answers 500 and the sender retries). Default 5 000.
   */
  busyTimeoutMs?: number | undefined;
}

/** A {@link WebhookStore} on a SQLite file, with `close()` to close its connection. */
export interface SqliteWebhookStore extends WebhookStore {
  /** Closes the database connection; the store cannot be used afterwards. */
  close(): void;
  /**
   * See {@link WebhookStore.transaction}: `fn` gets the store's own `DatabaseSync` inside
   * `BEGIN IMMEDIATE`. The store's other calls wait for it to end; write nothing else on that
   * connection meanwhile.
   */
  transaction<Result>(key: string, token: string, fn: (db: Database) => Result | PromiseLike<Result>): Promise<Result>;
}

interface ClaimRow {
  token: string | null;
  lease_until: number;
  done_at: number | null;
}

/**
 * A {@link WebhookStore} in a SQLite file: exactly-once across the processes of one host (several
 * instances of the app, or a restarted one), not across hosts (use PostgreSQL or Redis there).
 * The file is opened in WAL mode with a busy timeout, so that processes wait for each other's
 * short writes; each claim is one atomic `INSERT ... ON CONFLICT DO UPDATE ... RETURNING`. Leases
 * are measured with the host's clock (`Date.now()`).
 *
 * The table (default `payment_webhook_events`) holds one row per key: `key`, `token`,
 * `lease_until` and `done_at` (ms since the epoch). Done rows are kept, since a redelivery may
 * come much later; delete old ones yourself if the file grows too big
 * (`DELETE FROM payment_webhook_events WHERE done_at < ?`).
 *
 * `node:sqlite` is synchronous: a statement blocks the event loop while it runs, microseconds
 * normally, up to `busyTimeoutMs` while another process writes.
 *
 * ```ts
 * import { sqliteWebhookStore } from 'payment-service-sdk/stores/sqlite';
 * const store = sqliteWebhookStore({ path: '/var/lib/shop/webhooks.db' });
 * ```
 *
 * Throws {@link ConfigurationError} for a malformed option (a `table` that is `null` or not a
 * name, or one of SQLite's own `sqlite_` tables included), for a table that exists with another
 * shape (a column missing or of another type, `key` not unique, another column NOT NULL without a
 * default: the message names the table and what is wrong), and for a file that cannot be opened
 * or made (an unwritable folder, a path through a file, a file that is not a database): its message
 * names the path and why, and `cause` is the error of `node:fs` or `node:sqlite`.
 */
export function sqliteWebhookStore(options: SqliteWebhookStoreOptions): SqliteWebhookStore {
  const { table, busyTimeoutMs } = checkOptions(options);
  const db = openStoreFile(options.path, table, busyTimeoutMs);
  const sql = statementsFor(db, table);
  // A transaction in progress on the connection: the store's statements wait for its end, so as
  // not to fall into it (node:sqlite has one connection, and fn may await).
  let open: Promise<void> | undefined;
  const idle = async () => {
    while (open) await open;
  };
  return {
    async claim(key, leaseMs): Promise<WebhookClaim> {
      checkStoreArguments(key, leaseMs, 'lease');
      await idle();
      const token = newClaimToken();
      const now = Date.now();
      const row = sql.claim.get(key, token, now, leaseMs) as unknown as ClaimRow;
      if (row.token === token) return { status: 'claimed', token };
      if (row.done_at !== null) return { status: 'done' };
      return { status: 'busy', retryAfterMs: Math.max(1, row.lease_until - now) };
    },
    async complete(key, token) {
      checkStoreArguments(key, token);
      await idle();
      sql.complete.run(key, token, Date.now());
    },
    async release(key, token) {
      checkStoreArguments(key, token);
      await idle();
      sql.release.run(key, token);
    },
    async transaction<Result>(key: string, token: string, fn: (db: Database) => Result | PromiseLike<Result>): Promise<Result> {
      checkStoreArguments(key, token);
      await idle();
      let end = () => {};
      open = new Promise((resolve) => {
        end = resolve;
      });
      try {
        return await inTransaction(db, () => {
          if (Number(sql.markDone.run(key, token, Date.now()).changes) === 0) throw claimLost(key);
          return fn(db);
        });
      } finally {
        open = undefined;
        end();
      }
    },
    close() {
      db.close();
    },
  };
}

/** The table's quoted name and the busy timeout, checked; a `ConfigurationError` naming the option at fault. */
function checkOptions(options: SqliteWebhookStoreOptions): { table: string; busyTimeoutMs: number } {
  if (typeof options !== 'object' || options === null || typeof options.path !== 'string' || options.path === '') {
    throw new ConfigurationError('path', 'sqliteWebhookStore needs { path }: the SQLite file every process of the app shares');
  }
  const table = tableOption(options.table, false);
  // SQLite's own tables (sqlite_schema, sqlite_sequence...): a name it reserves.
  if (/^"sqlite_/i.test(table))
    throw new ConfigurationError('table', `The webhook store's table ${table} is one of SQLite's own (sqlite_ names are reserved)`);
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new ConfigurationError('busyTimeoutMs', 'busyTimeoutMs must be a non-negative integer number of milliseconds');
  }
  return { table, busyTimeoutMs };
}

/** The file opened (its folder made) in WAL mode, with the table made or its shape checked. */
function openStoreFile(path: string, table: string, busyTimeoutMs: number): Database {
  const { DatabaseSync } = loadSqlite('sqliteWebhookStore');
  makeFolder(path);
  let db: Database;
  try {
    db = new DatabaseSync(path, { timeout: busyTimeoutMs });
  } catch (error) {
    throw cannotOpen(path, error);
  }
  try {
    db.exec('PRAGMA journal_mode = WAL');
    // In WAL mode, NORMAL loses no commit when a process dies, only on a power cut (the last
    // `done` marks then run again): the at-least-once the sender gives anyway.
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (key TEXT PRIMARY KEY, token TEXT, lease_until INTEGER NOT NULL, done_at INTEGER) WITHOUT ROWID`,
    );
    checkShape(db, table);
  } catch (error) {
    db.close();
    // Another process holding the file past the busy timeout is no configuration mistake: as it is.
    throw isBusy(error) || error instanceof ConfigurationError ? error : cannotOpen(path, error);
  }
  return db;
}

/** The store's statements on `table`, prepared once. */
function statementsFor(db: Database, table: string) {
  return {
    // The conflict branch always writes, so that RETURNING gives the row as it now is, whoever holds it:
    // the new claim, an unexpired one, or the done mark.
    claim: db.prepare(
      `INSERT INTO ${table} (key, token, lease_until) VALUES (?1, ?2, ?3 + ?4)
       ON CONFLICT (key) DO UPDATE SET
         token = CASE WHEN done_at IS NULL AND lease_until <= ?3 THEN excluded.token ELSE token END,
         lease_until = CASE WHEN done_at IS NULL AND lease_until <= ?3 THEN excluded.lease_until ELSE lease_until END
       RETURNING token, lease_until, done_at`,
    ),
    complete: db.prepare(
      `INSERT INTO ${table} (key, token, lease_until, done_at) VALUES (?1, ?2, ?3, ?3)
       ON CONFLICT (key) DO UPDATE SET done_at = ?3 WHERE done_at IS NULL AND (token = ?2 OR lease_until <= ?3)`,
    ),
    release: db.prepare(`DELETE FROM ${table} WHERE key = ?1 AND token = ?2 AND done_at IS NULL`),
    markDone: db.prepare(`UPDATE ${table} SET done_at = ?3 WHERE key = ?1 AND token = ?2 AND done_at IS NULL`),
  };
}

/** `work` between BEGIN IMMEDIATE and COMMIT; rolled back when it throws. */
async function inTransaction<Result>(db: Database, work: () => Result | PromiseLike<Result>): Promise<Result> {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = await work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    try {
      db.exec('ROLLBACK');
    } catch {
      // No transaction left to roll back (SQLite ended it on the error).
    }
    throw error;
  }
}

/** The affinity SQLite gives a declared type (https://sqlite.org/datatype3.html#determination_of_column_affinity), as far as the store cares. */
function affinity(type: string): 'integer' | 'text' | 'other' {
  const upper = type.toUpperCase();
  if (upper.includes('INT')) return 'integer';
  if (upper.includes('CHAR') || upper.includes('CLOB') || upper.includes('TEXT')) return 'text';
  return 'other';
}

/** Refuses a table that exists (`CREATE TABLE IF NOT EXISTS` left it as it was) with another shape. */
function checkShape(db: Database, table: string): void {
  const info = db.prepare(`PRAGMA table_info(${table})`).all() as unknown as {
    name: string;
    type: string;
    notnull: number;
    dflt_value: unknown;
    pk: number;
  }[];
  const keyed = info.filter((column) => column.pk > 0);
  const uniqueKey = (db.prepare(`PRAGMA index_list(${table})`).all() as unknown as { name: string; unique: number; partial: number }[])
    .filter((index) => index.unique === 1 && index.partial === 0)
    .some((index) => {
      const columns = db.prepare(`PRAGMA index_info("${index.name.replace(/"/g, '""')}")`).all() as unknown as { name: string }[];
      return columns.length === 1 && columns[0]?.name === 'key';
    });
  const columns: ColumnShape[] = info.map((column) => ({
    name: column.name,
    type: column.type,
    notNull: column.notnull === 1 || column.pk > 0,
    hasDefault: column.dflt_value !== null,
    unique: (keyed.length === 1 && column.pk === 1) || (column.name === 'key' && uniqueKey),
  }));
  checkColumns(
    table,
    columns,
    (type, need) => affinity(type) === (need === 'text' ? 'text' : 'integer'),
    { text: 'TEXT', time: 'INTEGER (ms since the epoch)' },
    'drop it, or name another table (the store creates it when absent)',
  );
}

interface NodeFsMkdir {
  mkdirSync(path: string, options: { recursive: true; mode: number }): unknown;
}

interface NodePath {
  dirname(path: string): string;
}

/**
 * Makes the folder of a database file when it is absent (`data/webhooks.db` in a fresh checkout),
 * owner-only like the sandbox's data folder: SQLite itself creates the file, never its folder.
 */
function makeFolder(path: string): void {
  if (path === ':memory:' || path.startsWith('file:')) return;
  const process = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process;
  const fs = process?.getBuiltinModule?.('node:fs') as NodeFsMkdir | undefined;
  const paths = process?.getBuiltinModule?.('node:path') as NodePath | undefined;
  if (!fs || !paths) return;
  const folder = paths.dirname(path);
  if (folder === '.') return;
  try {
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  } catch (error) {
    // EEXIST here means the folder's name is taken by a file: "file already exists" would mislead.
    const code = (error as { code?: unknown } | null)?.code;
    throw cannotOpen(path, error, code === 'EEXIST' ? `${folder} is a file, not a folder` : undefined);
  }
}

/** The error for a database file that cannot be made or opened: the path, why, and the cause. */
function cannotOpen(path: string, cause: unknown, reason?: string): ConfigurationError {
  const why = reason ?? (cause instanceof Error ? cause.message : String(cause));
  const error = new ConfigurationError('path', `sqliteWebhookStore cannot open the SQLite file ${path}: ${why}`);
  (error as { cause?: unknown }).cause = cause;
  return error;
}

/** SQLITE_BUSY or SQLITE_LOCKED (`node:sqlite` puts the primary result code in `errcode`). */
function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && ((code & 0xff) === 5 || (code & 0xff) === 6);
}
