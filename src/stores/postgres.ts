/**
 * `payment-service-sdk/stores/postgres`: the `WebhookStore` of app instances sharing a PostgreSQL
 * database, through the app's own `pg` (node-postgres) `Pool` or `Client`. Nothing here imports
 * `pg`: the app hands its connection in.
 */
import { ConfigurationError } from '../core/errors.js';
import { checkStoreArguments, claimLost, newClaimToken, type WebhookClaim, type WebhookStore } from '../helpers/webhook-store.js';
import { type ColumnShape, checkColumns } from './shape.js';
import { DEFAULT_TABLE, tableOption } from './table.js';

/**
 * What the store needs of a connection: a `pg` `Pool`, `Client` or `PoolClient` (node-postgres 8),
 * or anything with the same `query(text, values)`.
 */
export interface PostgresQueryable {
  /** Runs one parameterised statement. */
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A client of a `pg` `Pool`, as `context.transaction` hands it to its `fn` (a `pg` `PoolClient`). */
export interface PostgresPoolClient extends PostgresQueryable {
  /** Gives the client back to its pool (`pg` destroys it when given an error). */
  release(error?: Error | boolean): void;
}

/** A `pg` `Pool`: what `transaction` needs, since a transaction must hold one client of its own. */
interface PostgresPool extends PostgresQueryable {
  connect(): Promise<PostgresPoolClient>;
  totalCount: number;
}

function isPool(pool: PostgresQueryable): pool is PostgresPool {
  const candidate = pool as Partial<PostgresPool>;
  return typeof candidate.connect === 'function' && typeof candidate.totalCount === 'number';
}

/** A {@link WebhookStore} with `transaction`, whose `fn` gets a {@link PostgresPoolClient} inside `BEGIN`. */
export interface PostgresWebhookStore extends WebhookStore {
  /** See {@link WebhookStore.transaction}: `fn` gets a client of the pool inside `BEGIN`. Needs the store built on a `Pool`. */
  transaction<Result>(key: string, token: string, fn: (client: PostgresPoolClient) => Result | PromiseLike<Result>): Promise<Result>;
}

/** Options of {@link postgresWebhookStore}. */
export interface PostgresWebhookStoreOptions {
  /** The table of claims, `name` or `schema.name`. Default `payment_webhook_events`. */
  table?: string | undefined;
  /**
   * Creates the table (if it does not exist) before the first claim. Default false: create it with
   * your migrations, from {@link postgresWebhookStoreMigration} or the package's
   * `payment-service-sdk/stores/postgres.sql`.
   */
  createTable?: boolean | undefined;
}

/**
 * The SQL that creates the store's table (`CREATE TABLE IF NOT EXISTS`), for your migrations.
 * `table` is the same option as the store's (default `payment_webhook_events`). The columns:
 * `key` (primary key), `token` of the current claim, `lease_until`, and `done_at` once the
 * callback succeeded. It runs nothing: `await pool.query(postgresWebhookStoreMigration())`. Given
 * anything but a string (the pool, say), it throws a `ConfigurationError` saying so.
 */
export function postgresWebhookStoreMigration(table?: string): string {
  if (table !== undefined && typeof table !== 'string') throw new ConfigurationError('table', migrationArgument(table));
  const name = pgTable(table);
  return `CREATE TABLE IF NOT EXISTS ${name} (
  key text PRIMARY KEY,
  token text,
  lease_until timestamptz NOT NULL,
  done_at timestamptz
);
`;
}

/** Why `postgresWebhookStoreMigration` refuses `given`: what it takes and returns, and what to do with a pool. */
function migrationArgument(given: unknown): string {
  const queryable = typeof (given as { query?: unknown } | null)?.query === 'function';
  const what = queryable ? 'a pg Pool or Client' : given === null ? 'null' : `a ${typeof given}`;
  return (
    `postgresWebhookStoreMigration(table?) takes the table's name (a string, "name" or "schema.name"; default ${DEFAULT_TABLE}) ` +
    `and returns the SQL that creates it; it was given ${what}. It runs nothing: run the SQL yourself, ` +
    `await pool.query(postgresWebhookStoreMigration()), or pass createTable: true to postgresWebhookStore`
  );
}

/** `CREATE TABLE IF NOT EXISTS` racing in two sessions can still collide on the catalog: the table then exists. */
function alreadyCreated(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === '42P07' || code === '42710';
}

/** Schemas of the system's own tables: never a store's. */
const SYSTEM_SCHEMAS = /^(pg_catalog|information_schema|pg_toast.*)$/;

/** The `table` option quoted, refused at once when it is not a name or names a system schema. */
function pgTable(table: unknown): string {
  const name = tableOption(table, true);
  const schema = /^"([^"]+)"\./.exec(name)?.[1];
  if (schema !== undefined && SYSTEM_SCHEMAS.test(schema))
    throw new ConfigurationError('table', `The webhook store's table ${name} is in ${schema}, a system schema: name a table of your own`);
  return name;
}

/** The table's schema, kind and columns, found as the SQL names it (the search path resolves an unqualified name). */
const SHAPE_SQL = `SELECT n.nspname AS schema, c.relkind AS kind, a.attname AS name,
    format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null, a.atthasdef AS has_default,
    EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisunique AND i.indpred IS NULL
      AND i.indnkeyatts = 1 AND i.indkey[0] = a.attnum) AS unique
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  WHERE c.oid = to_regclass($1)`;

interface ShapeRow {
  schema: string;
  kind: string;
  name: string | null;
  type: string | null;
  not_null: boolean | null;
  has_default: boolean | null;
  unique: boolean | null;
}

/**
 * Refuses a table the store cannot use: absent, a system table, not a table, or of another shape.
 * `create` makes an absent one first (createTable): only once the name resolves to nothing, so
 * that an unqualified `pg_class` is never made beside the system's.
 */
async function checkShape(pool: PostgresQueryable, table: string, create?: () => Promise<void>): Promise<void> {
  const shape = async () => ((await pool.query(SHAPE_SQL, [table])) as { rows: ShapeRow[] }).rows;
  let rows = await shape();
  if (rows.length === 0 && create) {
    await create();
    rows = await shape();
  }
  const fix = 'make it with postgresWebhookStoreMigration() (or createTable: true), or name another table';
  const first = rows[0];
  if (!first) throw new ConfigurationError('table', `The webhook store's table ${table} does not exist; ${fix}`);
  if (SYSTEM_SCHEMAS.test(first.schema))
    throw new ConfigurationError('table', `The webhook store's table ${table} is a system table (schema ${first.schema}); ${fix}`);
  if (first.kind !== 'r' && first.kind !== 'p')
    throw new ConfigurationError('table', `The webhook store's table ${table} is not a table (a view or another relation); ${fix}`);
  const columns: ColumnShape[] = rows
    .filter((row) => row.name !== null)
    .map((row) => ({
      name: row.name ?? '',
      type: row.type ?? '',
      notNull: row.not_null === true,
      hasDefault: row.has_default === true,
      unique: row.unique === true,
    }));
  checkColumns(
    table,
    columns,
    (type, need) => (need === 'text' ? type === 'text' || type.startsWith('character varying') : type.startsWith('timestamp with')),
    { text: 'text', time: 'timestamptz' },
    fix,
  );
}

interface ClaimRow {
  claimed: boolean;
  done: boolean;
  retry_after_ms: number | string | null;
}

/**
 * A {@link WebhookStore} in a PostgreSQL table: exactly-once across every instance of the app
 * that shares the database. `pool` is the app's connected `pg` `Pool` (or a `Client`); the store
 * neither opens nor ends it.
 *
 * Each claim is ONE atomic statement, `INSERT ... ON CONFLICT (key) DO UPDATE ... RETURNING`,
 * which takes the key when it is free or its lease has ended and otherwise answers what holds it:
 * of many concurrent claims on one key exactly one wins, whatever the isolation level. `complete`
 * (an upsert) and `release` (a `DELETE`) are one statement each, conditional on the claim's token. Leases are measured with
 * the database server's clock, so app hosts need not agree on the time.
 *
 * Done rows are kept, since a redelivery may come much later; delete old ones yourself
 * (`DELETE FROM payment_webhook_events WHERE done_at < now() - interval '90 days'`).
 *
 * ```ts
 * import pg from 'pg';
 * import { postgresWebhookStore } from 'payment-service-sdk/stores/postgres';
 * const store = postgresWebhookStore(new pg.Pool({ connectionString: process.env.DATABASE_URL }), { createTable: true });
 * ```
 *
 * Throws {@link ConfigurationError} for a malformed option (a `table` that is `null` or not a
 * name included). Before its first call the store checks its table, as the search path resolves
 * it: a table that does not exist, a system table (`pg_catalog`, `information_schema`), a view, or
 * a table of another shape (a column missing or of another type, `key` not unique, another column
 * NOT NULL without a default) rejects with a `ConfigurationError` saying which table and what is
 * wrong. Otherwise the methods reject with `pg`'s errors (the webhook handler then answers 500,
 * and the sender retries).
 */
export function postgresWebhookStore(pool: PostgresQueryable, options: PostgresWebhookStoreOptions = {}): PostgresWebhookStore {
  if (typeof (pool as PostgresQueryable | null)?.query !== 'function') {
    throw new ConfigurationError('pool', 'postgresWebhookStore needs a pg Pool or Client (anything with query(text, values))');
  }
  const table = pgTable(options.table);
  const ready = readiness(pool, table, options);
  const sql = statementsFor(table);
  return {
    async claim(key, leaseMs): Promise<WebhookClaim> {
      checkStoreArguments(key, leaseMs, 'lease');
      await ready();
      const token = newClaimToken();
      const { rows } = await pool.query(sql.claim, [key, token, leaseMs]);
      const row = rows[0] as ClaimRow;
      if (row.claimed) return { status: 'claimed', token };
      if (row.done) return { status: 'done' };
      return { status: 'busy', retryAfterMs: Math.max(1, Number(row.retry_after_ms ?? 1)) };
    },
    async complete(key, token) {
      checkStoreArguments(key, token);
      await ready();
      await pool.query(sql.complete, [key, token]);
    },
    async release(key, token) {
      checkStoreArguments(key, token);
      await ready();
      await pool.query(sql.release, [key, token]);
    },
    async transaction<Result>(key: string, token: string, fn: (client: PostgresPoolClient) => Result | PromiseLike<Result>) {
      checkStoreArguments(key, token);
      if (!isPool(pool))
        throw new ConfigurationError('pool', 'context.transaction needs postgresWebhookStore built on a pg Pool, not a single Client');
      await ready();
      return inTransaction(pool, sql.done, key, token, fn);
    },
  };
}

/** What runs before the store's first call: the table made (with `createTable`) and its shape checked; a failure is tried again by the next call. */
function readiness(pool: PostgresQueryable, table: string, options: PostgresWebhookStoreOptions): () => Promise<void> {
  const migration = postgresWebhookStoreMigration(options.table);
  const create = async () => {
    try {
      await pool.query(migration, []);
    } catch (error) {
      if (!alreadyCreated(error)) throw error;
    }
  };
  let prepared: Promise<void> | undefined;
  return () => {
    prepared ??= checkShape(pool, table, options.createTable ? create : undefined).catch((error: unknown) => {
      prepared = undefined;
      throw error;
    });
    return prepared;
  };
}

/** The store's statements on `table` (a checked, quoted name). */
function statementsFor(table: string): { claim: string; complete: string; release: string; done: string } {
  return {
    // The conflict branch always writes, so that RETURNING reads the row as it now is (the latest
    // committed version, locked), whoever holds it: the new claim, an unexpired one, or the done mark.
    // One time for the whole statement (statement_timestamp), so that both CASEs agree.
    claim: `INSERT INTO ${table} AS e (key, token, lease_until)
    VALUES ($1, $2, statement_timestamp() + $3 * interval '1 millisecond')
    ON CONFLICT (key) DO UPDATE SET
      token = CASE WHEN e.done_at IS NULL AND e.lease_until <= statement_timestamp() THEN excluded.token ELSE e.token END,
      lease_until = CASE WHEN e.done_at IS NULL AND e.lease_until <= statement_timestamp() THEN excluded.lease_until ELSE e.lease_until END
    RETURNING e.token IS NOT DISTINCT FROM $2 AS claimed, e.done_at IS NOT NULL AS done,
      ceil(extract(epoch FROM e.lease_until - statement_timestamp()) * 1000) AS retry_after_ms`,
    complete: `INSERT INTO ${table} AS e (key, token, lease_until, done_at)
    VALUES ($1, $2, statement_timestamp(), statement_timestamp())
    ON CONFLICT (key) DO UPDATE SET done_at = statement_timestamp()
    WHERE e.done_at IS NULL AND (e.token = $2 OR e.lease_until <= statement_timestamp())`,
    release: `DELETE FROM ${table} WHERE key = $1 AND token = $2 AND done_at IS NULL`,
    // Marks done and locks the row for the transaction's life: a claim racing it waits, then finds it done.
    done: `UPDATE ${table} SET done_at = statement_timestamp() WHERE key = $1 AND token = $2 AND done_at IS NULL RETURNING key`,
  };
}

/** `fn` in a transaction of one pooled client that first marks the claim done (`doneSql`): both commit, or neither does. */
async function inTransaction<Result>(
  pool: PostgresPool,
  doneSql: string,
  key: string,
  token: string,
  fn: (client: PostgresPoolClient) => Result | PromiseLike<Result>,
): Promise<Result> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN', []);
    if ((await client.query(doneSql, [key, token])).rows.length === 0) throw claimLost(key);
    const result = await fn(client);
    await client.query('COMMIT', []);
    return result;
  } catch (error) {
    await client.query('ROLLBACK', []).catch((failure: unknown) => {
      broken = failure instanceof Error ? failure : new Error(String(failure));
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
