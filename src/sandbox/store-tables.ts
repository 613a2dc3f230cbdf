/**
 * The store's tables that hold no records: the answers kept for `Idempotency-Key` requests, the
 * scheduled jobs, and where fault rules struck. Each runs its SQL through the store's cache of
 * prepared statements, in the caller's transaction.
 */
import type { Environment } from '../core/options.js';
import type { Statement } from '../core/sqlite.js';
import type { FaultEntry, IdempotencyRecord } from './records.js';

/** What a table runs its SQL through: the store's cache of prepared statements. */
export interface Statements {
  statement(sql: string): Statement;
}

const IDEMPOTENCY_COLUMNS = 'environment, key, endpoint, body_hash AS bodyHash, status, response, created_at AS createdAt';

/** The request and answer kept for each `Idempotency-Key`, by environment. */
export class IdempotencyTable {
  readonly #db: Statements;

  constructor(db: Statements) {
    this.#db = db;
  }

  /** The entry of `key`, when it was made at `notBefore` or later. */
  get(environment: Environment, key: string, notBefore: number): IdempotencyRecord | undefined {
    const row = this.#db
      .statement(`SELECT ${IDEMPOTENCY_COLUMNS} FROM idempotency WHERE environment = ? AND key = ? AND created_at >= ?`)
      .get(environment, key, notBefore);
    return row as IdempotencyRecord | undefined;
  }

  save(entry: IdempotencyRecord): void {
    this.#db
      .statement(
        `INSERT OR REPLACE INTO idempotency (environment, key, endpoint, body_hash, status, response, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(entry.environment, entry.key, entry.endpoint, entry.bodyHash, entry.status, entry.response, entry.createdAt);
  }

  /** Keeps the answer of an entry whose request was still running. */
  complete(environment: Environment, key: string, status: number, response: string): void {
    this.#db
      .statement('UPDATE idempotency SET status = ?, response = ? WHERE environment = ? AND key = ?')
      .run(status, response, environment, key);
  }

  delete(environment: Environment, key: string): void {
    this.#db.statement('DELETE FROM idempotency WHERE environment = ? AND key = ?').run(environment, key);
  }

  /** Removes the entries made before `before`. */
  purge(before: number): void {
    this.#db.statement('DELETE FROM idempotency WHERE created_at < ?').run(before);
  }

  /** Every entry (of `environment`, if given), oldest first. */
  all(environment?: Environment): IdempotencyRecord[] {
    const rows =
      environment === undefined
        ? this.#db.statement(`SELECT ${IDEMPOTENCY_COLUMNS} FROM idempotency ORDER BY created_at`).all()
        : this.#db.statement(`SELECT ${IDEMPOTENCY_COLUMNS} FROM idempotency WHERE environment = ? ORDER BY created_at`).all(environment);
    return rows as unknown as IdempotencyRecord[];
  }

  count(): number {
    return this.#db.statement('SELECT count(*) AS n FROM idempotency').get()?.n as number;
  }
}

/** A unit of scheduled work, kept in the database so that it resumes after a restart. */
export interface Job {
  id: number;
  kind: string;
  dueAt: number;
  subject: string;
}

/** The scheduled jobs: each claimed by one run at a time, until it is deleted or released. */
export class JobTable {
  readonly #db: Statements;

  constructor(db: Statements) {
    this.#db = db;
  }

  add(kind: string, dueAt: number, subject: string): void {
    this.#db.statement('INSERT INTO jobs (kind, due_at, subject) VALUES (?, ?, ?)').run(kind, dueAt, subject);
  }

  /**
   * Claims the jobs due at `now` that no one has claimed, earliest first: each is returned once,
   * however many jobs are under way (a claim lasts until the job is deleted or {@link release}d,
   * or the store is opened again).
   */
  claimDue(now: number): Job[] {
    const jobs = this.#db
      .statement('UPDATE jobs SET claimed = 1 WHERE claimed = 0 AND due_at <= ? RETURNING id, kind, due_at AS dueAt, subject')
      .all(now) as unknown as Job[];
    return jobs.sort((a, b) => a.dueAt - b.dueAt || a.id - b.id);
  }

  /** Makes a claimed job due again (its run ended without deleting it). */
  release(id: number): void {
    this.#db.statement('UPDATE jobs SET claimed = 0 WHERE id = ?').run(id);
  }

  /** The earliest due time of a job no one has claimed, if any. */
  nextDue(): number | undefined {
    return (this.#db.statement('SELECT min(due_at) AS due FROM jobs WHERE claimed = 0').get()?.due as number | null) ?? undefined;
  }

  /** Replaces a job's subject (a job that does its work in parts records what is left). */
  setSubject(id: number, subject: string): void {
    this.#db.statement('UPDATE jobs SET subject = ? WHERE id = ?').run(subject, id);
  }

  delete(id: number): void {
    this.#db.statement('DELETE FROM jobs WHERE id = ?').run(id);
  }

  /** Every job of `kind`. */
  of(kind: string): Job[] {
    return this.#db
      .statement('SELECT id, kind, due_at AS dueAt, subject FROM jobs WHERE kind = ? ORDER BY due_at, id')
      .all(kind) as unknown as Job[];
  }
}

/** Where fault rules struck, found by each reference an entry concerns. */
export class FaultEntryTable {
  readonly #db: Statements;

  constructor(db: Statements) {
    this.#db = db;
  }

  /** Records where a fault rule struck, under each reference it concerns. */
  add(entry: FaultEntry): void {
    const seq = this.#db
      .statement('INSERT INTO fault_entries (environment, record) VALUES (?, ?) RETURNING seq')
      .get(entry.environment, JSON.stringify(entry))?.seq as number;
    for (const reference of new Set(entry.references))
      this.#db.statement('INSERT INTO fault_subjects (reference, entry) VALUES (?, ?)').run(reference, seq);
  }

  /** The entries of one environment that concern any of `references`, oldest first. */
  about(environment: Environment, references: readonly string[]): FaultEntry[] {
    if (references.length === 0) return [];
    const rows = this.#db
      .statement(
        `SELECT record FROM fault_entries WHERE environment = ? AND seq IN
           (SELECT entry FROM fault_subjects WHERE reference IN (${references.map(() => '?').join(', ')}))
         ORDER BY seq`,
      )
      .all(environment, ...references);
    return rows.map((row) => JSON.parse(row.record as string) as FaultEntry);
  }
}

/**
 * Each simulated terminal's own processing time, by environment: how long its POS payments take
 * instead of the sandbox's `posDelayMs`. A terminal with no row takes the default. Settings, not
 * records: a reset keeps them, as it keeps the keys and webhook URLs.
 */
export class TerminalSettingsTable {
  readonly #db: Statements;

  constructor(db: Statements) {
    this.#db = db;
  }

  /** The terminal's processing time in ms, or `null` where it takes the sandbox's default. */
  processingMs(environment: Environment, poiId: string): number | null {
    const row = this.#db
      .statement('SELECT processing_ms AS ms FROM terminal_settings WHERE environment = ? AND poi_id = ?')
      .get(environment, poiId);
    return row === undefined ? null : (row.ms as number);
  }

  /** Sets the terminal's processing time; `null` removes it (the default again). */
  setProcessingMs(environment: Environment, poiId: string, ms: number | null): void {
    if (ms === null) this.#db.statement('DELETE FROM terminal_settings WHERE environment = ? AND poi_id = ?').run(environment, poiId);
    else
      this.#db
        .statement(
          `INSERT INTO terminal_settings (environment, poi_id, processing_ms) VALUES (?, ?, ?)
           ON CONFLICT (environment, poi_id) DO UPDATE SET processing_ms = excluded.processing_ms`,
        )
        .run(environment, poiId, ms);
  }

  /** Whether the terminal was set online (`true`) or offline (`false`); `null` where it keeps its simulated state. */
  online(environment: Environment, poiId: string): boolean | null {
    const row = this.#db.statement('SELECT online FROM terminal_connectivity WHERE environment = ? AND poi_id = ?').get(environment, poiId);
    return row === undefined ? null : row.online === 1;
  }

  /** Sets the terminal online or offline; `null` removes the setting (its simulated state again). */
  setOnline(environment: Environment, poiId: string, online: boolean | null): void {
    if (online === null)
      this.#db.statement('DELETE FROM terminal_connectivity WHERE environment = ? AND poi_id = ?').run(environment, poiId);
    else
      this.#db
        .statement(
          `INSERT INTO terminal_connectivity (environment, poi_id, online) VALUES (?, ?, ?)
           ON CONFLICT (environment, poi_id) DO UPDATE SET online = excluded.online`,
        )
        .run(environment, poiId, online ? 1 : 0);
  }
}
