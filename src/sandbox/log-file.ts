/**
 * Where the request log's rows live without a data folder: a file of their own in a private folder
 * of the system's temporary directory, removed as soon as SQLite holds it open. SQLite's anonymous
 * temporary database (`ATTACH ''`) was the first home, and it kept about 3.5 KB of memory per entry
 * ever logged (RSS +39 MB after 12 000 creates, trimmed or not); an ordinary file keeps only its
 * 1 MB page cache (+8.6 MB, the same load).
 */

interface TempFs {
  mkdtempSync(prefix: string): string;
  rmSync(path: string, options: { force: true; recursive: true }): void;
}

/** A built-in module of the runtime (Node, Deno, Bun), where it has one. */
function builtin<T>(name: string): T | undefined {
  return (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process?.getBuiltinModule?.(name) as T | undefined;
}

/** A new private folder's database path, or `undefined` where there is no file system (the caller falls back). */
export function privateLogFile(): string | undefined {
  const os = builtin<{ tmpdir(): string }>('node:os');
  const fs = builtin<TempFs>('node:fs');
  if (!os || !fs) return undefined;
  try {
    // mkdtemp makes the folder 0700: the rows (masked as they are) are this process's only.
    const dir = fs.mkdtempSync(`${os.tmpdir().replace(/\/+$/, '')}/payment-sandbox-log-`);
    return `${dir}/request-log.db`;
  } catch {
    return undefined;
  }
}

/**
 * Removes the file's folder once SQLite holds the file open (after its first write, under its
 * exclusive lock): it then lives as long as the connection, and a killed process leaves nothing
 * behind. Where an open file cannot be removed (Windows), {@link removeLogFile} does it at close.
 */
export function removeLogFile(file: string): void {
  try {
    builtin<TempFs>('node:fs')?.rmSync(file.slice(0, file.lastIndexOf('/')), { force: true, recursive: true });
  } catch {
    // Left for close, or for the system's temporary directory's own cleaning.
  }
}
