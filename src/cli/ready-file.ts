/**
 * `sandbox --ready-file PATH`: the running sandbox's address and keys as a JSON file, for a CI job
 * or a test runner waiting to start. It appears whole (written aside, then renamed) only once the
 * sandbox is listening, is readable by its owner only (it holds the keys), and is removed when the
 * sandbox stops on SIGINT or SIGTERM. Until then `PATH.starting` holds the sandbox's pid, and, when it
 * stopped before it was ready, why: what `sandbox wait` reads to fail at once rather than at its timeout.
 */
import { chmodSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { EXIT, ExitError } from './io.js';

/** What `PATH.starting` holds: the starting sandbox's pid, and why it stopped if it did before it was ready. */
export interface StartingFile {
  pid: number;
  failed?: string;
}

/** The file beside the ready file that says a sandbox is starting, or why it stopped before it was ready. */
export const startingPath = (path: string) => `${path}.starting`;

/** What the ready file holds. */
export interface ReadyFile {
  baseUrl: string;
  webcode: string;
  keys: { test: string; live: string };
  clientSecrets: { test: string; live: string };
  /** The dashboard's address; beyond loopback it carries the dashboard token (`?token=`). */
  dashboardUrl: string;
  /** The sandbox's process: `kill -TERM <pid>` stops it and removes the file. */
  pid: number;
}

/**
 * The absolute path of `--ready-file`, its folder checked, and any file left there by an earlier
 * run removed: whoever waits for the file must never read a sandbox that is gone.
 */
export function prepareReadyFile(path: string): string {
  const absolute = resolve(path);
  const folder = dirname(absolute);
  let isFolder = false;
  try {
    isFolder = statSync(folder).isDirectory();
  } catch {
    // said below
  }
  if (!isFolder) throw new ExitError(`--ready-file ${path}: the folder ${folder} does not exist`, EXIT.usage);
  removeReadyFile(absolute);
  writeWhole(startingPath(absolute), { pid: process.pid } satisfies StartingFile);
  return absolute;
}

/** Writes `value` as JSON, whole and mode 0600, through a temporary file in the same folder. */
function writeWhole(path: string, value: unknown): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new ExitError(`--ready-file ${path} could not be written: ${(error as Error).message}`, EXIT.failure);
  }
}

/** Writes the ready file; the sandbox is no longer starting. */
export function writeReadyFile(path: string, ready: ReadyFile): void {
  writeWhole(path, ready);
  removeQuietly(startingPath(path));
}

/** Says in `PATH.starting` why the sandbox stopped before it was ready; it is left for `sandbox wait` (or the next start). */
export function markStartFailed(path: string, why: string): void {
  try {
    writeWhole(startingPath(path), { pid: process.pid, failed: why } satisfies StartingFile);
  } catch {
    // Stopping already: the waiter then finds the pid gone.
  }
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // A folder in its place, or no permission: there is nothing of ours to remove.
  }
}

/** Removes the ready file and its starting file. */
export function removeReadyFile(path: string): void {
  removeQuietly(path);
  removeQuietly(startingPath(path));
}
