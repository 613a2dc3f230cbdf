/**
 * The built CLI (dist/cli.cjs) as a child process of this Node: start `sandbox` and read its JSON
 * line, stop it with a signal, kill it. Every child started here is killed by `killAll`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const CLI = join(ROOT, 'dist/cli.cjs');

export interface Banner {
  baseUrl: string;
  webcode: string;
  keys: { test: string; live: string };
  clientSecrets: { test: string; live: string };
}

export interface Running {
  child: ChildProcess;
  info: Banner;
  /** The raw first stdout line. */
  line: string;
  stderr: () => string;
  stdout: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();

/**
 * Runs the bin with `args`. Its stdin is `/dev/null`, or `input` then its end, or with `openStdin` a
 * pipe left open for the test to write to (or never).
 */
export function run(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; openStdin?: boolean } = {},
): { child: ChildProcess; exit: Running['exit']; stdout: () => string; stderr: () => string } {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: options.env ?? process.env,
    stdio: [options.input === undefined && !options.openStdin ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  children.add(child);
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      done({ code, signal });
    }),
  );
  return { child, exit, stdout: () => out, stderr: () => err };
}

/** The Test settings of a sandbox as the CLI reads them from the environment. */
export function sandboxVariables(sandbox: { keys: { test: string }; webcode: string; baseUrl: string }): Record<string, string> {
  return {
    PAYMENT_SERVICE_API_KEY: sandbox.keys.test,
    PAYMENT_SERVICE_WEBCODE: sandbox.webcode,
    PAYMENT_SERVICE_BASE_URL: sandbox.baseUrl,
  };
}

/**
 * The environment of a CLI child: this process's without its `PAYMENT_SERVICE_*` settings and
 * `NO_COLOR`, the profile file at `configPath` (none there: no profile), then `settings`.
 */
export function cliEnv(configPath: string, settings: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('PAYMENT_SERVICE_') && name !== 'NO_COLOR') env[name] = value;
  return { ...env, PAYMENT_SERVICE_CONFIG: configPath, ...settings };
}

/** Starts `sandbox ...args` and resolves once its first stdout line is in. */
export async function startCli(args: string[]): Promise<Running> {
  const started = run(['sandbox', '--port', '0', ...args]);
  const line = await new Promise<string>((done, fail) => {
    // A bound, not a measure: on a loaded 2-core machine a start has taken over 5 s.
    const timer = setTimeout(() => fail(new Error(`No JSON line from the CLI; stderr: ${started.stderr()}`)), 30_000);
    const check = () => {
      const output = started.stdout();
      const end = output.indexOf('\n');
      if (end >= 0) {
        clearTimeout(timer);
        done(output.slice(0, end));
      }
    };
    started.child.stdout?.on('data', check);
    void started.exit.then(() => {
      clearTimeout(timer);
      fail(new Error(`The CLI exited early; stderr: ${started.stderr()}`));
    });
  });
  return { ...started, line, info: JSON.parse(line) as Banner };
}

export async function stop(running: Running, signal: NodeJS.Signals = 'SIGTERM') {
  running.child.kill(signal);
  return running.exit;
}

/** The banner on stderr comes right after the JSON line: wait for it. */
export async function stderrContains(running: Running, text: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!running.stderr().includes(text)) {
    if (Date.now() > deadline) throw new Error(`stderr lacks ${text}: ${running.stderr()}`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

/** Builds dist/ when the suite runs without `npm test` having built it. */
export function buildOnce(): void {
  if (!existsSync(CLI))
    execFileSync(process.execPath, [join(ROOT, 'node_modules/tsup/dist/cli-default.js')], { cwd: ROOT, stdio: 'ignore' });
}

/** Kills every CLI child still running. */
export function killAll(): void {
  for (const child of children) child.kill('SIGKILL');
}

/** The characters of `text` that could drive a terminal (C0 but newline, DEL, C1), as code points. */
export function controlsIn(text: string): number[] {
  return [...text]
    .map((char) => char.codePointAt(0) ?? 0)
    .filter((code) => (code < 0x20 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f));
}
