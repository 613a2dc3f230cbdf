/**
 * The sandbox's SQLite store through `createSandbox({ dataDir })` and the CLI: state and scheduled
 * work across restarts, the one-time import of the JSON state of earlier versions, clear errors for
 * damaged files, keyset cursors under concurrent inserts, and `sandbox.records`. Network: 127.0.0.1.
 */
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSqlite } from '../../src/core/sqlite.js';
import { createSandbox, manualClock, type Sandbox, SandboxStoreError } from '../../src/sandbox/index.js';
import { SandboxStore, STATEMENT_CACHE_SIZE } from '../../src/sandbox/store.js';
import { buildOnce, killAll, run } from './cli-process.js';
import { clientFor, openPage, paidSession, type Receiver, raw, sessionParams, startReceiver, submitForm } from './support.js';

/** Undoes what schema version 6 added (deliveries' `held`, jobs' `claimed`), for the tests of older databases. */
const UNDO_VERSION_6 = `DROP INDEX deliveries_held; ALTER TABLE deliveries DROP COLUMN held;
  DROP INDEX jobs_unclaimed; ALTER TABLE jobs DROP COLUMN claimed;`;

const START = Date.UTC(2026, 0, 1);
const EUR = (value: number) => ({ value, currency: 'EUR' as const });

const dirs: string[] = [];
const opened: Sandbox[] = [];
const receivers: Receiver[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-store-'));
  dirs.push(dir);
  return dir;
}
async function open(options: Parameters<typeof createSandbox>[0]) {
  const sandbox = createSandbox({ posDelayMs: 0, ...options });
  opened.push(sandbox);
  await sandbox.listen();
  return { sandbox, test: clientFor(sandbox, 'test'), live: clientFor(sandbox, 'live') };
}

beforeAll(buildOnce, 60_000);
afterAll(async () => {
  killAll();
  await Promise.all(opened.map((sandbox) => sandbox.close()));
  await Promise.all(receivers.map((receiver) => receiver.close()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('store: state across restarts (createSandbox with dataDir)', () => {
  it('keeps records, idempotent responses and counters; new ids and payment links never repeat old ones', async () => {
    const dir = tempDir();
    const first = await open({ dataDir: dir });
    expect(first.sandbox.location).toBe(join(dir, 'sandbox.db'));
    const keyed = await first.test.sessions.create({ ...sessionParams }, { idempotencyKey: 'kept-key' });
    const paid = await paidSession(first.test);
    const pos = await first.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1000) });
    const refund = await first.test.modifications.refund({ paymentReference: paid.paymentReference, amount: EUR(100) });
    const live = await first.live.sessions.create({ ...sessionParams });
    await first.sandbox.close();

    const second = await open({ dataDir: dir });
    // The SDK keys every write: five entries, the one sent with an explicit key among them.
    expect(second.sandbox.records.counts()).toMatchObject({ sessions: 3, posPayments: 1, modifications: 1, idempotency: 5 });
    expect(second.sandbox.records.idempotency().map((entry) => entry.key)).toContain('kept-key');
    expect(await second.test.sessions.retrieve(paid.sessionId)).toMatchObject({
      status: 'completed',
      paymentReference: paid.paymentReference,
    });
    expect((await second.test.pos.list().toArray()).map((item) => item.posPaymentId)).toEqual([pos.posPaymentId]);
    expect(await second.live.sessions.retrieve(live.sessionId)).toMatchObject({ status: 'pending' });
    const replay = await raw(second.sandbox, 'POST', '/payment/session', { body: { ...sessionParams }, idempotencyKey: 'kept-key' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.sessionId).toBe(keyed.sessionId);

    const fresh = await second.test.sessions.create({ ...sessionParams });
    expect([keyed.sessionId, paid.sessionId]).not.toContain(fresh.sessionId);
    expect(new URL(fresh.paymentUrl).pathname).not.toBe(new URL(keyed.paymentUrl).pathname);
    const another = await second.test.modifications.refund({ paymentReference: paid.paymentReference, amount: EUR(100) });
    expect(Number(another.refundReference.split('-').pop())).toBeGreaterThan(Number(refund.refundReference.split('-').pop()));
  });

  it('resumes scheduled work after a restart: late POS completion, modification resolution, expiry, webhook retries', async () => {
    const dir = tempDir();
    const hook = await startReceiver({ failFirst: 1 });
    receivers.push(hook);
    const options = { dataDir: dir, posTimeoutResolveMs: 5_000, webhookUrls: [hook.url] };
    const first = await open({ ...options, clock: manualClock(START) });
    const late = await first.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(4599) }, { recover: false });
    expect(late.status).toBe('timeout');
    const paid = await paidSession(first.test);
    await first.sandbox.webhooksSettled();
    const refund = await first.test.modifications.refund({ paymentReference: paid.paymentReference });
    const opening = await first.test.sessions.create({ ...sessionParams });
    await openPage(opening.paymentUrl);
    // The session's AUTHORISATION webhook failed once; its retry is due in 1 s.
    expect(first.sandbox.records.deliveries()[0]?.attempts.map((attempt) => attempt.status)).toEqual([500]);
    await first.sandbox.close();

    // The same instant on a new clock: nothing is due yet.
    const clock = manualClock(START);
    const second = await open({ ...options, clock });
    expect(second.sandbox.records.posPayment(late.posPaymentId)?.status).toBe('timeout');
    expect(second.sandbox.records.modifications()[0]?.status).toBe('pending');
    await clock.advance(1_000);
    await second.sandbox.webhooksSettled();
    expect(second.sandbox.records.deliveries()[0]).toMatchObject({ delivered: true });
    expect(second.sandbox.records.modifications()[0]).toMatchObject({ operationReference: refund.refundReference, status: 'success' });
    await clock.advance(4_000);
    await second.sandbox.webhooksSettled();
    expect(second.sandbox.records.posPayment(late.posPaymentId)?.status).toBe('success');
    expect((await second.test.sessions.retrieve(opening.sessionId)).status).toBe('pending');
    await clock.advance(295_000);
    expect((await second.test.sessions.retrieve(opening.sessionId)).status).toBe('expired');
    const events = hook.accepted().map((item) => `${item.json.event_code} ${item.json.data.paymentReference}`);
    expect(events).toEqual(
      expect.arrayContaining([
        `AUTHORISATION ${paid.paymentReference}`,
        `REFUND ${paid.paymentReference}`,
        `AUTHORISATION ${late.posPaymentId}`,
      ]),
    );
  });

  it('a page whose time ran out while the sandbox was stopped ended at its deadline, not when the sandbox noticed', async () => {
    const dir = tempDir();
    const opening = Date.UTC(2026, 0, 1, 12, 8, 1);
    const first = await open({ dataDir: dir, clock: manualClock(opening) });
    const session = await first.test.sessions.create({ ...sessionParams });
    await openPage(session.paymentUrl);
    await first.sandbox.close();
    // Started again 20 minutes later: the expiry job runs at 12:28:01.
    const second = await open({ dataDir: dir, clock: manualClock(opening + 20 * 60_000) });
    expect((await second.test.sessions.retrieve(session.sessionId)).status).toBe('expired');
    expect(second.sandbox.records.session(session.sessionId)?.endedAt).toBe(Date.UTC(2026, 0, 1, 12, 13, 1));
  });

  it('answers a keyed POS payment whose terminal answer a crash left pending from its stored job, once', async () => {
    const dir = tempDir();
    const clock = manualClock(START);
    const first = await open({ dataDir: dir, clock, posDelayMs: 2_000 });
    const request = raw(first.sandbox, 'POST', '/pos/payment', {
      body: { poiId: 'V400m-TEST-000001', amount: EUR(1000) },
      idempotencyKey: 'pos-key',
    });
    for (let index = 0; index < 2_000 && first.sandbox.records.counts().posPayments === 0; index++)
      await new Promise((done) => setImmediate(done));
    expect(first.sandbox.records.posPayments()[0]?.status).toBe('pending');
    expect(first.sandbox.records.idempotency()[0]).toMatchObject({ key: 'pos-key', status: null, response: null });
    // The process goes away before the terminal answers: its timer never fires.
    await first.sandbox.close();
    await request.catch(() => undefined);

    const second = await open({ dataDir: dir, clock: manualClock(START + 5_000) });
    const replay = await raw(second.sandbox, 'POST', '/pos/payment', {
      body: { poiId: 'V400m-TEST-000001', amount: EUR(1000) },
      idempotencyKey: 'pos-key',
    });
    expect(replay.status).toBe(200);
    expect(replay.body.data.status).toBe('success');
    expect(second.sandbox.records.posPayments().map((payment) => payment.posPaymentId)).toEqual([replay.body.data.posPaymentId]);
  });
});

describe('store: the JSON state of earlier versions', () => {
  const legacy = {
    sessions: [
      {
        environment: 'test',
        sessionId: 'SANDBOX-EXTT-1767225600000',
        token: 'a'.repeat(32),
        status: 'failed',
        amount: EUR(2599),
        countryCode: 'ES',
        shopperLocale: 'es-ES',
        deliverAt: null,
        description: 'Order 1',
        customReference: 'legacy-1',
        isPreAuth: false,
        urlOk: 'https://shop.example/ok',
        urlKo: 'https://shop.example/ko',
        createdAt: START,
        openedAt: START,
        completedAt: null,
        paymentReference: null,
        paymentStatus: null,
        attempts: [{ paymentReference: null, status: 'refused', reason: 'declined, generic', createdAt: START }],
      },
    ],
    posPayments: [],
    modifications: [],
    idempotency: {
      test: {
        'legacy-key': {
          endpoint: 'createSession',
          // The JSON store kept the body in canonical form: keys sorted at every level.
          body: '{"amount":{"currency":"EUR","value":2599},"customReference":"legacy-1","webcode":"SANDBOX"}',
          status: 201,
          response: JSON.stringify({ success: true, data: { sessionId: 'SANDBOX-EXTT-1767225600000' } }),
        },
      },
      live: {},
    },
    deliveries: [],
    counters: { reference: 1500, lastTimestamp: START, delivery: 0 },
  };

  it('imports sandbox-state.json once, leaves the file as it was and removes temp files of killed runs', async () => {
    const dir = tempDir();
    const text = JSON.stringify(legacy);
    writeFileSync(join(dir, 'sandbox-state.json'), text);
    writeFileSync(join(dir, 'sandbox-state.json.4242.7.tmp'), '{"half":');
    const first = await open({ dataDir: dir });
    expect(first.sandbox.records.sessions()).toEqual([
      expect.objectContaining({ sessionId: legacy.sessions[0]?.sessionId, customReference: 'legacy-1', status: 'failed' }),
    ]);
    // It ended with its last attempt; no control paid it.
    expect(first.sandbox.records.session('SANDBOX-EXTT-1767225600000')).toMatchObject({ endedAt: START, controlPayment: null });
    // The attempt gets a string reference, as every attempt now has.
    expect((await first.test.sessions.retrieve('SANDBOX-EXTT-1767225600000')).attempts?.[0]?.paymentReference).toEqual(expect.any(String));
    const replay = await raw(first.sandbox, 'POST', '/payment/session', {
      body: { amount: EUR(2599), customReference: 'legacy-1' },
      idempotencyKey: 'legacy-key',
    });
    expect(replay.body.data.sessionId).toBe('SANDBOX-EXTT-1767225600000');
    // Counters go on from the imported ones.
    const paid = await paidSession(first.test);
    expect(Number(paid.paymentReference.split('-').pop())).toBeGreaterThan(1500);
    await first.sandbox.close();
    expect(readFileSync(join(dir, 'sandbox-state.json'), 'utf8')).toBe(text);
    expect(readdirSync(dir).sort()).toEqual(['sandbox-state.json', 'sandbox.db']);

    // Imported once: a later change to the old file is not read again.
    writeFileSync(join(dir, 'sandbox-state.json'), '{ not json');
    const second = await open({ dataDir: dir });
    expect(second.sandbox.records.counts().sessions).toBe(2);
  });

  it('refuses a damaged state file with an error naming it and what to do', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'sandbox-state.json'), '{"sessions": [');
    const caught = (() => {
      try {
        createSandbox({ dataDir: dir });
      } catch (error) {
        return error;
      }
    })();
    expect(caught).toBeInstanceOf(SandboxStoreError);
    expect((caught as SandboxStoreError).path).toBe(join(dir, 'sandbox-state.json'));
    expect((caught as Error).message).toContain(join(dir, 'sandbox-state.json'));
    expect((caught as Error).message).toMatch(/move it aside/);
    // Nothing half-imported: the database holds no records.
    rmSync(join(dir, 'sandbox-state.json'));
    const sandbox = createSandbox({ dataDir: dir });
    opened.push(sandbox);
    expect(sandbox.records.counts().sessions).toBe(0);
  });

  it('treats an empty state file as an empty state', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'sandbox-state.json'), '');
    const { sandbox } = await open({ dataDir: dir });
    expect(sandbox.records.counts().sessions).toBe(0);
  });
});

describe('store: damaged or newer databases', () => {
  it('refuses a database whose damage start-up meets past the first page, naming the file and what to do', async () => {
    const dir = tempDir();
    const sandbox = createSandbox({ dataDir: dir });
    for (let index = 0; index < 2_000; index++) {
      const response = await sandbox.handle(
        new Request(`${sandbox.baseUrl}/external/v1/test/payment/session`, {
          method: 'POST',
          headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json', 'idempotency-key': `key-${index}` },
          body: JSON.stringify({ webcode: sandbox.webcode, ...sessionParams }),
        }),
      );
      expect(response.status).toBe(201);
    }
    await sandbox.close();
    // The index start-up walks to drop old idempotency entries: every one of its pages overwritten.
    const file = join(dir, 'sandbox.db');
    const { DatabaseSync } = loadSqlite();
    const db = new DatabaseSync(file);
    const pageSize = Number(db.prepare('PRAGMA page_size').get()?.page_size);
    const pages = db
      .prepare("SELECT pageno FROM dbstat WHERE name = 'idempotency_by_age'")
      .all()
      .map((row) => Number(row.pageno));
    db.close();
    expect(Math.min(...pages)).toBeGreaterThan(1);
    const handle = openSync(file, 'r+');
    for (const page of pages) writeSync(handle, Buffer.alloc(16, 0xff), 0, 16, (page - 1) * pageSize);
    closeSync(handle);
    expect(() => createSandbox({ dataDir: dir })).toThrow(SandboxStoreError);
    expect(() => createSandbox({ dataDir: dir })).toThrow(
      `The sandbox database ${file} is damaged (database disk image is malformed): stop the sandbox, move the file aside (mv ${file} ${file}.broken) and start it again.`,
    );
  });

  it('refuses a file that is not a database, naming it and what to do', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'sandbox.db'), 'this is not a database, just some bytes that are long enough to be read'.repeat(20));
    expect(() => createSandbox({ dataDir: dir })).toThrow(SandboxStoreError);
    expect(() => createSandbox({ dataDir: dir })).toThrow(
      new RegExp(`${join(dir, 'sandbox.db').replaceAll('/', '\\/')} cannot be read .*move it aside`),
    );
  });

  it('refuses a database of a newer schema version', () => {
    const dir = tempDir();
    const { DatabaseSync } = loadSqlite();
    const db = new DatabaseSync(join(dir, 'sandbox.db'));
    db.exec('PRAGMA user_version = 99');
    db.close();
    expect(() => createSandbox({ dataDir: dir })).toThrow(/schema version 99, newer than this payment-service-sdk knows/);
  });

  it('migrates a database of an earlier schema version forward, keeping its records', async () => {
    const dir = tempDir();
    // A webhook URL nobody listens on: the delivery is recorded all the same.
    const first = await open({ dataDir: dir, webhookUrls: ['http://127.0.0.1:9/hook'], webhookRetry: { attempts: 1 } });
    const created = await first.test.sessions.create({ ...sessionParams });
    const paid = await paidSession(first.test);
    await first.sandbox.webhooksSettled();
    await first.sandbox.close();
    // Back to schema version 1: undo what versions 2 to 6 added.
    const { DatabaseSync } = loadSqlite();
    const db = new DatabaseSync(join(dir, 'sandbox.db'));
    db.exec(UNDO_VERSION_6);
    db.exec('DROP TABLE request_log; DROP TABLE fault_entries; DROP TABLE fault_subjects');
    db.exec('ALTER TABLE sessions DROP COLUMN ended_at');
    db.exec("UPDATE sessions SET record = json_remove(record, '$.endedAt', '$.controlPayment')");
    for (const table of ['sessions', 'pos_payments', 'modifications', 'deliveries']) db.exec(`DROP INDEX ${table}_by_environment`);
    db.exec('DROP INDEX deliveries_by_payment');
    db.exec('ALTER TABLE deliveries DROP COLUMN payment_reference');
    db.exec("DELETE FROM counters WHERE name = 'clockOffset'");
    db.exec('PRAGMA user_version = 1');
    db.close();

    const second = await open({ dataDir: dir });
    expect((await second.test.sessions.retrieve(created.sessionId)).sessionId).toBe(created.sessionId);
    await second.sandbox.close();
    const check = new DatabaseSync(join(dir, 'sandbox.db'));
    // Deliveries made before the column existed are found by their payment.
    expect(check.prepare('SELECT count(*) AS n FROM deliveries WHERE payment_reference = ?').get(paid.paymentReference)).toEqual({ n: 1 });
    // ... and are not held back (version 6).
    expect(check.prepare('SELECT count(*) AS n FROM deliveries WHERE held = 0').get()).toEqual({ n: 1 });
    check.close();
    const reopened = new DatabaseSync(join(dir, 'sandbox.db'));
    const indexes = reopened
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE '%_by_environment'")
      .all()
      .map((row) => row.name);
    expect((reopened.prepare('PRAGMA user_version').get() as { user_version: number }).user_version).toBeGreaterThanOrEqual(2);
    reopened.close();
    expect(indexes.sort()).toEqual([
      'deliveries_by_environment',
      'modifications_by_environment',
      'pos_payments_by_environment',
      'sessions_by_environment',
    ]);
  });

  it('migrates a version 3 database: its sessions get the end times their records show, and new ends are recorded', async () => {
    const dir = tempDir();
    const clock = manualClock(START);
    const first = await open({ dataDir: dir, clock });
    const ids: Record<string, string> = {};
    for (const name of ['completed', 'failed', 'expired', 'expiredNow', 'cancelled', 'pending', 'later']) {
      const session = await first.test.sessions.create({ ...sessionParams, customReference: name });
      ids[name] = session.sessionId;
      if (name === 'completed') await submitForm(session.paymentUrl);
      if (name === 'failed') await submitForm(session.paymentUrl, { holderName: 'DECLINED' });
      if (name === 'expired') await openPage(session.paymentUrl);
      if (name === 'expiredNow') await first.sandbox.expireSession('test', session.sessionId);
      if (name === 'cancelled') await submitForm(session.paymentUrl, { action: 'cancel' });
      await first.sandbox.advanceClock(10_000);
    }
    await first.sandbox.advanceClock(20 * 60_000);
    await first.sandbox.close();
    // Back to schema version 3: no end times, in the records or the column, no fault entries, no request log.
    const { DatabaseSync } = loadSqlite();
    const db = new DatabaseSync(join(dir, 'sandbox.db'));
    db.exec(UNDO_VERSION_6);
    db.exec('DROP TABLE request_log; DROP TABLE fault_entries; DROP TABLE fault_subjects');
    db.exec('ALTER TABLE sessions DROP COLUMN ended_at');
    db.exec("UPDATE sessions SET record = json_remove(record, '$.endedAt', '$.controlPayment')");
    db.exec('PRAGMA user_version = 3');
    db.close();

    const second = await open({ dataDir: dir, clock });
    const record = (name: string) => second.sandbox.records.session(ids[name] ?? '');
    expect(record('completed')).toMatchObject({ status: 'completed', endedAt: START, completedAt: START, controlPayment: null });
    expect(record('failed')).toMatchObject({ status: 'failed', endedAt: START + 10_000 });
    // Opened at START + 20 s: its page's deadline.
    expect(record('expired')).toMatchObject({ status: 'expired', endedAt: START + 20_000 + 300_000 });
    // Never opened, cancelled: the record does not say when.
    expect(record('expiredNow')).toMatchObject({ status: 'expired', endedAt: null });
    expect(record('cancelled')).toMatchObject({ status: 'cancelled', endedAt: null });
    expect(record('pending')).toMatchObject({ status: 'pending', endedAt: null, controlPayment: null });
    const cancelled = await fetch(`${second.sandbox.baseUrl}/test/sessions/${ids.cancelled}`).then((answer) => answer.text());
    expect(cancelled).toContain('<li><span class="muted">time not recorded</span>: cancelled</li>');
    // The migrated database records what happens next.
    const now = second.sandbox.control.clock().epochMs;
    await second.sandbox.paySession('test', ids.later ?? '', { holderName: 'Jane Tester' });
    expect(record('later')).toMatchObject({
      status: 'completed',
      endedAt: now,
      controlPayment: { from: 'control', holderName: 'Jane Tester' },
    });
    await second.sandbox.close();
    const check = new DatabaseSync(join(dir, 'sandbox.db'));
    expect(check.prepare('PRAGMA user_version').get()).toEqual({ user_version: 10 });
    expect(check.prepare('SELECT ended_at FROM sessions WHERE session_id = ?').get(ids.failed ?? '')).toEqual({ ended_at: START + 10_000 });
    check.close();
  });

  it('CLI: one line on stderr naming the database and what to do, exit 1, no ExperimentalWarning', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'sandbox.db'), 'garbage '.repeat(200));
    const started = run(['sandbox', '--port', '0', '--data-dir', dir]);
    expect((await started.exit).code).toBe(1);
    const lines = started.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(join(dir, 'sandbox.db'));
    expect(lines[0]).toMatch(/move it aside/);
    expect(started.stdout()).toBe('');
  });

  it('CLI: starts on an existing database without printing the ExperimentalWarning of node:sqlite', async () => {
    const dir = tempDir();
    const started = run(['sandbox', '--port', '0', '--data-dir', dir]);
    // A bound, not a measurement: a start took over 2 s on a loaded CI machine.
    for (let index = 0; index < 1_500 && !started.stderr().includes('Press Ctrl+C'); index++)
      await new Promise((done) => setTimeout(done, 20));
    expect(started.stderr()).toContain('Press Ctrl+C');
    started.child.kill('SIGTERM');
    expect((await started.exit).code).toBe(0);
    expect(started.stderr()).toContain(join(dir, 'sandbox.db'));
    expect(started.stderr()).not.toMatch(/ExperimentalWarning|experimental feature/);
    expect(existsSync(join(dir, 'sandbox.db'))).toBe(true);
  });
});

describe('store: keyset cursors', () => {
  it('walks every earlier session exactly once with take 37 while others are inserted, in both orders', async () => {
    const { sandbox, test } = await open({});
    for (let index = 0; index < 150; index++) await test.sessions.create({ ...sessionParams, customReference: `before-${index}` });
    const before = sandbox.records.sessions().map((session) => session.sessionId);
    for (const order of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      let inserting = true;
      const inserter = (async () => {
        for (let index = 0; inserting && index < 1_000; index++)
          await test.sessions.create({ ...sessionParams, customReference: `during-${order}-${index}` });
      })();
      let cursor: string | undefined;
      do {
        const page = await raw(sandbox, 'GET', '/payment/sessions', { query: { take: '37', order, ...(cursor ? { cursor } : {}) } });
        expect(page.status).toBe(200);
        seen.push(...page.body.data.payments.map((item: { sessionId: string }) => item.sessionId));
        cursor = page.body.data.meta.cursor ?? undefined;
        // Give the inserter room between pages.
        await new Promise((done) => setTimeout(done, 2));
      } while (cursor);
      inserting = false;
      await inserter;
      expect(new Set(seen).size).toBe(seen.length);
      const missing = before.filter((id) => !seen.includes(id));
      expect(missing).toEqual([]);
      expect(sandbox.records.counts().sessions).toBeGreaterThan(before.length);
    }
  });

  it('refuses a cursor that is not one it gave, or one of the other order', async () => {
    const { sandbox } = await open({});
    expect((await raw(sandbox, 'GET', '/payment/sessions', { query: { cursor: 'o40' } })).body.error).toMatchObject({ code: 12001 });
    expect((await raw(sandbox, 'GET', '/payment/sessions', { query: { cursor: 'a40', order: 'desc' } })).body.error).toMatchObject({
      code: 12001,
      message: 'cursor belongs to a listing in asc order',
    });
  });
});

describe('store: listing pages seek in cursor order', () => {
  // The query shape of a listing page: filters, then a seek past the cursor in either order.
  const listings: Array<[string, string[]]> = [
    ['sessions', ['environment']],
    ['sessions', ['environment', 'status']],
    ['pos_payments', ['environment']],
    ['pos_payments', ['environment', 'status']],
    ['modifications', ['environment']],
    ['modifications', ['environment', 'status']],
    ['modifications', ['environment', 'operation_type', 'status']],
    ['deliveries', ['environment']],
  ];

  it('uses an index for every filter a listing takes, with no sort step and no table scan', async () => {
    const dir = tempDir();
    const { sandbox, test } = await open({ dataDir: dir });
    await test.sessions.create({ ...sessionParams });
    await sandbox.close();
    const { DatabaseSync } = loadSqlite();
    const db = new DatabaseSync(join(dir, 'sandbox.db'));
    try {
      for (const [table, filters] of listings)
        for (const order of ['ASC', 'DESC']) {
          const where = filters.map((name) => `${name} = ?`).join(' AND ');
          const sql = `EXPLAIN QUERY PLAN SELECT seq, record FROM ${table} WHERE ${where} AND seq ${order === 'ASC' ? '>' : '<'} ? ORDER BY seq ${order} LIMIT ?`;
          const plan = db
            .prepare(sql)
            .all(...filters.map(() => 'x'), 1, 10)
            .map((row) => String(row.detail));
          expect(plan.join(' | '), `${table} by ${filters.join(', ')} ${order}`).toMatch(/USING (COVERING )?INDEX/);
          expect(plan.join(' | '), `${table} by ${filters.join(', ')} ${order}`).not.toMatch(/TEMP B-TREE|^SCAN \w+$/);
        }
    } finally {
      db.close();
    }
  });
});

describe('sandbox.records', () => {
  it('reads sessions, POS payments, modifications, deliveries and idempotency entries with filters', async () => {
    const hook = await startReceiver();
    receivers.push(hook);
    const { sandbox, test, live } = await open({ webhookUrls: [hook.url] });
    const paid = await paidSession(test);
    const pending = await test.sessions.create({ ...sessionParams }, { idempotencyKey: 'records-key' });
    await live.sessions.create({ ...sessionParams });
    const declined = await test.sessions.create({ ...sessionParams });
    await submitForm(declined.paymentUrl, { holderName: 'DECLINED' });
    const pos = await test.pos.createPayment({ poiId: 'S1F2-TEST-000002', amount: EUR(777) });
    await test.modifications.refund({ paymentReference: paid.paymentReference, amount: EUR(10) });
    await sandbox.webhooksSettled();

    const { records } = sandbox;
    expect(records.sessions().map((session) => session.sessionId)).toHaveLength(4);
    expect(records.sessions({ environment: 'test' })).toHaveLength(3);
    expect(records.sessions({ environment: 'live' })).toHaveLength(1);
    expect(records.sessions({ status: 'completed' }).map((session) => session.sessionId)).toEqual([paid.sessionId]);
    expect(records.sessions({ environment: 'test', order: 'desc', limit: 1 }).map((session) => session.sessionId)).toEqual([
      declined.sessionId,
    ]);
    expect(records.session(pending.sessionId)).toMatchObject({ status: 'pending', openedAt: null, attempts: [] });
    expect(records.session(declined.sessionId)?.attempts).toEqual([
      {
        paymentReference: expect.stringMatching(/-PXTT-\d+$/),
        status: 'refused',
        reason: expect.any(String),
        createdAt: expect.any(Number),
      },
    ]);
    expect(records.session('nope')).toBeUndefined();
    expect(records.posPayments({ status: 'failed', poiId: 'S1F2-TEST-000002' }).map((payment) => payment.posPaymentId)).toEqual([
      pos.posPaymentId,
    ]);
    expect(records.posPayment(pos.posPaymentId)).toMatchObject({ status: 'failed', errorMessage: expect.any(String) });
    expect(records.modifications({ type: 'refund', paymentReference: paid.paymentReference })).toHaveLength(1);
    expect(records.modifications({ type: 'capture' })).toEqual([]);
    expect(
      records
        .deliveries({ status: 'delivered' })
        .map((delivery) => delivery.event.event_code)
        .sort(),
    ).toEqual(['AUTHORISATION', 'AUTHORISATION']);
    const [delivery] = records.deliveries({ url: hook.url });
    expect(delivery?.attempts[0]).toMatchObject({ status: 200, error: null, responseBody: 'ok', durationMs: expect.any(Number) });
    expect(records.idempotency({ environment: 'test' }).find((entry) => entry.key === 'records-key')).toMatchObject({
      endpoint: 'createSession',
      status: 201,
      bodyHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    // Every SDK write is keyed: five in Test (three sessions, a POS payment, a refund), one in Live.
    expect(records.idempotency({ environment: 'test' })).toHaveLength(5);
    expect(records.idempotency({ environment: 'live' })).toHaveLength(1);
    expect(records.counts()).toEqual({ sessions: 4, posPayments: 1, modifications: 1, deliveries: 2, idempotency: 6 });
  });
});

describe('scheduled work on a clock whose timers fire early', () => {
  it('re-arms a timer that fired before the clock showed its time: the refund resolves and its webhook goes out with no request', async () => {
    // Node's timers run on a monotonic clock and Date.now() on the wall clock: a timer may fire when
    // Date.now() is still a millisecond short of its time. This clock fires every timer 1 ms early.
    let now = START;
    let next = 0;
    const timers = new Map<number, { at: number; callback: () => void }>();
    const early = {
      now: () => now,
      setTimeout(callback: () => void, ms: number) {
        timers.set(++next, { at: now + Math.max(0, ms), callback });
        return { id: next };
      },
      clearTimeout(handle: { id: number }) {
        timers.delete(handle.id);
      },
    };
    /** Runs the timers due by `at`, the first of each time seeing the clock 1 ms before its time. */
    const fireUntil = async (at: number) => {
      for (;;) {
        const due = [...timers.entries()].filter(([, timer]) => timer.at <= at).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        // Early once; by the re-armed timer, time has moved on.
        now = now < due[1].at - 1 ? due[1].at - 1 : Math.max(now, due[1].at);
        due[1].callback();
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      now = Math.max(now, at);
    };
    const receiver = await startReceiver();
    receivers.push(receiver);
    const { sandbox, test } = await open({ clock: early, modificationResolveMs: 200, webhookUrls: [receiver.url] });
    const session = await test.sessions.create(sessionParams);
    const paid = await sandbox.paySession('test', session.sessionId);
    await receiver.waitFor(1);
    const refund = await test.modifications.refund({ paymentReference: paid.paymentReference ?? '' });

    await fireUntil(now + 200);
    await fireUntil(now + 1);
    await sandbox.webhooksSettled();
    expect(sandbox.records.modifications({ type: 'refund' })).toEqual([
      expect.objectContaining({ operationReference: refund.refundReference, status: 'success' }),
    ]);
    expect(receiver.accepted().map((item) => item.json.event_code)).toEqual(['AUTHORISATION', 'REFUND']);
  });
});

describe('store: bounded work and memory', () => {
  it('keeps at most STATEMENT_CACHE_SIZE prepared statements, the most recently used', () => {
    const store = new SandboxStore();
    try {
      const kept = store.statement('SELECT 1 AS n');
      // SQL texts that vary with their input: one per count of references, as a timeline asks.
      for (let count = 1; count <= 1_000; count++) {
        const references = Array.from({ length: count }, (_, index) => `R${index}`);
        expect(store.faultEntries.about('test', references)).toEqual([]);
        expect(store.statement('SELECT 1 AS n')).toBe(kept);
        expect(store.cachedStatements).toBeLessThanOrEqual(STATEMENT_CACHE_SIZE);
      }
      expect(store.cachedStatements).toBe(STATEMENT_CACHE_SIZE);
      // An evicted text is prepared again and still answers.
      expect(store.statement('SELECT 2 AS n').get()).toEqual({ n: 2 });
    } finally {
      store.close();
    }
  });

  it('claims each due job once, however many are under way; a claim ends with releaseJob or the next opening', () => {
    const dir = tempDir();
    const store = new SandboxStore(dir);
    for (let index = 0; index < 5; index++) store.jobs.add('kind', 100 + index, `S${index}`);
    store.jobs.add('kind', 500, 'later');
    expect(store.jobs.claimDue(50)).toEqual([]);
    const claimed = store.jobs.claimDue(200);
    expect(claimed.map((job) => job.subject)).toEqual(['S0', 'S1', 'S2', 'S3', 'S4']);
    expect(store.jobs.claimDue(1_000).map((job) => job.subject)).toEqual(['later']);
    expect(store.jobs.claimDue(1_000)).toEqual([]);
    expect(store.jobs.nextDue()).toBeUndefined();
    store.jobs.release(claimed[1]?.id ?? 0);
    expect(store.jobs.nextDue()).toBe(101);
    expect(store.jobs.claimDue(1_000).map((job) => job.subject)).toEqual(['S1']);
    store.close();
    // Claimed by a run that stopped: due again in the next.
    const reopened = new SandboxStore(dir);
    expect(reopened.jobs.nextDue()).toBe(100);
    expect(reopened.jobs.claimDue(1_000)).toHaveLength(6);
    reopened.close();
  });
});
