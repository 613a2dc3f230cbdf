/**
 * `transaction` of the SQL webhook stores, and `context.transaction` of the webhook handler's
 * callbacks: the callback's rows and the event's done mark are committed together or not at all,
 * and nothing is written once the claim is another's. SQLite always; PostgreSQL against the real
 * server of `scripts/services.sh` (skipped with a warning when absent, failing under REQUIRE_SERVICES=1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, createWebhookHandler, memoryWebhookStore, type WebhookClaim, type WebhookStore } from '../src/index.js';
import { postgresWebhookStore } from '../src/stores/postgres.js';
import { sqliteWebhookStore } from '../src/stores/sqlite.js';
import { postgresUrl, uniqueName } from './support/services.js';

interface Subject {
  store: WebhookStore & Required<Pick<WebhookStore, 'transaction'>>;
  /** Appends `value` to the effects table through the transaction's connection. */
  insert(connection: unknown, value: string): Promise<void>;
  /** The effects table's values, in order. */
  rows(): Promise<string[]>;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function token(claim: WebhookClaim): string {
  if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${JSON.stringify(claim)}`);
  return claim.token;
}

const chargeback = (reference: string) =>
  new Request('http://shop.test/webhooks', {
    method: 'POST',
    body: JSON.stringify({ event_code: 'CHARGEBACK', data: { paymentReference: reference } }),
  });

function contract(make: () => Promise<Subject>): void {
  it('commits the rows and the done mark together', async () => {
    const { store, insert, rows } = await make();
    const claimed = token(await store.claim('k1', 60_000));
    expect(await store.transaction('k1', claimed, (db) => insert(db, 'one').then(() => 'result'))).toBe('result');
    expect(await rows()).toEqual(['one']);
    expect(await store.claim('k1', 60_000)).toEqual({ status: 'done' });
  });

  it('rolls both back when fn throws: no row, and the claim still holds, for release', async () => {
    const { store, insert, rows } = await make();
    const claimed = token(await store.claim('k2', 60_000));
    const failure = new Error('callback failed');
    await expect(
      store.transaction('k2', claimed, async (db) => {
        await insert(db, 'two');
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await rows()).toEqual([]);
    expect((await store.claim('k2', 60_000)).status).toBe('busy');
    await store.release('k2', claimed);
    expect((await store.claim('k2', 60_000)).status).toBe('claimed');
  });

  it('writes nothing when the lease ended and another claim took the key', async () => {
    const { store, insert, rows } = await make();
    const old = token(await store.claim('k3', 1));
    let taken: WebhookClaim = { status: 'done' };
    for (const deadline = Date.now() + 5_000; Date.now() < deadline; await sleep(10)) {
      taken = await store.claim('k3', 60_000);
      if (taken.status === 'claimed') break;
    }
    const fn = vi.fn((db: unknown) => insert(db, 'three'));
    await expect(store.transaction('k3', old, fn)).rejects.toThrow(/no longer this process's .*rolled back/);
    expect(fn).not.toHaveBeenCalled();
    expect(await rows()).toEqual([]);
    // The new claim still holds the key, and completes it with its own transaction.
    await store.transaction('k3', token(taken), (db) => insert(db, 'three by the new claim'));
    expect(await rows()).toEqual(['three by the new claim']);
  });

  it("gives the handler's callbacks context.transaction: one row per event across duplicates, once per event", async () => {
    const { store, insert, rows } = await make();
    const errors: unknown[] = [];
    const handler = createWebhookHandler({
      store,
      onError: (error) => void errors.push(error),
      onUnknown: async (event, _request, { transaction }) => {
        await transaction((db) => insert(db, String(event.data.paymentReference)));
        if (event.data.paymentReference === 'twice') await transaction((db) => insert(db, 'again'));
      },
    });
    for (let copy = 0; copy < 3; copy++) expect((await handler(chargeback('P-1'))).status).toBe(200);
    expect(await rows()).toEqual(['P-1']);
    // A second transaction in one callback is refused: the first committed, so the event is done all the same.
    expect((await handler(chargeback('twice'))).status).toBe(500);
    expect(String(errors[0])).toMatch(/context.transaction runs once per event/);
    expect(await (await handler(chargeback('twice'))).json()).toEqual({ received: true, duplicate: true });
    expect(await rows()).toEqual(['P-1', 'twice']);
  });
}

describe('sqliteWebhookStore transaction', () => {
  const dir = mkdtempSync(join(tmpdir(), 'payment-sdk-sqlite-tx-'));
  const opened: { close(): void }[] = [];
  afterAll(() => {
    for (const item of opened) item.close();
    rmSync(dir, { recursive: true, force: true });
  });

  contract(async () => {
    const path = join(dir, `${uniqueName('tx')}.db`);
    const store = sqliteWebhookStore({ path });
    const reader = new DatabaseSync(path);
    opened.push(store, reader);
    reader.exec('CREATE TABLE effects (value TEXT NOT NULL)');
    return {
      store,
      insert: async (db, value) => void (db as DatabaseSync).prepare('INSERT INTO effects VALUES (?)').run(value),
      rows: async () => (reader.prepare('SELECT value FROM effects ORDER BY rowid').all() as { value: string }[]).map((row) => row.value),
    };
  });

  it("keeps the store's own statements out of a transaction in progress on its connection", async () => {
    const path = join(dir, 'interleave.db');
    const store = sqliteWebhookStore({ path });
    opened.push(store);
    const claimed = token(await store.claim('a', 60_000));
    let claimedMeanwhile: Promise<WebhookClaim> | undefined;
    await expect(
      store.transaction('a', claimed, async () => {
        claimedMeanwhile = store.claim('b', 60_000);
        await sleep(20);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // The claim of b waited for the rollback: it was not undone with it.
    expect((await claimedMeanwhile)?.status).toBe('claimed');
    expect((await store.claim('b', 60_000)).status).toBe('busy');
  });
});

const url = postgresUrl();
describe.skipIf(!url)('postgresWebhookStore transaction', () => {
  const pools: pg.Pool[] = [];
  const tables: string[] = [];
  afterAll(async () => {
    for (const table of tables) await pools[0]?.query(`DROP TABLE IF EXISTS ${table}`);
    await Promise.all(pools.map((pool) => pool.end()));
  });

  contract(async () => {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pools.push(pool);
    const [table, effects] = [uniqueName('tx'), uniqueName('effects')];
    tables.push(table, effects);
    await pool.query(`CREATE TABLE ${effects} (id serial, value text NOT NULL)`);
    return {
      store: postgresWebhookStore(pool, { table, createTable: true }),
      insert: async (db, value) => void (await (db as pg.PoolClient).query(`INSERT INTO ${effects} (value) VALUES ($1)`, [value])),
      rows: async () => (await pool.query(`SELECT value FROM ${effects} ORDER BY id`)).rows.map((row: { value: string }) => row.value),
    };
  });

  it('refuses a transaction on a store built on a single Client, before any statement', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const table = uniqueName('tx');
      tables.push(table);
      const store = postgresWebhookStore(client, { table, createTable: true });
      const claimed = token(await store.claim('k', 60_000));
      const fn = vi.fn();
      await expect(store.transaction('k', claimed, fn)).rejects.toThrow(ConfigurationError);
      await expect(store.transaction('k', claimed, fn)).rejects.toThrow(/needs postgresWebhookStore built on a pg Pool/);
      expect(fn).not.toHaveBeenCalled();
    } finally {
      await client.end();
    }
  });
});

describe('context.transaction without a store that can', () => {
  it('rejects with a ConfigurationError naming the stores that can, before running fn', async () => {
    for (const store of [memoryWebhookStore(), undefined]) {
      const errors: unknown[] = [];
      const fn = vi.fn();
      const handler = createWebhookHandler({
        store,
        onError: (error) => void errors.push(error),
        onUnknown: (_event, _request, { transaction }) => transaction(fn),
      });
      expect((await handler(chargeback('P-2'))).status).toBe(500);
      expect(errors[0]).toBeInstanceOf(ConfigurationError);
      expect(String(errors[0])).toMatch(/postgresWebhookStore \(on a pg Pool\) or sqliteWebhookStore/);
      expect(fn).not.toHaveBeenCalled();
    }
  });
});
