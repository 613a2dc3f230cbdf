/**
 * `sandbox wait --ready-file FILE [--timeout S]`: for a CI job that started `sandbox --ready-file
 * FILE &`. Returns (exit 0) once the sandbox that writes FILE is ready, and fails at once (exit 1),
 * saying why, when that sandbox has stopped: before it was ready (`FILE.starting` holds its pid and
 * why it stopped), or after (FILE left by a sandbox killed with SIGKILL); or at the timeout.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EXIT, ExitError, type Terminal, terminalSafe, UsageError } from './io.js';
import { type ReadyFile, type StartingFile, startingPath } from './ready-file.js';

/** How often the files are looked at. */
const POLL_MS = 100;
/**
 * How long a file that was there before the wait began may stay as it is with its pid gone: a
 * sandbox started just before the wait removes such a file of an earlier run as it starts.
 */
const STALE_GRACE_MS = 3_000;
const DEFAULT_TIMEOUT_S = 60;

/** Whether `pid` is a running process (a zombie, on Linux, is not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc (macOS): kill(0) is the answer
  }
}

/** A JSON file as it is now, with when it was last written; undefined when absent or not whole JSON. */
function look<T>(path: string): { value: T; written: number } | undefined {
  try {
    const written = statSync(path).mtimeMs;
    return { value: JSON.parse(readFileSync(path, 'utf8')) as T, written };
  } catch {
    return undefined;
  }
}

/** One look at the files: ready, stopped (why), or still to wait for. */
type Verdict = { ready: ReadyFile } | { stopped: string } | undefined;

function verdict(path: string, began: number, now: number): Verdict {
  const ready = look<ReadyFile>(path);
  const starting = look<StartingFile>(startingPath(path));
  // A file from before the wait whose process is gone may be about to be replaced: a grace period first.
  const settled = (written: number) => written >= began || now - began >= STALE_GRACE_MS;
  if (ready && typeof ready.value.pid === 'number') {
    if (alive(ready.value.pid)) return { ready: ready.value };
    if (settled(ready.written))
      return {
        stopped: `the sandbox of ${path} (pid ${ready.value.pid}) is no longer running: the file was left by a sandbox killed without a chance to remove it`,
      };
    return undefined;
  }
  if (starting && typeof starting.value.pid === 'number' && settled(starting.written)) {
    const { pid, failed } = starting.value;
    if (failed !== undefined) return { stopped: `the sandbox (pid ${pid}) stopped before it was ready: ${failed}` };
    if (!alive(pid)) return { stopped: `the sandbox (pid ${pid}) is no longer running, and it never got ready` };
  }
  return undefined;
}

function seconds(value: string): number {
  const number = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || number <= 0 || number > 86_400)
    throw new UsageError(`--timeout must be a number of seconds above 0, up to 86400, got ${value}`);
  return number;
}

async function waitFor(terminal: Terminal, file: string, timeoutS: number): Promise<void> {
  const path = resolve(file);
  const began = Date.now();
  const deadline = began + timeoutS * 1000;
  for (;;) {
    const now = Date.now();
    const found = verdict(path, began, now);
    if (found && 'ready' in found) {
      terminal.stderr.write(`${terminalSafe(`The sandbox at ${found.ready.baseUrl} is ready (pid ${found.ready.pid}).`)}\n`);
      return;
    }
    if (found) throw new ExitError(terminalSafe(found.stopped), EXIT.failure);
    if (now >= deadline) {
      const starting = look<StartingFile>(startingPath(path));
      const why = starting ? `the sandbox (pid ${starting.value.pid}) is still starting` : `no sandbox started writing ${path}`;
      throw new ExitError(`no sandbox was ready at ${path} after ${timeoutS} s: ${why}`, EXIT.failure);
    }
    await new Promise((done) => setTimeout(done, Math.min(POLL_MS, Math.max(1, deadline - now))));
  }
}

/** Adds `wait` under `sandbox`. */
export function registerSandboxWait(sandbox: Command, terminal: Terminal): void {
  sandbox
    .command('wait')
    .description('wait until the sandbox writing --ready-file FILE is ready (exit 0); fail at once if it stopped (exit 1)')
    .option('--ready-file <path>', 'the file the sandbox was started with (sandbox --ready-file FILE; default PAYMENT_SANDBOX_READY_FILE)')
    .option('--timeout <s>', `give up after this many seconds (default ${DEFAULT_TIMEOUT_S})`)
    .addHelpText(
      'after',
      '\nExit 0 once the sandbox is ready; 1 at once when it stopped before it was ready (its reason is said), when FILE was\n' +
        'left by a sandbox that is gone, or at the timeout.\n\n' +
        'Example: payment-service-sdk sandbox --port 0 --ready-file sandbox.json & payment-service-sdk sandbox wait --ready-file sandbox.json',
    )
    .action(async (_flags: unknown, self: Command) => {
      // `--ready-file` is also the sandbox's own option: commander gives it to whichever level it was read at.
      const flags = self.optsWithGlobals<{ readyFile?: string; timeout?: string }>();
      // As the sandbox itself reads it, so that one variable serves both.
      const file = flags.readyFile ?? (terminal.env.PAYMENT_SANDBOX_READY_FILE || undefined);
      if (file === undefined) throw new UsageError('sandbox wait needs --ready-file FILE (or PAYMENT_SANDBOX_READY_FILE)');
      await waitFor(terminal, file, flags.timeout === undefined ? DEFAULT_TIMEOUT_S : seconds(flags.timeout));
    });
}
