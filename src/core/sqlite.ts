/**
 * The part of `node:sqlite` the sandbox and the SQLite webhook store use, loaded at run time: the
 * module is built into Node 22.13+, Deno and Bun, so neither needs a native addon, and importing
 * the SDK never loads it.
 */

/** A prepared statement of `node:sqlite`. */
export interface Statement {
  run(...parameters: SqlValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...parameters: SqlValue[]): Record<string, SqlValue> | undefined;
  all(...parameters: SqlValue[]): Record<string, SqlValue>[];
}

/** A `node:sqlite` connection. */
export interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

export type SqlValue = string | number | null;

interface SqliteModule {
  DatabaseSync: new (location: string, options?: { timeout?: number }) => Database;
}

interface NodeProcess {
  getBuiltinModule?: (name: string) => unknown;
  emitWarning: (warning: string | Error, ...rest: unknown[]) => void;
}

let loaded: SqliteModule | undefined;

/**
 * Loads `node:sqlite` without the `ExperimentalWarning` Node 22 prints on its first load: the
 * sandbox is a tool and the store an SDK choice, and their users did not choose that API. `user`
 * names what needs it, for the error thrown where the module does not exist.
 */
export function loadSqlite(user = 'The sandbox'): SqliteModule {
  if (loaded) return loaded;
  const process = (globalThis as { process?: NodeProcess }).process;
  if (!process?.getBuiltinModule) throw new Error(`${user} needs node:sqlite: Node.js 22.13 or later, Deno or Bun`);
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning, ...rest) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/SQLite is an experimental feature/.test(text)) return;
    emitWarning.call(process, warning, ...rest);
  };
  try {
    loaded = process.getBuiltinModule('node:sqlite') as SqliteModule | undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
  if (!loaded) throw new Error(`${user} needs node:sqlite: Node.js 22.13 or later, Deno or Bun`);
  return loaded;
}
