/**
 * The tables of the SQL webhook stores: a `table` that is not a name (`null` included) is refused
 * at construction by every store and by the migration alike; a system table, a view or an existing
 * table of another shape is refused with a `ConfigurationError` naming the table and what is wrong
 * when the store first uses it, before any claim, rather than every claim failing with the
 * database's error. PostgreSQL runs against the server of `scripts/services.sh` (skipped with a
 * warning when absent, failing under REQUIRE_SERVICES=1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigurationError, type WebhookStore } from '../src/index.js';
import { postgresWebhookStore, postgresWebhookStoreMigration } from '../src/stores/postgres.js';
import { sqliteWebhookStore } from '../src/stores/sqlite.js';
import { rejection } from './support/rejection.js';
import { postgresUrl, uniqueName } from './support/services.js';

const LONG = 60_000;
const NOT_NAMES: unknown[] = [null, 42, {}, ['events'], true];

/** The error `attempt` throws, or `undefined`. */
function thrown(attempt: () => unknown): unknown {
  try {
    attempt();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** Expects a ConfigurationError of option `table` whose message matches every pattern. */
function expectTableError(error: unknown, ...patterns: RegExp[]): void {
  expect(error).toBeInstanceOf(ConfigurationError);
  expect(error).toMatchObject({ option: 'table' });
  for (const pattern of patterns) expect((error as Error).message).toMatch(pattern);
}

describe('sqliteWebhookStore: its table', () => {
  const dir = mkdtempSync(join(tmpdir(), 'payment-sdk-store-tables-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A database file holding `sql`'s tables. */
  function fileWith(sql: string): string {
    const path = join(dir, `${uniqueName('db')}.db`);
    const db = new DatabaseSync(path);
    db.exec(sql);
    db.close();
    return path;
  }

  it.each(NOT_NAMES)('refuses table %j at construction, as a malformed name', (table) => {
    expectTableError(
      thrown(() => sqliteWebhookStore({ path: join(dir, 'names.db'), table: table as string })),
      /table must be a table name/,
    );
  });

  it.each(['sqlite_master', 'sqlite_schema', 'sqlite_sequence', 'SQLITE_MASTER', 'sqlite_stat1'])(
    'refuses SQLite’s own table %s with a ConfigurationError, not a raw SQLite error',
    (table) => {
      expectTableError(
        thrown(() => sqliteWebhookStore({ path: join(dir, 'own.db'), table })),
        new RegExp(`"${table}"`),
        /SQLite's own/,
      );
    },
  );

  it.each([
    ['another table', 'CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)', /has no column key \(TEXT\)/],
    ['no token', 'CREATE TABLE t (key TEXT PRIMARY KEY, lease_until INTEGER, done_at INTEGER)', /has no column token/],
    [
      'an integer key',
      'CREATE TABLE t (key INTEGER PRIMARY KEY, token TEXT, lease_until INTEGER, done_at INTEGER)',
      /column key of type INTEGER, not TEXT/,
    ],
    [
      'a text lease',
      'CREATE TABLE t (key TEXT PRIMARY KEY, token TEXT, lease_until TEXT, done_at INTEGER)',
      /column lease_until of type TEXT, not INTEGER/,
    ],
    [
      'a key that is not unique',
      'CREATE TABLE t (key TEXT, token TEXT, lease_until INTEGER, done_at INTEGER)',
      /no primary key or unique index on key/,
    ],
    [
      'a NOT NULL column the store cannot fill',
      'CREATE TABLE t (key TEXT PRIMARY KEY, token TEXT, lease_until INTEGER, done_at INTEGER, shop TEXT NOT NULL)',
      /column shop, NOT NULL without a default/,
    ],
  ])('refuses an existing table of another shape (%s), naming the table and what is wrong', (_name, sql, why) => {
    const path = fileWith(sql);
    expectTableError(
      thrown(() => sqliteWebhookStore({ path, table: 't' })),
      /table "t"/,
      why,
    );
  });

  it('accepts a table of the shape it makes, with a unique index instead of a primary key and extra columns it need not fill', async () => {
    const path = fileWith(
      `CREATE TABLE t (key TEXT NOT NULL, token TEXT, lease_until INTEGER NOT NULL, done_at INTEGER, note TEXT, seen INTEGER NOT NULL DEFAULT 0);
       CREATE UNIQUE INDEX t_key ON t (key);`,
    );
    const store = sqliteWebhookStore({ path, table: 't' });
    expect((await store.claim('k', LONG)).status).toBe('claimed');
    store.close();
  });
});

describe('postgresWebhookStoreMigration', () => {
  it.each(NOT_NAMES)('refuses table %j, saying it takes a table name and returns SQL', (table) => {
    expectTableError(
      thrown(() => postgresWebhookStoreMigration(table as string)),
      /^postgresWebhookStoreMigration\(table\?\) takes the table's name \(a string/,
      /returns the SQL that creates it/,
    );
  });

  it.each(['', 'a.b.c', 'no-dashes', 'x'.repeat(64)])('refuses the malformed name %j, as the stores do', (table) => {
    expectTableError(
      thrown(() => postgresWebhookStoreMigration(table)),
      /table must be a table name or schema.table/,
    );
  });

  it('given the pool (as one easily does), says it takes a table name and returns SQL to run: no TypeError of a circular structure', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/none', max: 1 }); // never connects: nothing is queried
    const circular = Object.assign(pool, { self: pool });
    const error = thrown(() => postgresWebhookStoreMigration(circular as unknown as string));
    expectTableError(
      error,
      /takes the table's name \(a string, "name" or "schema.name"; default payment_webhook_events\) and returns the SQL that creates it/,
      /it was given a pg Pool or Client/,
      /await pool\.query\(postgresWebhookStoreMigration\(\)\)/,
      /createTable: true/,
    );
    await pool.end();
  });

  it('makes the default table when none is given', () => {
    expect(postgresWebhookStoreMigration()).toContain('CREATE TABLE IF NOT EXISTS "payment_webhook_events"');
  });
});

const url = postgresUrl();
describe.skipIf(url === undefined)('postgresWebhookStore: its table', () => {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const schema = uniqueName('tables');

  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  /** A table `schema.name` made with `columns`, or made by `sql` when given whole. */
  async function tableWith(columns: string): Promise<string> {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    const name = `${schema}.${uniqueName('t')}`;
    await pool.query(`CREATE TABLE ${name} (${columns})`);
    return name;
  }

  /** What each call of a store on `table` rejects with: the same error for claim, complete and release. */
  async function refusals(store: WebhookStore): Promise<unknown[]> {
    return [
      await rejection(store.claim('k', LONG)),
      await rejection(store.complete('k', 'token')),
      await rejection(store.release('k', 'token')),
    ];
  }

  it.each(NOT_NAMES)('refuses table %j at construction', (table) => {
    expectTableError(
      thrown(() => postgresWebhookStore(pool, { table: table as string })),
      /table must be a table name or schema.table/,
    );
  });

  it.each(['pg_catalog.pg_class', 'information_schema.tables', 'pg_catalog.pg_namespace', 'pg_toast.anything'])(
    'refuses %s, a table of a system schema, at construction, and in the migration',
    (table) => {
      for (const createTable of [false, true])
        expectTableError(
          thrown(() => postgresWebhookStore(pool, { table, createTable })),
          /a system schema/,
        );
      expectTableError(
        thrown(() => postgresWebhookStoreMigration(table)),
        /a system schema/,
      );
    },
  );

  it('refuses pg_class, which the search path resolves to the system’s, on first use; with createTable makes no table beside it', async () => {
    for (const createTable of [false, true]) {
      for (const error of await refusals(postgresWebhookStore(pool, { table: 'pg_class', createTable }))) {
        expectTableError(error, /table "pg_class" is a system table \(schema pg_catalog\)/);
      }
    }
    const { rows } = await pool.query(`SELECT to_regclass('public.pg_class') AS made`);
    expect(rows).toEqual([{ made: null }]);
  });

  it('refuses a view', async () => {
    const table = await tableWith('key text PRIMARY KEY, token text, lease_until timestamptz NOT NULL, done_at timestamptz');
    const view = `${schema}.${uniqueName('v')}`;
    await pool.query(`CREATE VIEW ${view} AS SELECT * FROM ${table}`);
    expectTableError(await rejection(postgresWebhookStore(pool, { table: view }).claim('k', LONG)), /is not a table/);
  });

  it.each([
    ['another table', 'id integer PRIMARY KEY, name text', /has no column key \(text\)/],
    ['no done_at', 'key text PRIMARY KEY, token text, lease_until timestamptz NOT NULL', /has no column done_at \(timestamptz\)/],
    [
      'an integer key',
      'key integer PRIMARY KEY, token text, lease_until timestamptz, done_at timestamptz',
      /column key of type integer, not text/,
    ],
    [
      'a bigint lease',
      'key text PRIMARY KEY, token text, lease_until bigint, done_at timestamptz',
      /column lease_until of type bigint, not timestamptz/,
    ],
    [
      'a key that is not unique',
      'key text, token text, lease_until timestamptz, done_at timestamptz',
      /no primary key or unique index on key/,
    ],
    [
      'a NOT NULL column the store cannot fill',
      'key text PRIMARY KEY, token text, lease_until timestamptz, done_at timestamptz, shop text NOT NULL',
      /column shop, NOT NULL without a default/,
    ],
  ])(
    'refuses an existing table of another shape (%s), also with createTable, naming the table and what is wrong',
    async (_name, columns, why) => {
      const table = await tableWith(columns);
      for (const createTable of [false, true]) {
        for (const error of await refusals(postgresWebhookStore(pool, { table, createTable }))) {
          expectTableError(error, new RegExp(`table "${table.replace('.', '"\\."')}"`), why);
        }
      }
    },
  );

  it('accepts a table of its own shape with varchar keys, a unique index, and extra columns it need not fill', async () => {
    const table = await tableWith(
      'id bigserial PRIMARY KEY, key varchar(600) NOT NULL UNIQUE, token varchar(64), lease_until timestamptz NOT NULL, done_at timestamptz, note text',
    );
    const store = postgresWebhookStore(pool, { table });
    const claim = await store.claim('k', LONG);
    expect(claim.status).toBe('claimed');
    if (claim.status === 'claimed') await store.complete('k', claim.token);
    expect(await store.claim('k', LONG)).toEqual({ status: 'done' });
  });
});
