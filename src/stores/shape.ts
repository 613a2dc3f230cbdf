/**
 * The shape of the table a SQL webhook store writes to, checked when the store first uses it: a
 * system table, a view or a table of another shape (a column missing or of another type, no unique
 * `key`, another column that must be filled) is refused with a `ConfigurationError` saying what is
 * wrong, rather than every claim failing with the database's error.
 */
import { ConfigurationError } from '../core/errors.js';

/** A column of the table as the database describes it. */
export interface ColumnShape {
  name: string;
  /** The declared type, lower case (`text`, `timestamp with time zone`, `INTEGER`...). */
  type: string;
  notNull: boolean;
  hasDefault: boolean;
  /** The column alone is the primary key or a unique index. */
  unique: boolean;
}

/** What the store needs of a column: `text` or `time` (a timestamp in PostgreSQL, integer ms in SQLite). */
type Need = 'text' | 'time';

const NEEDED: ReadonlyArray<readonly [string, Need]> = [
  ['key', 'text'],
  ['token', 'text'],
  ['lease_until', 'time'],
  ['done_at', 'time'],
];

/**
 * Refuses `columns` (those of `table`) unless they are what the store needs. `accepts` tells
 * whether a declared type serves a need; `wanted` names the types of a need in the message;
 * `fix` says how to make a table that fits.
 */
export function checkColumns(
  table: string,
  columns: readonly ColumnShape[],
  accepts: (type: string, need: Need) => boolean,
  wanted: Record<Need, string>,
  fix: string,
): void {
  const refuse = (what: string): never => {
    throw new ConfigurationError('table', `The webhook store's table ${table} ${what}; ${fix}`);
  };
  for (const [name, need] of NEEDED) {
    const column = columns.find((candidate) => candidate.name === name);
    if (!column) refuse(`has no column ${name} (${wanted[need]})`);
    else if (!accepts(column.type, need)) refuse(`has column ${name} of type ${column.type || '(none)'}, not ${wanted[need]}`);
  }
  if (!columns.find((column) => column.name === 'key')?.unique) refuse('has no primary key or unique index on key alone');
  const extra = columns.find((column) => !NEEDED.some(([name]) => name === column.name) && column.notNull && !column.hasDefault);
  if (extra) refuse(`has column ${extra.name}, NOT NULL without a default, which the store cannot fill`);
}
