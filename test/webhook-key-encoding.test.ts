/**
 * Event keys every store can hold: a NUL, a lone surrogate or the escape's own opener in an
 * event's reference never makes a store fail, and never merges two events into one key, whatever
 * the store (memory, SQLite, PostgreSQL, Redis; the last two against the servers of
 * `scripts/services.sh`, skipped with a warning when absent, failing under REQUIRE_SERVICES=1).
 * Ordinary keys are stored exactly as before, so stored keys of existing users still match.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as fc from 'fast-check';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { escapeKey, storedKey } from '../src/helpers/webhook-key.js';
import { createWebhookHandler, memoryWebhookStore, parseWebhook, type WebhookStore, webhookEventKey } from '../src/index.js';
import { postgresWebhookStore } from '../src/stores/postgres.js';
import { redisWebhookStore } from '../src/stores/redis.js';
import { sqliteWebhookStore } from '../src/stores/sqlite.js';
import { postgresUrl, redisUrl, uniqueName } from './support/services.js';

/** Reads an escaped key back: the inverse of `escapeKey`, to prove that no two keys share one. */
function unescapeKey(escaped: string): string {
  return escaped.replace(/\\u\{([0-9a-f]+)\}/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

const storable = (key: string) => key.isWellFormed() && !key.includes('\0');

const authorisation = (paymentReference: string) => ({
  event_code: 'AUTHORISATION',
  data: { paymentReference, paymentStatus: 'AUTHORISED', amount: 1050, currency: 'EUR' },
});
const keyOf = (paymentReference: string) => storedKey(webhookEventKey(parseWebhook(authorisation(paymentReference))));

/** Code units that escaping must get right, mixed with ordinary text. */
const tricky = fc.constantFrom('\0', '\ud800', '\udbff', '\udc00', '\udfff', '\ufffd', '\\', 'u', '{', '}', '5', 'c', '0', 'a', 'é', '😀');
const trickyString = (maxLength: number) => fc.string({ unit: fc.oneof(tricky, fc.string({ unit: 'binary', maxLength: 1 })), maxLength });

describe('storedKey: one injective encoding every store can hold', () => {
  it('keeps ordinary keys byte for byte, short and long (hashed as before)', async () => {
    const ordinary = [
      'AUTHORISATION:SHOP1-PXTT-42:AUTHORISED',
      'REFUND:SHOP1-RFXT-7:success',
      `AUTHORISATION:SHOP1-PXTT-1:AUTHORISED:é✓ "q'uote" 😀`,
      webhookEventKey(parseWebhook({ event_code: 'CHARGEBACK', data: { note: 'a "quoted"\n\\ path', nested: { b: 1, a: [2] } } })),
    ];
    for (const key of ordinary) expect(await storedKey(key)).toBe(key);
    const long = `CHARGEBACK:${'x'.repeat(600)}é😀`;
    expect(await storedKey(long)).toBe(`sha256:${createHash('sha256').update(long).digest('hex')}`);
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 80 }), async (key) => {
        fc.pre(!key.includes('\0') && !key.includes('\\u{'));
        expect(await storedKey(key)).toBe(key);
      }),
    );
  });

  it("tells the issue's pairs apart, short and long", async () => {
    const pairs = [
      ['SUR-\ud800', 'SUR-\udc00'],
      ['\ud800', '\ufffd'],
      ['NUL-\0', 'NUL-'],
      ['NUL-\0', 'NUL-\\u{0}'],
    ];
    for (const [a, b] of pairs) {
      expect(await keyOf(a as string)).not.toBe(await keyOf(b as string));
      const pad = 'P'.repeat(520);
      expect(await keyOf(`${pad}${a}`)).not.toBe(await keyOf(`${pad}${b}`));
    }
    expect(await keyOf('A-\0-\ud800')).toBe('AUTHORISATION:A-\\u{0}-\\u{d800}:AUTHORISED');
    expect(escapeKey('a\\u{b')).toBe('a\\u{5c}u{b');
  });

  it('escapes any key into a storable one that reads back to it', () => {
    fc.assert(
      fc.property(trickyString(60), (key) => {
        const escaped = escapeKey(key);
        expect(storable(escaped)).toBe(true);
        expect(unescapeKey(escaped)).toBe(key);
      }),
      { numRuns: 500 },
    );
  });

  it('gives distinct events distinct stored keys, lone surrogates and NULs included, short and long', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          fc.tuple(fc.boolean(), trickyString(12)).map(([long, text]) => (long ? 'L'.repeat(510) : '') + text || 'x'),
          {
            minLength: 2,
            maxLength: 20,
          },
        ),
        async (references) => {
          const keys = await Promise.all(references.map(keyOf));
          expect(new Set(keys).size).toBe(references.length);
          for (const key of keys) expect(storable(key) && key.length <= 500).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** `describe` for a store that needs a server: skipped with a warning when absent, failing under REQUIRE_SERVICES=1. */
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

/** Deliveries through `createWebhookHandler` with `store`: each event runs once, and none is lost or merged. */
function deliversEveryEvent(open: () => Promise<WebhookStore>): void {
  const delivery = (body: unknown) =>
    new Request('http://127.0.0.1/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  async function deliverTwice(references: string[]): Promise<{ ran: string[]; statuses: number[] }> {
    const ran: string[] = [];
    const handler = createWebhookHandler({
      store: await open(),
      onAuthorisation: (event) => {
        ran.push(event.data.paymentReference);
      },
    });
    const statuses: number[] = [];
    for (const round of [1, 2]) {
      for (const reference of references) {
        const response = await handler(delivery(authorisation(reference)));
        statuses.push(response.status);
        expect(await response.json()).toEqual(round === 1 ? { received: true } : { received: true, duplicate: true });
      }
    }
    return { ran, statuses };
  }

  it('claims and completes an event whose reference holds a NUL; its redelivery is a duplicate', async () => {
    const reference = `NUL-${uniqueName('r')}-\0-end`;
    const { ran, statuses } = await deliverTwice([reference]);
    expect(statuses).toEqual([200, 200]);
    expect(ran).toEqual([reference]);
  });

  it('refuses a raw key it cannot keep exactly with a TypeError, before reaching the data', async () => {
    const store = await open();
    for (const key of ['A-\0', 'A-\ud800', 'A-\udc00-\ud800']) {
      await expect(store.claim(key, 60_000)).rejects.toThrow(/well-formed Unicode without NUL/);
      await expect(store.complete(key, 'token')).rejects.toThrow(TypeError);
    }
    expect((await store.claim('A-\ud83d\ude00-é', 60_000)).status).toBe('claimed');
  });

  it('runs each of the events that lone surrogates and U+FFFD made one key, once', async () => {
    const id = uniqueName('r');
    const references = [`SUR-${id}-\ud800`, `SUR-${id}-\udc00`, `SUR-${id}-\ufffd`, `SUR-${id}-\\u{d800}`];
    const long = references.map((reference) => `${'L'.repeat(520)}${reference}`);
    const { ran } = await deliverTwice([...references, ...long]);
    expect(ran).toEqual([...references, ...long]);
  });
}

describe('memoryWebhookStore', () => {
  deliversEveryEvent(async () => memoryWebhookStore());
});

describe('sqliteWebhookStore', () => {
  const dir = mkdtempSync(join(tmpdir(), 'payment-sdk-key-encoding-'));
  const opened: { close(): void }[] = [];
  afterAll(() => {
    for (const store of opened) store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  deliversEveryEvent(async () => {
    const store = sqliteWebhookStore({ path: join(dir, 'webhooks.db'), table: uniqueName('keys') });
    opened.push(store);
    return store;
  });
});

describeWithServer('postgresWebhookStore', postgresUrl, (url) => {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const tables: string[] = [];
  afterAll(async () => {
    for (const table of tables) await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.end();
  });
  deliversEveryEvent(async () => {
    const table = uniqueName('keys');
    tables.push(table);
    return postgresWebhookStore(pool, { table, createTable: true });
  });
});

describeWithServer('redisWebhookStore', redisUrl, (url) => {
  const clients: { quit(): Promise<unknown> }[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.quit()));
  });
  deliversEveryEvent(async () => {
    const client = await createClient({ url }).connect();
    clients.push(client);
    return redisWebhookStore(client, { prefix: `${uniqueName('keys')}:` });
  });
});
