/**
 * One contract, every store: memory, SQLite (node:sqlite), PostgreSQL (pg) and Redis (node-redis),
 * the last two against the real servers of `scripts/services.sh` (skipped with a warning when
 * absent, failing under REQUIRE_SERVICES=1). Leases are made tiny where they must end; the test
 * then waits for the end instead of timing anything.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { ConfigurationError, memoryWebhookStore, type WebhookClaim, type WebhookStore } from '../src/index.js';
import { type PostgresQueryable, postgresWebhookStore, postgresWebhookStoreMigration } from '../src/stores/postgres.js';
import { type RedisEvaluator, redisWebhookStore } from '../src/stores/redis.js';
import { sqliteWebhookStore } from '../src/stores/sqlite.js';
import { postgresUrl, redisUrl, uniqueName } from './support/services.js';

/** A store under test, and `connections` more stores on their own connections to the same data. */
interface Subject {
  store: WebhookStore;
  connections(count: number): Promise<WebhookStore[]>;
  close(): Promise<void>;
}

const LONG = 60_000;
const CONNECTIONS = 16;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function claimed(claim: WebhookClaim): string {
  if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${JSON.stringify(claim)}`);
  return claim.token;
}

/** Claims `key` until its (tiny) lease has ended and this claim takes it. */
async function claimOnceExpired(store: WebhookStore, key: string): Promise<string> {
  let token = '';
  await vi.waitFor(
    async () => {
      const claim = await store.claim(key, LONG);
      expect(claim.status).toBe('claimed');
      token = claimed(claim);
    },
    { timeout: 5_000, interval: 20 },
  );
  return token;
}

/** `describe` for a store that needs a server: fails when the server is required but absent, skips when only absent. */
function describeWithServer(name: string, url: () => string | undefined, suite: (url: string) => void): void {
  let value: string | undefined;
  let problem: unknown;
  try {
    value = url();
  } catch (error) {
    problem = error;
  }
  if (problem !== undefined) {
    describe(name, () => {
      it('has its server', () => {
        throw problem;
      });
    });
    return;
  }
  describe.skipIf(value === undefined)(name, () => suite(value ?? ''));
}

function contract(open: () => Promise<Subject>): void {
  let subject: Subject;
  let run = 0;
  /** A key no other test of this file uses, with characters a store must not mangle. */
  const key = () => `AUTHORISATION:SHOP1-PXTT-${++run}:AUTHORISED:é✓ "q'uote"`;

  beforeAll(async () => {
    subject = await open();
  });
  afterAll(async () => {
    await subject?.close();
  });

  it('claims a free key, answers busy while the lease holds, and done for good once completed', async () => {
    const { store } = subject;
    const k = key();
    const token = claimed(await store.claim(k, LONG));
    const busy = await store.claim(k, LONG);
    expect(busy.status).toBe('busy');
    const { retryAfterMs } = busy as { retryAfterMs: number };
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(LONG);
    await store.complete(k, token);
    expect(await store.claim(k, LONG)).toEqual({ status: 'done' });
    await store.release(k, token);
    expect(await store.claim(k, LONG)).toEqual({ status: 'done' });
  });

  it('ignores complete and release by a token that does not hold the claim', async () => {
    const { store } = subject;
    const k = key();
    const token = claimed(await store.claim(k, LONG));
    await store.complete(k, 'another-token');
    await store.release(k, 'another-token');
    expect((await store.claim(k, LONG)).status).toBe('busy');
    await store.complete(k, token);
    expect(await store.claim(k, LONG)).toEqual({ status: 'done' });
  });

  it('completes a key that a later claim took and released: the callback did succeed under its own token', async () => {
    const { store } = subject;
    const k = key();
    const old = claimed(await store.claim(k, 30));
    const fresh = await claimOnceExpired(store, k);
    await store.release(k, fresh);
    await store.complete(k, old);
    expect(await store.claim(k, LONG)).toEqual({ status: 'done' });
  });

  it('frees a released key for the next claim, under a new token', async () => {
    const { store } = subject;
    const k = key();
    const first = claimed(await store.claim(k, LONG));
    await store.release(k, first);
    const second = claimed(await store.claim(k, LONG));
    expect(second).not.toBe(first);
    await store.complete(k, second);
    expect(await store.claim(k, LONG)).toEqual({ status: 'done' });
  });

  it('hands a key whose lease ended to the next claim, and ignores the late complete of the old claim', async () => {
    const { store } = subject;
    const k = key();
    const old = claimed(await store.claim(k, 30));
    const fresh = await claimOnceExpired(store, k);
    expect(fresh).not.toBe(old);
    await store.complete(k, old);
    await store.release(k, old);
    expect((await store.claim(k, LONG)).status).toBe('busy');
    await store.complete(k, fresh);
    expect(await store.claim(k, LONG)).toEqual({ status: 'done' });
  });

  it('completes a claim whose lease ended when nobody took it since', async () => {
    const { store } = subject;
    const k = key();
    const token = claimed(await store.claim(k, 20));
    await sleep(60);
    await store.complete(k, token);
    expect(await store.claim(k, LONG)).toEqual({ status: 'done' });
  });

  it(`gives a fresh key to exactly one of ${CONNECTIONS} connections claiming it at once`, async () => {
    const stores = await subject.connections(CONNECTIONS);
    for (let round = 0; round < 5; round++) {
      const k = key();
      const claims = await Promise.all(stores.map((store) => store.claim(k, LONG)));
      expect(claims.filter((claim) => claim.status === 'claimed')).toHaveLength(1);
      expect(claims.filter((claim) => claim.status === 'busy')).toHaveLength(CONNECTIONS - 1);
    }
  });

  it(`gives a key whose lease just ended to exactly one of ${CONNECTIONS} connections, and a done key to none`, async () => {
    const stores = await subject.connections(CONNECTIONS);
    const k = key();
    claimed(await subject.store.claim(k, 20));
    await sleep(60);
    const claims = await Promise.all(stores.map((store) => store.claim(k, LONG)));
    const winners = claims.filter((claim) => claim.status === 'claimed');
    expect(winners).toHaveLength(1);
    await subject.store.complete(k, claimed(winners[0] as WebhookClaim));
    const after = await Promise.all(stores.map((store) => store.claim(k, LONG)));
    expect(after.every((claim) => claim.status === 'done')).toBe(true);
  });

  it('refuses malformed keys, tokens and leases before reaching the data', async () => {
    const { store } = subject;
    await expect(store.claim('', LONG)).rejects.toThrow(TypeError);
    await expect(store.claim('k', -1)).rejects.toThrow(/lease/);
    await expect(store.complete('k', '')).rejects.toThrow(/token/);
  });
}

describe('memoryWebhookStore', () => {
  contract(async () => {
    const store = memoryWebhookStore();
    return { store, connections: async (count) => Array.from({ length: count }, () => store), close: async () => undefined };
  });
});

describe('sqliteWebhookStore', () => {
  const dir = mkdtempSync(join(tmpdir(), 'payment-sdk-sqlite-store-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  contract(async () => {
    const path = join(dir, 'webhooks.db');
    const table = uniqueName('contract');
    const opened = [sqliteWebhookStore({ path, table })];
    return {
      store: opened[0] as WebhookStore,
      connections: async (count) => {
        const more = Array.from({ length: count }, () => sqliteWebhookStore({ path, table }));
        opened.push(...more);
        return more;
      },
      close: async () => {
        for (const store of opened) store.close();
      },
    };
  });

  it('gives each key to exactly one of several processes sharing the file', async () => {
    const path = join(dir, 'processes.db');
    const keys = 151; // a prime: every multiplier below it gives each process its own order of all the keys
    const processes = 4;
    // Each process claims every key, in its own order, and completes the ones it wins.
    const script = `
      import { createInterface } from 'node:readline';
      import { sqliteWebhookStore } from ${JSON.stringify(new URL('../dist/stores/sqlite.mjs', import.meta.url).href)};
      const [path, count, seed] = process.argv.slice(1).map((value, index) => (index === 0 ? value : Number(value)));
      const store = sqliteWebhookStore({ path, table: 'processes' });
      const order = Array.from({ length: count }, (_, index) => 'key-' + ((index * (2 * seed + 1)) % count));
      console.log('ready');
      for await (const _ of createInterface({ input: process.stdin })) break;
      const won = [];
      for (const key of order) {
        const claim = await store.claim(key, 60000);
        if (claim.status === 'claimed') {
          won.push(key);
          await store.complete(key, claim.token);
        }
      }
      console.log(JSON.stringify(won));
      store.close();
    `;
    const children = Array.from({ length: processes }, (_, index) =>
      spawn(process.execPath, ['--input-type=module', '-e', script, path, String(keys), String(index)], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        stdio: ['pipe', 'pipe', 'inherit'],
        timeout: 60_000,
      }),
    );
    try {
      const lines = children.map((child) => createInterface({ input: child.stdout })[Symbol.asyncIterator]());
      const next = async (index: number) => {
        const { value, done } = await (lines[index] as AsyncIterator<string>).next();
        if (done) throw new Error(`process ${index} exited before printing`);
        return value as string;
      };
      expect(await Promise.all(children.map((_, index) => next(index)))).toEqual(Array(processes).fill('ready'));
      for (const child of children) child.stdin.end('go\n');
      const won = (await Promise.all(children.map((_, index) => next(index)))).map((line) => JSON.parse(line) as string[]);
      const all = won.flat();
      expect(all).toHaveLength(keys);
      expect(new Set(all).size).toBe(keys);
      const store = sqliteWebhookStore({ path, table: 'processes' });
      const after = await Promise.all(Array.from({ length: keys }, (_, index) => store.claim(`key-${index}`, LONG)));
      store.close();
      expect(after.every((claim) => claim.status === 'done')).toBe(true);
    } finally {
      for (const child of children) child.kill();
    }
  }, 60_000);

  it("makes the database file's missing folder, owner-only, for a relative path as in a fresh checkout", async () => {
    // `data/webhooks.db` from an app folder without `data/` (a child process: workers cannot chdir).
    const app = join(dir, 'fresh-app');
    mkdirSync(app);
    const script = `
      import { sqliteWebhookStore } from ${JSON.stringify(new URL('../dist/stores/sqlite.mjs', import.meta.url).href)};
      const store = sqliteWebhookStore({ path: 'data/webhooks.db' });
      console.log((await store.claim('key', 60000)).status);
      store.close();
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: app, timeout: 20_000 });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect({ code, output: output.trim() }).toEqual({ code: 0, output: 'claimed' });
    expect(statSync(join(app, 'data')).mode & 0o777).toBe(0o700);
    expect(statSync(join(app, 'data', 'webhooks.db')).isFile()).toBe(true);
    // Nested missing folders too, in this process.
    const nested = join(dir, 'a', 'b', 'webhooks.db');
    const store = sqliteWebhookStore({ path: nested });
    expect((await store.claim('key', LONG)).status).toBe('claimed');
    store.close();
    expect(statSync(join(dir, 'a', 'b')).mode & 0o777).toBe(0o700);
  });

  it('refuses a file it cannot make or open with a ConfigurationError naming the path and why', () => {
    const aFile = join(dir, 'not-a-folder');
    writeFileSync(aFile, 'text');
    const notDatabase = join(dir, 'not-a-database.db');
    writeFileSync(notDatabase, 'this is not a SQLite database, only long enough to have a header of sorts'.repeat(20));
    const cases = [
      { path: join(aFile, 'webhooks.db'), why: new RegExp(`${aFile} is a file, not a folder`) },
      { path: join(aFile, 'sub', 'webhooks.db'), why: /ENOTDIR|not a directory/ },
      { path: dir, why: /unable to open database file/ }, // a folder, not a file
      { path: notDatabase, why: /not a database/ },
    ];
    for (const { path, why } of cases) {
      let thrown: unknown;
      try {
        sqliteWebhookStore({ path }).close();
      } catch (error) {
        thrown = error;
      }
      expect(thrown, path).toBeInstanceOf(ConfigurationError);
      expect(thrown).toMatchObject({ option: 'path', message: expect.stringContaining(path) });
      expect((thrown as Error).message).toMatch(why);
      expect((thrown as Error).cause).toBeInstanceOf(Error);
    }
  });

  it('refuses a malformed path, table or busy timeout', () => {
    expect(() => sqliteWebhookStore({ path: '' })).toThrow(expect.objectContaining({ option: 'path' }));
    expect(() => sqliteWebhookStore({ path: join(dir, 'x.db'), table: 'x; DROP TABLE y' })).toThrow(ConfigurationError);
    expect(() => sqliteWebhookStore({ path: join(dir, 'x.db'), busyTimeoutMs: -1 })).toThrow(
      expect.objectContaining({ option: 'busyTimeoutMs' }),
    );
  });
});

describeWithServer('postgresWebhookStore', postgresUrl, (url) => {
  const pools: pg.Pool[] = [];
  const table = uniqueName('contract');
  const pool = () => {
    const created = new pg.Pool({ connectionString: url, max: CONNECTIONS });
    pools.push(created);
    return created;
  };

  afterAll(async () => {
    await pools[0]?.query(`DROP TABLE IF EXISTS ${table}`);
    await Promise.all(pools.map((item) => item.end()));
  });

  contract(async () => {
    const shared = pool();
    const store = postgresWebhookStore(shared, { table, createTable: true });
    return {
      store,
      // One pool of CONNECTIONS connections: the claims run at once on separate server sessions.
      connections: async (count) => Array.from({ length: count }, () => postgresWebhookStore(shared, { table })),
      close: async () => undefined,
    };
  });

  it('works on a single pg Client and in a schema, from the shipped migration', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const schema = uniqueName('schema');
    try {
      await client.query(`CREATE SCHEMA ${schema}`);
      await client.query(postgresWebhookStoreMigration(`${schema}.events`));
      const store = postgresWebhookStore(client, { table: `${schema}.events` });
      const token = claimed(await store.claim('k', LONG));
      expect((await store.claim('k', LONG)).status).toBe('busy');
      await store.complete('k', token);
      expect(await store.claim('k', LONG)).toEqual({ status: 'done' });
      const { rows } = await client.query(`SELECT key, done_at IS NOT NULL AS done FROM ${schema}.events`);
      expect(rows).toEqual([{ key: 'k', done: true }]);
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  });

  it('creates its table once when several stores start at once', async () => {
    const shared = pool();
    const fresh = uniqueName('created');
    try {
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, index) => postgresWebhookStore(shared, { table: fresh, createTable: true }).claim(`k${index}`, LONG)),
      );
      expect(claims.map((claim) => claim.status)).toEqual(Array(8).fill('claimed'));
    } finally {
      await shared.query(`DROP TABLE IF EXISTS ${fresh}`);
    }
  });

  it('refuses a malformed pool or table, and without createTable reports the missing table', async () => {
    expect(() => postgresWebhookStore({} as PostgresQueryable)).toThrow(expect.objectContaining({ option: 'pool' }));
    expect(() => postgresWebhookStore(pool(), { table: 'a.b.c' })).toThrow(expect.objectContaining({ option: 'table' }));
    await expect(postgresWebhookStore(pool(), { table: uniqueName('absent') }).claim('k', LONG)).rejects.toThrow(/does not exist/);
  });
});

describeWithServer('redisWebhookStore', redisUrl, (url) => {
  const clients: { quit(): Promise<unknown> }[] = [];
  const prefix = `${uniqueName('contract')}:`;
  const connect = async () => {
    const client = await createClient({ url }).connect();
    clients.push(client);
    return client;
  };

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
  });

  contract(async () => {
    const store = redisWebhookStore(await connect(), { prefix });
    return {
      store,
      connections: async (count) => Promise.all(Array.from({ length: count }, async () => redisWebhookStore(await connect(), { prefix }))),
      close: async () => undefined,
    };
  });

  it('keys its entries under the prefix, and lets done marks expire with doneTtlMs', async () => {
    const client = await connect();
    const store = redisWebhookStore(client, { prefix, doneTtlMs: 60_000 });
    const token = claimed(await store.claim('ttl', LONG));
    expect(await client.get(`${prefix}ttl`)).toBe(token);
    await store.complete('ttl', token);
    expect(await client.get(`${prefix}ttl`)).toBe('done');
    expect(await client.pTTL(`${prefix}ttl`)).toBeGreaterThan(0);
  });

  it('refuses a malformed client or option', () => {
    expect(() => redisWebhookStore({} as RedisEvaluator)).toThrow(expect.objectContaining({ option: 'client' }));
    expect(() => redisWebhookStore({ eval: async () => null }, { doneTtlMs: 0 })).toThrow(expect.objectContaining({ option: 'doneTtlMs' }));
  });
});

describe('test/support/services', () => {
  it('skips with a warning when a server is absent, and throws under REQUIRE_SERVICES=1', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      vi.stubEnv('PAYMENT_SDK_TEST_POSTGRES_URL', '');
      vi.stubEnv('PAYMENT_SDK_TEST_REDIS_URL', 'redis://127.0.0.1:6399');
      vi.stubEnv('REQUIRE_SERVICES', '');
      expect(postgresUrl()).toBeUndefined();
      expect(warn).toHaveBeenCalledWith(expect.stringMatching(/PostgreSQL tests skipped.*scripts\/services\.sh start/));
      expect(redisUrl()).toBe('redis://127.0.0.1:6399');
      vi.stubEnv('REQUIRE_SERVICES', '1');
      expect(() => postgresUrl()).toThrow(/PAYMENT_SDK_TEST_POSTGRES_URL is not set.*REQUIRE_SERVICES is set/);
    } finally {
      vi.unstubAllEnvs();
      warn.mockRestore();
    }
  });
});

it('accepts the clients of pg and node-redis as they are typed', () => {
  expectTypeOf<pg.Pool>().toExtend<PostgresQueryable>();
  expectTypeOf<pg.Client>().toExtend<PostgresQueryable>();
  expectTypeOf<pg.PoolClient>().toExtend<PostgresQueryable>();
  expectTypeOf<ReturnType<typeof createClient>>().toExtend<RedisEvaluator>();
});
