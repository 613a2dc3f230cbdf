/**
 * The sandbox's state in SQLite (`node:sqlite`): in memory by default, `DIR/sandbox.db` with a data
 * folder. Each record kind is a table whose indexed columns are what the listings filter and order
 * on (environment, status, creation time, `seq` as the cursor key); the record itself is a JSON
 * column, so that a new field needs no migration. Everything one request changes is committed in
 * one transaction (see {@link SandboxStore.transaction}). The tables that hold no records are in
 * `store-tables.ts`; the import of the JSON state of earlier versions in `store-legacy.ts`.
 */
import { type Database, loadSqlite, type Statement } from '../core/sqlite.js';
import { privateLogFile, removeLogFile } from './log-file.js';
import type { ModificationRecord, PosRecord, SandboxRecords, SessionRecord, WebhookDelivery } from './records.js';
import { importLegacyState, type LegacyState, parseLegacyState } from './store-legacy.js';
import { MIGRATIONS, requestLogTable, SESSION_ENDS, STAGED_REQUEST_LOG } from './store-schema.js';

export { STAGED_REQUEST_LOG } from './store-schema.js';

import { RecordTable } from './store-records.js';
import { FaultEntryTable, IdempotencyTable, JobTable, TerminalSettingsTable } from './store-tables.js';
import { Timestamps } from './store-timestamps.js';

export type { Job } from './store-tables.js';

/** The store could not be opened: the message names the file and what to do. */
export class SandboxStoreError extends Error {
  override readonly name = 'SandboxStoreError';
  /** The file at fault. */
  readonly path: string;

  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

/**
 * The store was closed (its tenant removed, or the sandbox stopped) and is touched again: nothing
 * more is read or written. A request of a removed tenant that gets this is answered 403, as for an
 * unknown key (see `steps/tenant.ts`).
 */
export class SandboxStoreClosedError extends Error {
  override readonly name = 'SandboxStoreClosedError';

  constructor(location: string) {
    super(`The sandbox database ${location} is closed`);
  }
}

/** The database file in a data folder. */
export const DATABASE_FILE = 'sandbox.db';
/** The JSON state file of earlier versions, imported once. */
export const LEGACY_STATE_FILE = 'sandbox-state.json';

/** The parts of `node:fs` the files of a data folder need. */
export interface NodeFs {
  mkdirSync(path: string, options: { recursive: true; mode?: number }): void;
  readFileSync(path: string, encoding: 'utf8'): string;
  writeFileSync(path: string, text: string, options: { mode: number }): void;
  renameSync(from: string, to: string): void;
  chmodSync(path: string, mode: number): void;
  existsSync(path: string): boolean;
  readdirSync(path: string): string[];
  rmSync(path: string, options: { force: true; recursive?: boolean }): void;
}

/** `node:fs`, which a data folder needs (memory-only sandboxes run where there is none). */
export function nodeFs(): NodeFs {
  const fs = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process?.getBuiltinModule?.('node:fs');
  if (!fs) throw new Error('dataDir needs Node.js 22.13 or later, Deno or Bun');
  return fs as NodeFs;
}

/** The database file of a data folder, and its legacy state file if any: the folder made (0700 and 0600 files with `ownerOnly`). */
function prepareFolder(dataDir: string, { ownerOnly = false }: { ownerOnly?: boolean }): { location: string; legacy: string | undefined } {
  const fs = nodeFs();
  const dir = dataDir.replace(/\/+$/, '') || '/';
  const location = `${dir}/${DATABASE_FILE}`;
  if (ownerOnly) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // `mode` applies only to what mkdir and writeFile create: a folder or files of an earlier version keep theirs.
    fs.chmodSync(dir, 0o700);
    for (const file of [location, `${location}-wal`, `${location}-shm`]) if (fs.existsSync(file)) fs.chmodSync(file, 0o600);
    // SQLite gives its -wal and -shm files the mode of the database: made 0600 before SQLite opens
    // it (an empty file is a new database), they are 0600 from the start, whatever the umask.
    if (!fs.existsSync(location)) fs.writeFileSync(location, '', { mode: 0o600 });
  } else {
    fs.mkdirSync(dir, { recursive: true });
  }
  // Leftovers of the JSON store's atomic writes, from runs that were killed.
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith(`${LEGACY_STATE_FILE}.`) && name.endsWith('.tmp')) fs.rmSync(`${dir}/${name}`, { force: true });
  }
  return { location, legacy: fs.existsSync(`${dir}/${LEGACY_STATE_FILE}`) ? `${dir}/${LEGACY_STATE_FILE}` : undefined };
}

/**
 * How many prepared statements a store keeps. Most SQL texts are fixed, but some vary with their
 * input (a list of references, a limit): an unbounded cache grew with each new text and was never
 * given back.
 */
export const STATEMENT_CACHE_SIZE = 128;

/** The sandbox's database. */
export class SandboxStore {
  readonly #db: Database;
  /** Prepared statements by SQL text, oldest first, each marked when used since it was last passed over. */
  readonly #statements = new Map<string, { statement: Statement; used: boolean }>();
  #depth = 0;
  #closed = false;
  /** Where the database lives: a file path, or `:memory:`. */
  readonly location: string;
  /** How many times this database was opened before, this time included (1 for a new one). */
  readonly runs: number;

  readonly sessions: RecordTable<SessionRecord>;
  readonly posPayments: RecordTable<PosRecord>;
  readonly modifications: RecordTable<ModificationRecord>;
  readonly deliveries: RecordTable<WebhookDelivery>;
  /** The answers kept for `Idempotency-Key` requests. */
  readonly idempotency = new IdempotencyTable(this);
  /** The scheduled work (webhook attempts, POS answers, session ends). */
  readonly jobs = new JobTable(this);
  /** Where fault rules struck. */
  readonly faultEntries = new FaultEntryTable(this);
  /** Each simulated terminal's own processing time; {@link clear} keeps them. */
  readonly terminals = new TerminalSettingsTable(this);

  /**
   * Opens `dataDir/sandbox.db` (created if absent), or an in-memory database without `dataDir`.
   * With `ownerOnly` (a made tenant's store, beside the keys of `tenants.json`) the folder is 0700
   * and the database and its `-wal` and `-shm` files 0600, also when an earlier version made them.
   */
  constructor(dataDir?: string, options: { ownerOnly?: boolean } = {}) {
    const { DatabaseSync } = loadSqlite();
    const { location, legacy } = dataDir === undefined ? { location: ':memory:', legacy: undefined } : prepareFolder(dataDir, options);
    this.location = location;
    const advice = `move it aside (mv ${this.location} ${this.location}.broken) and start again`;
    try {
      this.#db = new DatabaseSync(this.location, { timeout: 5_000 });
      if (dataDir !== undefined) {
        this.#db.exec('PRAGMA journal_mode = WAL');
        // WAL with NORMAL: a commit survives the process being killed; only a power cut may lose the last ones.
        this.#db.exec('PRAGMA synchronous = NORMAL');
      }
      // Reading the schema reads the file's header and first page: enough to refuse a file that is not
      // a database without scanning all of it (a full check costs ~150 ms per 100 MB on every start).
      this.#db.prepare('SELECT count(*) FROM sqlite_schema').get();
    } catch (error) {
      throw new SandboxStoreError(this.location, `The sandbox database ${this.location} cannot be read (${reason(error)}): ${advice}.`);
    }
    const version = this.#db.prepare('PRAGMA user_version').get()?.user_version as number;
    if (version > MIGRATIONS.length) {
      this.#db.close();
      throw new SandboxStoreError(
        this.location,
        `The sandbox database ${this.location} has schema version ${version}, newer than this payment-service-sdk knows (${MIGRATIONS.length}): use a newer version, or ${advice}.`,
      );
    }
    const tables = recordTables(this);
    this.sessions = tables.sessions;
    this.posPayments = tables.posPayments;
    this.modifications = tables.modifications;
    this.deliveries = tables.deliveries;
    try {
      this.transaction(() => {
        for (const [index, sql] of MIGRATIONS.entries()) if (index >= version) this.#db.exec(sql);
        this.#db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
        if (legacy && version === 0) {
          this.#importLegacy(legacy);
          this.#db.exec(SESSION_ENDS);
        }
      });
      this.#requestLogTables(dataDir === undefined);
      this.runs = this.#bump('runs');
      // A job claimed by the run before this one was under way when it stopped: it runs again.
      this.statement('UPDATE jobs SET claimed = 0 WHERE claimed <> 0').run();
    } catch (error) {
      this.#db.close();
      throw this.damage(error) ?? error;
    }
  }

  readonly #watchers = new Set<() => void>();
  /** Calls `watcher` after each transaction that changed something; returns the function that stops it. */
  watch(watcher: () => void): () => void {
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }

  #totalChanges(): number {
    return this.statement('SELECT total_changes() AS n').get()?.n as number;
  }

  /**
   * A prepared statement, prepared once per SQL text and kept while in use: past
   * {@link STATEMENT_CACHE_SIZE} texts, one not used since the last eviction is let go (a second
   * chance, so that a hit costs one lookup rather than moving the entry to the end).
   */
  statement(sql: string): Statement {
    // Rather than SQLite's "statement has been finalized" from a statement prepared before the close.
    if (this.#closed) throw new SandboxStoreClosedError(this.location);
    const cached = this.#statements.get(sql);
    if (cached) {
      cached.used = true;
      return cached.statement;
    }
    const statement = this.#db.prepare(sql);
    if (this.#statements.size >= STATEMENT_CACHE_SIZE) this.#evictOne();
    this.#statements.set(sql, { statement, used: false });
    return statement;
  }

  /** Lets go of the oldest statement not used since it was last passed over; those used go to the end, unmarked. */
  #evictOne(): void {
    for (const [sql, entry] of this.#statements) {
      this.#statements.delete(sql);
      if (!entry.used) return;
      entry.used = false;
      this.#statements.set(sql, entry);
    }
  }

  /** How many prepared statements the store keeps now, at most {@link STATEMENT_CACHE_SIZE}. */
  get cachedStatements(): number {
    return this.#statements.size;
  }

  /**
   * Runs `work` in one transaction: all that it writes commits together, or nothing does when it
   * throws. `work` is synchronous, so no other request interleaves. Nested calls join the outer one.
   */
  transaction<T>(work: () => T): T {
    if (this.#depth > 0) return work();
    // Changes are counted only while someone watches (the dashboard's live view): one query less otherwise.
    const before = this.#watchers.size > 0 ? this.#totalChanges() : 0;
    this.statement('BEGIN IMMEDIATE').run();
    this.#timestamps.begin();
    this.#depth++;
    try {
      const result = work();
      this.statement('COMMIT').run();
      if (this.#watchers.size > 0 && this.#totalChanges() !== before) for (const watcher of this.#watchers) watcher();
      return result;
    } catch (error) {
      // A rollback that fails too (a damaged file) must not hide the first error.
      this.#timestamps.rollback();
      try {
        this.statement('ROLLBACK').run();
      } catch {
        // the first error says more
      }
      throw error;
    } finally {
      this.#depth--;
    }
  }

  /** Sets counter `name` to `next(current)` and returns the new value. */
  #counter(name: string, next: (value: number) => number): number {
    const current = this.statement('SELECT value FROM counters WHERE name = ?').get(name)?.value as number;
    const value = next(current);
    this.statement('UPDATE counters SET value = ? WHERE name = ?').run(value, name);
    return value;
  }

  /** Counter `name` raised to `max(value + 1, floor)` in one statement; the new value. */
  #bump(name: string, floor = 0): number {
    return this.statement('UPDATE counters SET value = max(value + 1, ?) WHERE name = ? RETURNING value').get(floor, name)?.value as number;
  }

  /** The next `{number}` of numbered references. */
  nextReference(): number {
    return this.#bump('reference');
  }

  /** The id of a new webhook delivery. */
  nextDeliveryId(): number {
    return this.#bump('delivery');
  }

  /** Reserves the ids of `count` new webhook deliveries; returns the last (they are the `count` ids up to it). */
  reserveDeliveryIds(count: number): number {
    return this.statement("UPDATE counters SET value = value + ? WHERE name = 'delivery' RETURNING value").get(count)?.value as number;
  }

  /** A timestamp for an id: `now`, made unique and increasing. */
  nextTimestamp(now: number): number {
    return this.#timestamps.next(now);
  }

  readonly #timestamps = new Timestamps({
    read: () => this.counter('lastTimestamp'),
    write: (value) => this.setCounter('lastTimestamp', value),
  });

  /** The value of counter `name`. */
  counter(name: string): number {
    return this.statement('SELECT value FROM counters WHERE name = ?').get(name)?.value as number;
  }

  setCounter(name: string, value: number): void {
    this.statement('UPDATE counters SET value = ? WHERE name = ?').run(value, name);
  }

  /**
   * Deletes every record, stored response, scheduled job and request log entry, in the caller's
   * transaction. The counters stay, so that no id or payment link of before is ever given out again.
   */
  clear(): void {
    for (const table of [
      'sessions',
      'pos_payments',
      'modifications',
      'deliveries',
      'idempotency',
      'jobs',
      'fault_entries',
      'fault_subjects',
      'request_log',
      ...(this.requestLogStaged ? [STAGED_REQUEST_LOG] : []),
    ])
      this.statement(`DELETE FROM ${table}`).run();
  }

  /**
   * Whether the request log's entries are staged in memory ({@link STAGED_REQUEST_LOG}) and moved
   * to `request_log` in batches. A commit to a file costs several page writes (tens of
   * microseconds, more once the bound recycles pages): one per request cost the sandbox a fifth of
   * its creates per second.
   */
  get requestLogStaged(): boolean {
    return this.#requestLogStaged;
  }
  #requestLogStaged = false;

  /**
   * The request log's tables. Without a data folder (`inMemory`), its rows (10 000 a tenant by
   * default, a few KB each) would all sit in this process's memory: they go to a private file
   * instead (log-file.ts, removed while open), of which SQLite keeps a 1 MB cache in memory;
   * unqualified, `request_log` then names the file's table. The staging table is in an attached
   * in-memory database.
   */
  #requestLogTables(inMemory: boolean): void {
    const file = inMemory ? privateLogFile() : undefined;
    this.#logFile = file;
    try {
      if (inMemory) this.#db.exec(`ATTACH '${(file ?? '').replaceAll("'", "''")}' AS log`);
      this.#db.exec("ATTACH ':memory:' AS stage");
    } catch {
      if (file) removeLogFile(file);
      return; // a SQLite that attaches nothing (Deno's): the log stays in memory, written a row at a time
    }
    if (inMemory) {
      // Nothing to recover from it after a crash: no journal, no syncs. Its lock held for good (no
      // other connection opens it): otherwise every transaction of the store, which begins on every
      // attached database, took and released the file's locks and read its header again.
      this.#db.exec(
        'PRAGMA log.cache_size = -1024; PRAGMA log.journal_mode = OFF; PRAGMA log.synchronous = OFF; PRAGMA log.locking_mode = EXCLUSIVE; DROP TABLE main.request_log',
      );
      this.#db.exec(requestLogTable('log.request_log'));
      // Written and locked now: the open file outlives its name.
      if (file) removeLogFile(file);
    }
    this.#db.exec(requestLogTable(STAGED_REQUEST_LOG, true));
    this.#requestLogStaged = true;
  }

  /** The typed read methods of `sandbox.records`. */
  records(): SandboxRecords {
    return storeRecords(this);
  }

  /**
   * The error SQLite raised on a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB), restated with the
   * file's name and what to do; `undefined` for any other error.
   */
  damage(error: unknown): SandboxStoreError | undefined {
    if (!isDamage(error)) return undefined;
    return new SandboxStoreError(
      this.location,
      `The sandbox database ${this.location} is damaged (${reason(error)}): stop the sandbox, move the file aside (mv ${this.location} ${this.location}.broken) and start it again. \`payment-service-sdk sandbox --check --data-dir DIR\` verifies a file.`,
    );
  }

  /** Closes the database; what touches the store after that throws {@link SandboxStoreClosedError}. Once only. */
  close(): void {
    if (this.#closed) return;
    try {
      this.#timestamps.close();
    } catch {
      // A store that cannot be written keeps its reservation: the next run starts past it.
    }
    this.#closed = true;
    this.#db.close();
    // Gone already where an open file can be removed; elsewhere (Windows) now.
    if (this.#logFile) removeLogFile(this.#logFile);
  }

  /** The request log's private file without a data folder (see log-file.ts). */
  #logFile: string | undefined;

  get closed(): boolean {
    return this.#closed;
  }

  /** Copies the JSON state of earlier versions into the new tables; the file itself is left as it was. */
  #importLegacy(path: string): void {
    let state: LegacyState;
    try {
      state = parseLegacyState(nodeFs().readFileSync(path, 'utf8'));
    } catch (error) {
      throw new SandboxStoreError(
        path,
        `The sandbox state file ${path} cannot be imported (${reason(error)}): move it aside (mv ${path} ${path}.broken) and start again.`,
      );
    }
    importLegacyState(state, {
      sessions: this.sessions,
      posPayments: this.posPayments,
      modifications: this.modifications,
      deliveries: this.deliveries,
      idempotency: this.idempotency,
      raiseCounter: (name, value) => this.#counter(name, (current) => Math.max(current, value)),
      hash: hashText,
    });
  }
}

/** The tables of the four record kinds, with the columns their listings filter and order on. */
function recordTables(store: SandboxStore) {
  return {
    sessions: new RecordTable<SessionRecord>(store, 'sessions', { name: 'session_id', of: (record) => record.sessionId }, [
      { name: 'environment', of: (record) => record.environment },
      { name: 'status', of: (record) => record.status },
      { name: 'token', of: (record) => record.token },
      { name: 'payment_reference', of: (record) => record.paymentReference },
      { name: 'created_at', of: (record) => record.createdAt },
      { name: 'ended_at', of: (record) => record.endedAt },
    ]),
    posPayments: new RecordTable<PosRecord>(store, 'pos_payments', { name: 'pos_payment_id', of: (record) => record.posPaymentId }, [
      { name: 'environment', of: (record) => record.environment },
      { name: 'status', of: (record) => record.status },
      { name: 'poi_id', of: (record) => record.poiId },
      { name: 'created_at', of: (record) => record.createdAt },
    ]),
    modifications: new RecordTable<ModificationRecord>(
      store,
      'modifications',
      { name: 'operation_reference', of: (record) => record.operationReference },
      [
        { name: 'environment', of: (record) => record.environment },
        { name: 'status', of: (record) => record.status },
        { name: 'operation_type', of: (record) => record.operationType },
        { name: 'payment_reference', of: (record) => record.paymentReference },
        { name: 'session_id', of: (record) => record.sessionId },
        { name: 'created_at', of: (record) => record.createdAt },
      ],
    ),
    deliveries: new RecordTable<WebhookDelivery>(store, 'deliveries', { name: 'id', of: (record) => String(record.id) }, [
      { name: 'environment', of: (record) => record.environment },
      { name: 'status', of: (record) => deliveryStatus(record) },
      { name: 'url', of: (record) => record.url },
      { name: 'payment_reference', of: (record) => deliveryPaymentReference(record) },
      { name: 'created_at', of: (record) => record.createdAt },
      { name: 'held', of: (record) => (record.held ? 1 : 0) },
    ]),
  };
}

/** The typed read methods of `sandbox.records` over `store`. */
function storeRecords(store: SandboxStore): SandboxRecords {
  return {
    sessions: (filter = {}) => store.sessions.all({ environment: filter.environment, status: filter.status }, filter),
    session: (sessionId) => store.sessions.get(sessionId),
    posPayments: (filter = {}) =>
      store.posPayments.all({ environment: filter.environment, status: filter.status, poi_id: filter.poiId }, filter),
    posPayment: (posPaymentId) => store.posPayments.get(posPaymentId),
    modifications: (filter = {}) =>
      store.modifications.all(
        {
          environment: filter.environment,
          status: filter.status,
          operation_type: filter.type,
          payment_reference: filter.paymentReference,
        },
        filter,
      ),
    deliveries: (filter = {}) => store.deliveries.all({ environment: filter.environment, status: filter.status, url: filter.url }, filter),
    idempotency: (filter = {}) => store.idempotency.all(filter.environment),
    counts: () => ({
      sessions: store.sessions.count(),
      posPayments: store.posPayments.count(),
      modifications: store.modifications.count(),
      deliveries: store.deliveries.count(),
      idempotency: store.idempotency.count(),
    }),
  };
}

/** The payment a delivery's event is about, if it names one. */
function deliveryPaymentReference(delivery: WebhookDelivery): string | null {
  const reference = delivery.event.data.paymentReference;
  return typeof reference === 'string' ? reference : null;
}

/** `pending`, `delivered` or `abandoned`. */
export function deliveryStatus(delivery: WebhookDelivery): 'pending' | 'delivered' | 'abandoned' {
  return delivery.delivered ? 'delivered' : delivery.abandoned ? 'abandoned' : 'pending';
}

/** SQLite's primary result codes for a damaged file: SQLITE_CORRUPT and SQLITE_NOTADB. */
const DAMAGE_CODES = new Set([11, 26]);

function isDamage(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && DAMAGE_CODES.has(code & 0xff);
}

/** What `PRAGMA integrity_check` found in a store file: nothing when it is sound. */
export interface StoreCheck {
  /** The file checked, `DIR/sandbox.db`. */
  location: string;
  /** SQLite's findings, at most 20; empty when the whole file is sound. */
  problems: string[];
}

/**
 * Verifies every page of `dataDir/sandbox.db` (`PRAGMA integrity_check`), changing nothing; the
 * start-up of a sandbox reads only the first page. Throws {@link SandboxStoreError} when there is
 * no such file.
 */
export function checkStore(dataDir: string): StoreCheck {
  const location = `${dataDir.replace(/\/+$/, '') || '/'}/${DATABASE_FILE}`;
  if (!nodeFs().existsSync(location)) throw new SandboxStoreError(location, `No sandbox database at ${location}`);
  const { DatabaseSync } = loadSqlite();
  let db: Database | undefined;
  try {
    db = new DatabaseSync(location, { timeout: 5_000 });
    const rows = db.prepare('PRAGMA integrity_check(20)').all();
    const problems = rows.map((row) => String(Object.values(row)[0])).filter((text) => text !== 'ok');
    return { location, problems };
  } catch (error) {
    return { location, problems: [reason(error)] };
  } finally {
    db?.close();
  }
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

interface NodeCrypto {
  createHash(algorithm: 'sha256'): { update(text: string): { digest(encoding: 'hex'): string } };
}

/** SHA-256 of `text`, hex. */
export function hashText(text: string): string {
  const crypto = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process?.getBuiltinModule?.(
    'node:crypto',
  ) as NodeCrypto;
  return crypto.createHash('sha256').update(text).digest('hex');
}
