/**
 * The runtimes the package promises, proven on the built package: test/runtimes/e2e.mjs (client
 * against the sandbox, POS, refunds, webhooks, redirect decoding, error classes) runs unchanged on
 * Deno and Bun, whose binaries come from the `deno` and `bun` devDependencies (node_modules/.bin,
 * never a global install), and on the Node running this suite: Node 24 under `npm test`, Node 22
 * under `npm run test:node22` (which leaves Deno and Bun out: they ran in the first pass). (workerd
 * has test/workerd.test.ts.)
 *
 * A runtime binary that is missing or does not start fails the test when `CI` or `REQUIRE_RUNTIMES`
 * is set (.ci/run sets the latter); elsewhere its test is skipped with a warning saying why.
 * Network: 127.0.0.1 only.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOnce, ROOT } from './sandbox/cli-process.js';

const SCRIPT = join(ROOT, 'test/runtimes/e2e.mjs');
/** The script fails itself after 30 s; past this the child is killed. */
const KILL_AFTER_MS = 40_000;

const pinned = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> })
  .devDependencies;

interface Runtime {
  name: 'deno' | 'bun' | 'node';
  /** The binary and the arguments before the script. */
  command: string;
  args: string[];
  /** The version the script must report: the pinned devDependency, or this Node's. */
  version: string;
  /** Extra environment: no update checks, crash reports or other traffic beyond 127.0.0.1. */
  env: Record<string, string>;
}

const RUNTIMES: Runtime[] = [
  {
    name: 'deno',
    command: join(ROOT, 'node_modules/.bin/deno'),
    // Only 127.0.0.1 may be reached; no remote modules. Modules are read from the project without
    // --allow-read, and the sandbox's SQLite is in memory. `payment-service-sdk` resolves through
    // package.json's "exports" (a self-reference), as in Node.
    args: ['run', '--allow-net=127.0.0.1', '--no-remote', '--no-prompt'],
    version: pinned.deno ?? '',
    env: { DENO_NO_UPDATE_CHECK: '1' },
  },
  {
    name: 'bun',
    command: join(ROOT, 'node_modules/.bin/bun'),
    // Never install what a bare import lacks: node_modules is the only source.
    args: ['--no-install'],
    version: pinned.bun ?? '',
    env: { DO_NOT_TRACK: '1' },
  },
  { name: 'node', command: process.execPath, args: [], version: process.versions.node, env: {} },
];

function flag(name: string): boolean {
  const value = process.env[name];
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

/** Why `runtime` cannot run here, or `undefined` when its binary starts. */
function unusable(runtime: Runtime): string | undefined {
  if (!existsSync(runtime.command)) return `${runtime.command} is missing: run \`npm ci\` (the ${runtime.name} devDependency)`;
  const probe = spawnSync(runtime.command, ['--version'], { encoding: 'utf8', timeout: 15_000 });
  if (probe.status === 0) return undefined;
  // bun's bin is a placeholder until its postinstall script puts the binary there (allowScripts).
  return `${runtime.command} --version failed (status ${probe.status}${probe.error ? `, ${probe.error.message}` : ''}): ${(probe.stderr || probe.stdout).trim().slice(0, 400)}; did its postinstall script run?`;
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function runScript(runtime: Runtime): Promise<Outcome> {
  const started = performance.now();
  const child = spawn(runtime.command, [...runtime.args, SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, ...runtime.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const killer = setTimeout(() => {
    stderr += `\n[killed after ${KILL_AFTER_MS} ms]`;
    child.kill('SIGKILL');
  }, KILL_AFTER_MS);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(killer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr, ms: Math.round(performance.now() - started) });
    });
  });
}

/**
 * Deno and Bun run their own binaries, whichever Node runs this suite: they run in the pass on the
 * pinned Node (`npm test`), not again in `npm run test:node22`, which proves the script on Node 22.
 */
const onPinnedNode = process.versions.node === pinned.node;
const HERE = onPinnedNode ? RUNTIMES : RUNTIMES.filter((runtime) => runtime.name === 'node');

describe('the end-to-end script on each runtime (built package)', () => {
  beforeAll(() => {
    buildOnce();
    for (const entry of ['index.mjs', 'sandbox.mjs', 'testing.mjs'])
      expect(existsSync(join(ROOT, 'dist', entry)), `dist/${entry}`).toBe(true);
  }, 120_000);

  for (const runtime of HERE) {
    const problem = unusable(runtime);
    if (problem !== undefined && !flag('CI') && !flag('REQUIRE_RUNTIMES')) {
      console.warn(`[runtime test skipped] ${runtime.name}: ${problem}.`);
      it.skip(`runs on ${runtime.name} (not installed here)`, () => undefined);
      continue;
    }
    it(
      `runs on ${runtime.name} ${runtime.version}`,
      async () => {
        if (problem !== undefined)
          throw new Error(`${runtime.name}: ${problem}. CI or REQUIRE_RUNTIMES is set, so this may not be skipped.`);
        const outcome = await runScript(runtime);
        const report = `${runtime.name} exited with ${outcome.code ?? outcome.signal} after ${outcome.ms} ms\n--- stdout\n${outcome.stdout}\n--- stderr\n${outcome.stderr}`;
        expect(outcome.code, report).toBe(0);
        // The version in the summary proves which binary ran: the pinned one, not one on PATH.
        expect(outcome.stdout.trim(), report).toMatch(
          new RegExp(`^runtime ${runtime.name} ${runtime.version.replaceAll('.', '\\.')}: \\d+ checks passed$`),
        );
        expect(Number(/(\d+) checks passed/.exec(outcome.stdout)?.[1]), report).toBeGreaterThanOrEqual(20);
        expect(outcome.stderr, report).toBe('');
      },
      KILL_AFTER_MS + 5_000,
    );
  }
});
