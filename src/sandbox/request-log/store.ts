/**
 * A tenant's request log, in a table of the tenant's own database: in its temporary file (see
 * `SandboxStore`), or kept across restarts with a data folder. Bounded to the last `size` entries:
 * every listing sees only the newest `size` numbers, and the rows below that watermark are deleted
 * with each batch, one range delete on the primary key instead of one per request.
 */
import * as z from 'zod/mini';
import type { Environment } from '../../core/options.js';
import type { SqlValue } from '../../core/sqlite.js';
import { invalid } from '../responses.js';
import { type SandboxStore, STAGED_REQUEST_LOG } from '../store.js';
import { cursorAfter } from '../validation.js';
import {
  type RequestLogEntry,
  RequestLogFilter,
  type RequestLogPage,
  RequestLogQuery,
  type RequestLogReferences,
  type RequestLogStore,
} from './schema.js';

/** Entries kept per tenant unless told otherwise. */
export const DEFAULT_REQUEST_LOG_SIZE = 10_000;
/** Inserts between two trims of the rows past the bound. */
export const TRIM_EVERY = 256;

/** An entry before it is stored: the log gives it its id, and its `at` from the time it is given. */
export type NewEntry = Omit<RequestLogEntry, 'id' | 'at'>;

/** What an entry's `record` column holds: what no other column does. Rows written before migration 8 hold the whole entry. */
type StoredRecord = Omit<
  NewEntry,
  'environment' | 'method' | 'operation' | 'status' | 'idempotencyKey' | 'traceId' | 'requestHeaders' | 'requestBody' | 'responseBody'
> &
  Partial<RequestLogEntry>;

const INSERT = `INSERT INTO request_log
  (seq, environment, at, method, operation, status, idempotency_key, trace_id, refs, record, request_headers, request_body, response_body)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
/** The same row, staged (see `SandboxStore.requestLogStaged`). */
const STAGE = INSERT.replace('INSERT INTO request_log', `INSERT INTO ${STAGED_REQUEST_LOG}`);
/** The columns an entry is read from. */
const ENTRY_COLUMNS =
  'seq, at, environment, method, operation, status, idempotency_key, trace_id, record, request_headers, request_body, response_body';

/** How long a staged entry may wait for its batch when no read and no full batch comes first. */
const STAGED_MS = 200;

/**
 * Bytes of text (bodies, headers, the rest of the entry) staged before the batch is moved, whatever
 * its count: the staging table is an in-memory database, which keeps the pages it once grew to, and
 * {@link TRIM_EVERY} entries with bodies of 64 KB each would have grown it to 32 MB for good.
 */
export const STAGED_BYTES = 1024 * 1024;

/**
 * Entries made at most after their answers, before they are written at once: a caller that awaits
 * `sandbox.handle` in a loop never leaves the turn, and entries held longer would outlive the
 * garbage collector's young generation. Four: since the server answers from Node's own request,
 * more requests end per turn, and 32 (or 8) entries waiting cost +33 MB (+10 MB) of RSS under the
 * bench's load, against +1 MB with four.
 */
const MAX_PENDING = 4;

/** After the I/O of this turn of the event loop: `setImmediate` where the runtime has it. */
const afterAnswers: (run: () => void) => void =
  typeof setImmediate === 'function' ? (run) => void setImmediate(run) : (run) => void setTimeout(run, 0);

/** An answered request whose entry is made once its answer is on its way (see {@link RequestLog.later}). */
interface Pending {
  /** The entry, or `undefined` when there is none to write after all. */
  entry: () => NewEntry | undefined;
  atMs: number;
}

/**
 * One tenant's log. Each entry is written to SQLite when its request has been answered: to the
 * store's in-memory staging table where it has one, from which a batch moves to `request_log` in one
 * transaction every {@link TRIM_EVERY} entries or {@link STAGED_BYTES} of their text, before every read, on close and {@link STAGED_MS}
 * after the first. Entries held in JavaScript instead outlived the turn of the event loop that made
 * them, and under load the garbage collector then moved them to its old generation, which cost
 * more CPU and memory than the batch saved.
 */
export class RequestLog implements RequestLogStore {
  readonly #store: SandboxStore;
  readonly #prefix: string;
  readonly #onError: (error: unknown) => void;
  /** How many entries are kept; 0: none are. */
  readonly size: number;
  #last: number;
  #waiting = 0;
  /** UTF-16 units of text in the entries staged since the last batch (a close enough count of their bytes). */
  #stagedText = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #pending: Pending[] = [];

  /** `webcode` begins the ids; `size` is the bound (0 turns the log off); `onError` gets a failed batch the timer moved. */
  constructor(store: SandboxStore, options: { webcode: string; size: number; onError?: (error: unknown) => void }) {
    if (!Number.isSafeInteger(options.size) || options.size < 0) {
      throw new TypeError(`requestLogSize must be a whole number, 0 or more (0 turns the log off); got ${String(options.size)}`);
    }
    this.#store = store;
    this.#prefix = `${options.webcode}-REQ-`;
    this.#onError = options.onError ?? ((error) => console.error('payment-service-sdk sandbox: request log:', error));
    this.size = options.size;
    // The highest number ever given, kept by SQLite even when the rows are deleted: no id is given twice.
    this.#last = (store.statement("SELECT seq FROM sqlite_sequence WHERE name = 'request_log'").get()?.seq as number | undefined) ?? 0;
  }

  /** Whether entries are kept at all. */
  get enabled(): boolean {
    return this.size > 0 && !this.#closed;
  }

  /** Writes an entry (nothing when the log is off); its id. `atMs` is its `at`, for the time filters. */
  add(entry: NewEntry, atMs: number): string | undefined {
    if (!this.enabled) return undefined;
    const seq = this.#last + 1;
    const staged = this.#store.requestLogStaged;
    const { environment, method, operation, status, idempotencyKey, traceId, requestHeaders, requestBody, responseBody, ...record } = entry;
    const recordColumn = JSON.stringify(record);
    const headersColumn = JSON.stringify(requestHeaders);
    this.#store
      .statement(staged ? STAGE : INSERT)
      .run(
        seq,
        environment,
        atMs,
        method,
        operation,
        status,
        idempotencyKey,
        traceId,
        refsColumn(record.references),
        recordColumn,
        headersColumn,
        requestBody,
        responseBody,
      );
    this.#last = seq;
    this.#stagedText += recordColumn.length + headersColumn.length + (requestBody?.length ?? 0) + (responseBody?.length ?? 0);
    if (++this.#waiting >= TRIM_EVERY || this.#stagedText >= STAGED_BYTES) this.flush();
    else if (staged && this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#flushLate(), STAGED_MS);
      // No reason to keep the process alive (a runtime whose timers are numbers has no `unref`).
      (this.#timer as { unref?: () => void }).unref?.();
    }
    return `${this.#prefix}${seq}`;
  }

  /**
   * Writes an entry made by `entry` after the answers of this turn of the event loop have been
   * handed to their connections, so that the log never holds up an answer; every read, `flush`
   * and `close` writes what is still pending first. A failure to make or write it goes to `onError`.
   */
  later(entry: () => NewEntry | undefined, atMs: number): void {
    if (!this.enabled) return;
    if (this.#pending.length === 0) afterAnswers(() => this.#writePending());
    if (this.#pending.push({ entry, atMs }) >= MAX_PENDING) this.#writePending();
  }

  #writePending(): void {
    const pending = this.#pending;
    if (pending.length === 0) return;
    this.#pending = [];
    for (const { entry, atMs } of pending) {
      try {
        const made = entry();
        if (made !== undefined) this.add(made, atMs);
      } catch (error) {
        this.#onError(error);
      }
    }
  }

  /** Writes what is pending, moves the staged entries to `request_log` and deletes the rows past the bound, in one transaction. */
  flush(): void {
    this.#writePending();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting === 0) return;
    const store = this.#store;
    store.transaction(() => {
      if (store.requestLogStaged) {
        store.statement(`INSERT INTO request_log SELECT * FROM ${STAGED_REQUEST_LOG}`).run();
        store.statement(`DELETE FROM ${STAGED_REQUEST_LOG}`).run();
      }
      store.statement('DELETE FROM request_log WHERE seq <= ?').run(this.#floor());
    });
    this.#waiting = 0;
    this.#stagedText = 0;
  }

  /** Moves what is staged and takes no more entries (the store is about to close). */
  close(): void {
    if (this.#closed) return;
    this.#writePending();
    this.#closed = true;
    this.#flushLate();
  }

  #flushLate(): void {
    try {
      this.flush();
    } catch (error) {
      this.#onError(error);
    }
  }

  list(environment: Environment, query: RequestLogQuery = {}): RequestLogPage {
    this.flush();
    const parsed = parseWith(RequestLogQuery, query);
    const [where, values] = this.#where(environment, parsed);
    const total = this.#store.statement(`SELECT count(*) AS n FROM request_log${where}`).get(...values)?.n as number;
    const take = parsed.take ?? 20;
    const after = cursorSeq(parsed.cursor);
    const seek = after === null ? '' : ' AND seq < ?';
    const rows = this.#store
      .statement(`SELECT ${ENTRY_COLUMNS} FROM request_log${where}${seek} ORDER BY seq DESC LIMIT ?`)
      .all(...values, ...(after === null ? [] : [after]), take + 1);
    const more = rows.length > take;
    const kept = more ? rows.slice(0, take) : rows;
    const last = kept[kept.length - 1]?.seq as number | undefined;
    return {
      items: kept.map((row) => this.#entry(row)),
      cursor: more && last !== undefined ? cursorAfter('desc', last) : null,
      hasMore: more,
      total,
    };
  }

  get(id: string): RequestLogEntry | undefined {
    if (!id.startsWith(this.#prefix)) return undefined;
    const number = id.slice(this.#prefix.length);
    if (!/^[1-9]\d{0,15}$/.test(number)) return undefined;
    this.flush();
    const row = this.#store
      .statement(`SELECT ${ENTRY_COLUMNS} FROM request_log WHERE seq = ? AND seq > ?`)
      .get(Number(number), this.#floor());
    return row ? this.#entry(row) : undefined;
  }

  count(environment: Environment, filter: RequestLogFilter = {}): number {
    this.flush();
    const [where, values] = this.#where(environment, parseWith(RequestLogFilter, filter));
    return this.#store.statement(`SELECT count(*) AS n FROM request_log${where}`).get(...values)?.n as number;
  }

  clear(environment: Environment, filter: RequestLogFilter = {}): number {
    this.flush();
    const [where, values] = this.#where(environment, parseWith(RequestLogFilter, filter));
    return Number(this.#store.transaction(() => this.#store.statement(`DELETE FROM request_log${where}`).run(...values)).changes);
  }

  /** The newest `take` entries of `environment` that made or touched any of `references` (a record's page), newest first. */
  touching(environment: Environment, references: readonly string[], take = 50): RequestLogEntry[] {
    const wanted = references.filter((reference) => reference !== '');
    if (wanted.length === 0) return [];
    this.flush();
    const rows = this.#store
      .statement(
        `SELECT ${ENTRY_COLUMNS} FROM request_log WHERE environment = ? AND seq > ? AND (${wanted.map(() => 'instr(refs, ?) > 0').join(' OR ')})
         ORDER BY seq DESC LIMIT ?`,
      )
      .all(environment, this.#floor(), ...wanted.map((reference) => ` ${reference} `), take);
    return rows.map((row) => this.#entry(row));
  }

  /** Rows at or below this number are past the bound, whether or not the last trim has deleted them yet. */
  #floor(): number {
    return this.#last - this.size;
  }

  /** The entry of a row, its fields in the order of {@link RequestLogEntry}. */
  #entry(row: Record<string, SqlValue>): RequestLogEntry {
    const stored = JSON.parse(row.record as string) as StoredRecord;
    return {
      id: `${this.#prefix}${row.seq as number}`,
      at: new Date(row.at as number).toISOString(),
      environment: row.environment as Environment,
      tenant: stored.tenant,
      method: row.method as string,
      route: stored.route,
      operation: row.operation as string | null,
      path: stored.path,
      query: stored.query,
      requestHeaders:
        row.request_headers === null
          ? (stored.requestHeaders ?? {})
          : (JSON.parse(row.request_headers as string) as Record<string, string>),
      requestBody: bodyColumn(row, 'request_body', stored.requestBody),
      requestBodyTruncated: stored.requestBodyTruncated,
      idempotencyKey: row.idempotency_key as string | null,
      replayed: stored.replayed,
      status: row.status as number,
      responseBody: bodyColumn(row, 'response_body', stored.responseBody),
      responseBodyTruncated: stored.responseBodyTruncated,
      traceId: row.trace_id as string | null,
      durationMs: stored.durationMs,
      faultRule: stored.faultRule,
      references: stored.references,
      issues: stored.issues,
    };
  }

  #where(environment: Environment, filter: RequestLogFilter): [string, SqlValue[]] {
    const names = ['environment = ?', 'seq > ?'];
    const values: SqlValue[] = [environment, this.#floor()];
    const equal = (column: string, value: string | undefined) => {
      if (value === undefined) return;
      names.push(`${column} = ?`);
      values.push(value);
    };
    equal('operation', filter.operation);
    equal('method', filter.method?.toUpperCase());
    equal('idempotency_key', filter.idempotencyKey);
    equal('trace_id', filter.traceId);
    if (filter.status !== undefined) {
      const [low, high] = statusRange(filter.status);
      names.push('status BETWEEN ? AND ?');
      values.push(low, high);
    }
    if (filter.reference !== undefined) {
      names.push('instr(refs, ?) > 0');
      values.push(` ${filter.reference} `);
    }
    if (filter.since !== undefined) {
      names.push('at >= ?');
      values.push(instant(filter.since));
    }
    if (filter.until !== undefined) {
      names.push('at <= ?');
      values.push(instant(filter.until));
    }
    return [` WHERE ${names.join(' AND ')}`, values];
  }
}

/** A body's column: NULL for a body there was none of, and in rows written before these columns (theirs are in `record`, `before`). */
function bodyColumn(row: Record<string, SqlValue>, column: string, before: string | null | undefined): string | null {
  return (row[column] ?? before ?? null) as string | null;
}

/** Every reference of an entry between spaces, so that one is found whole with `instr`. */
function refsColumn(references: RequestLogReferences): string {
  let column = '';
  for (const list of [references.sessionIds, references.paymentReferences, references.posPaymentIds, references.modificationReferences])
    for (const reference of list) column += ` ${reference}`;
  return column === '' ? '' : `${column} `;
}

/** A code, or a class (`4xx`: 400 to 499). */
function statusRange(status: number | string): [number, number] {
  if (typeof status === 'number') return [status, status];
  if (/^\dxx$/.test(status)) {
    const low = Number(status[0]) * 100;
    return [low, low + 99];
  }
  return [Number(status), Number(status)];
}

function instant(value: string | Date): number {
  return typeof value === 'string' ? Date.parse(value.toUpperCase()) : value.getTime();
}

/** The number after which a page starts; 400 for a cursor this log did not give. */
function cursorSeq(cursor: string | undefined): number | null {
  if (cursor === undefined || cursor === '') return null;
  const decoded = /^d(\d{1,15})$/.exec(cursor);
  if (!decoded) throw invalid('cursor is not valid: pass the cursor of the previous page');
  return Number(decoded[1]);
}

/** `value` checked against `schema`; 400 naming the first field at fault otherwise. */
export function parseWith<S extends z.core.$ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = z.safeParse(schema, value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.map(String).join('.') ?? '';
  throw invalid(`${path === '' ? 'filter' : path} ${issue?.message ?? 'is not valid'}`);
}
