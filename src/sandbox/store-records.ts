/**
 * One record kind's table in the sandbox's store (see `store.ts`): its key column, the indexed
 * columns derived from a record, the record itself as JSON; reads by key, by conditions and in
 * keyset pages, and the upsert.
 */
import type { SqlValue, Statement } from '../core/sqlite.js';

/** What a table reads and writes through: the store's prepared statements (`SandboxStore.statement`). */
export interface Statements {
  statement(sql: string): Statement;
}

/** `WHERE` conditions: column and value, joined by `AND`; `undefined` values are left out. */
export type Conditions = Record<string, SqlValue | undefined>;

/** A page of a keyset listing. */
export interface KeysetPage<R> {
  items: R[];
  /** `seq` of the last item, when more follow. */
  next: number | null;
  total: number;
}

/** Where a keyset listing starts and how it runs. */
export interface KeysetParams {
  order: 'asc' | 'desc';
  /** Only items after this `seq` in the listing's order. */
  after: number | null;
  take: number;
}

interface ColumnSpec<R> {
  name: string;
  of: (record: R) => SqlValue;
}

/** One record kind: its table, its key column and the indexed columns derived from a record. */
export class RecordTable<R> {
  readonly #store: Statements;
  readonly #table: string;
  readonly #key: ColumnSpec<R>;
  readonly #columns: ColumnSpec<R>[];
  readonly #upsert: string;
  readonly #byKey: string;

  constructor(store: Statements, table: string, key: ColumnSpec<R>, columns: ColumnSpec<R>[]) {
    this.#store = store;
    this.#table = table;
    this.#key = key;
    this.#columns = columns;
    const names = [key.name, ...columns.map((column) => column.name), 'record'];
    this.#upsert = `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})
      ON CONFLICT(${key.name}) DO UPDATE SET ${names
        .slice(1)
        .map((name) => `${name} = excluded.${name}`)
        .join(', ')}`;
    this.#byKey = `SELECT record FROM ${table} WHERE ${key.name} = ? LIMIT 1`;
  }

  /** Inserts the record, or replaces the stored one with the same key. */
  save(record: R): void {
    const values: SqlValue[] = [this.#key.of(record)];
    for (const column of this.#columns) values.push(column.of(record));
    values.push(JSON.stringify(record));
    this.#store.statement(this.#upsert).run(...values);
  }

  get(key: string): R | undefined {
    const row = this.#store.statement(this.#byKey).get(key);
    return row ? (JSON.parse(row.record as string) as R) : undefined;
  }

  /** Whether a record has `value` in `column` (one of the table's, named by the caller, never by a request). */
  has(column: string, value: SqlValue): boolean {
    return this.#store.statement(`SELECT 1 FROM ${this.#table} WHERE ${column} = ? LIMIT 1`).get(value) !== undefined;
  }

  findBy(conditions: Conditions): R | undefined {
    const [where, values] = whereClause(conditions);
    const row = this.#store.statement(`SELECT record FROM ${this.#table}${where} LIMIT 1`).get(...values);
    return row ? (JSON.parse(row.record as string) as R) : undefined;
  }

  all(conditions: Conditions, options: { order?: 'asc' | 'desc' | undefined; limit?: number | undefined } = {}): R[] {
    const [where, values] = whereClause(conditions);
    const limit = options.limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(options.limit))}`;
    const rows = this.#store
      .statement(`SELECT record FROM ${this.#table}${where} ORDER BY seq ${options.order === 'desc' ? 'DESC' : 'ASC'}${limit}`)
      .all(...values);
    return rows.map((row) => JSON.parse(row.record as string) as R);
  }

  count(conditions: Conditions = {}, range?: CreatedRange): number {
    const [where, values] = whereClause(conditions, range);
    return this.#store.statement(`SELECT count(*) AS n FROM ${this.#table}${where}`).get(...values)?.n as number;
  }

  delete(key: string): void {
    this.#store.statement(`DELETE FROM ${this.#table} WHERE ${this.#key.name} = ?`).run(key);
  }

  /** One page of a listing in `seq` order, keyset-paged: inserts during a walk never shift it. */
  page(conditions: Conditions, params: KeysetParams, range?: CreatedRange): KeysetPage<R> {
    const [where, values] = whereClause(conditions, range);
    const total = this.count(conditions, range);
    const direction = params.order === 'desc' ? 'DESC' : 'ASC';
    const seek = params.after === null ? '' : `${where ? ' AND' : ' WHERE'} seq ${params.order === 'desc' ? '<' : '>'} ?`;
    const rows = this.#store
      .statement(`SELECT seq, record FROM ${this.#table}${where}${seek} ORDER BY seq ${direction} LIMIT ?`)
      .all(...values, ...(params.after === null ? [] : [params.after]), params.take + 1);
    const more = rows.length > params.take;
    const kept = more ? rows.slice(0, params.take) : rows;
    return {
      items: kept.map((row) => JSON.parse(row.record as string) as R),
      next: more ? (kept[kept.length - 1]?.seq as number) : null,
      total,
    };
  }
}

/** Bounds of `created_at`, both inclusive; `null` is open. */
export interface CreatedRange {
  from: number | null;
  to: number | null;
}

function whereClause(conditions: Conditions, range?: CreatedRange): [string, SqlValue[]] {
  const names: string[] = [];
  const values: SqlValue[] = [];
  for (const [name, value] of Object.entries(conditions)) {
    if (value === undefined) continue;
    names.push(`${name} = ?`);
    values.push(value);
  }
  if (range?.from != null) {
    names.push('created_at >= ?');
    values.push(range.from);
  }
  if (range?.to != null) {
    names.push('created_at <= ?');
    values.push(range.to);
  }
  return [names.length === 0 ? '' : ` WHERE ${names.join(' AND ')}`, values];
}
