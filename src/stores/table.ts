/**
 * Table names of the SQL webhook stores: checked, then quoted, since they are written into SQL
 * (identifiers cannot be bound as parameters).
 */
import { ConfigurationError } from '../core/errors.js';

/** The table the SQL stores use when none is named. */
export const DEFAULT_TABLE = 'payment_webhook_events';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * `table` quoted for SQL (`"name"`, or `"schema"."name"` when `qualified` allows a schema), or a
 * `ConfigurationError` naming the option when it is not made of letters, digits and underscores.
 */
export function quoteTable(table: unknown, qualified: boolean): string {
  const parts = typeof table === 'string' ? table.split('.') : [];
  const valid = parts.length > 0 && parts.length <= (qualified ? 2 : 1) && parts.every((part) => IDENTIFIER.test(part));
  if (!valid) {
    const shape = qualified ? 'a table name or schema.table' : 'a table name';
    throw new ConfigurationError(
      'table',
      `table must be ${shape} of letters, digits and underscores (at most 63 each), not ${JSON.stringify(table)}`,
    );
  }
  return parts.map((part) => `"${part}"`).join('.');
}

/**
 * The `table` option quoted for SQL: the default when it is left out (`undefined`), otherwise it
 * must be a valid name; `null` or any other non-string is refused like a malformed name.
 */
export function tableOption(table: unknown, qualified: boolean): string {
  return quoteTable(table === undefined ? DEFAULT_TABLE : table, qualified);
}
