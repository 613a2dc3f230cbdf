/**
 * What test/pos-functions.test.ts and test/pos-soak.test.ts share: the invocation runner
 * (test/fixtures/pos-function.ts) bundled from src once, each invocation a child process that is
 * SIGKILLed at its platform's limit (counted from its `started` phase, as a platform counts from the
 * invocation, not from the process's start) or at a phase of its life the test aims at, and the
 * counts read back from the sandbox and the deadline log.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import type { Sandbox } from '../../src/sandbox/index.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const PLATFORMS = ['lambda', 'vercel', 'worker'] as const;
export type Platform = (typeof PLATFORMS)[number];
export const PHASES = ['started', 'saved', 'sending', 'reading', 'polling'] as const;
export type Phase = (typeof PHASES)[number];

/** The runner bundled into a folder of the repository (its packages resolve from node_modules). */
export async function bundleRunner(): Promise<{ file: string; dir: string; remove(): void }> {
  const dir = mkdtempSync(join(ROOT, '.test-bundle-'));
  const file = join(dir, 'pos-function.mjs');
  await esbuild.build({
    entryPoints: [join(ROOT, 'test/fixtures/pos-function.ts')],
    outfile: file,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    packages: 'external',
    alias: { 'payment-service-sdk': join(ROOT, 'src/index.ts') },
    logLevel: 'silent',
  });
  return { file, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Invocation {
  platform: Platform;
  action: 'charge' | 'status';
  orderId: string;
  /** The platform's limit, scaled down: the child is SIGKILLed this long after its `started` phase. */
  limitMs: number;
  /** Kill sooner: `afterMs` after the child reports `phase` (if it ever does). */
  kill?: { phase: Phase; afterMs: number } | undefined;
  /** Extra FN_* settings (FN_MARGIN_MS, FN_GRACE_MS, FN_RECOVER, FN_HOLD_SAVE_MS, FN_HOLD_READ_MS). */
  settings?: Record<string, string> | undefined;
}

export interface Invoked {
  /** The answer, when the invocation lived to give it. */
  answer?: { status: number; body: { status: string; posPaymentId?: string; attempt?: number } } | undefined;
  /** Killed: at the limit, or at the phase aimed at. */
  killed?: 'limit' | Phase | undefined;
  /** The phases it reported, with their times from its start. */
  phases: [string, number][];
  exit: { code: number | null; signal: NodeJS.Signals | null };
  output: string;
}

export interface World {
  runner: string;
  sandbox: Sandbox;
  ordersFile: string;
  callsFile: string;
}

const children = new Set<ChildProcess>();

/** Kills every invocation still running (afterAll). */
export function killAll(): void {
  for (const child of children) child.kill('SIGKILL');
}

/** Runs one invocation to its end: its answer, or its kill. A bound of 60 s holds a stuck child (killed then). */
export function invoke(world: World, invocation: Invocation): Promise<Invoked> {
  const { sandbox } = world;
  const child = spawn(process.execPath, [world.runner], {
    cwd: ROOT,
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PAYMENT_SERVICE_'))),
      PAYMENT_SERVICE_API_KEY: sandbox.keys.test,
      PAYMENT_SERVICE_WEBCODE: sandbox.webcode,
      PAYMENT_SERVICE_BASE_URL: sandbox.baseUrl,
      PAYMENT_SERVICE_ENVIRONMENT: 'test',
      FN_PLATFORM: invocation.platform,
      FN_ACTION: invocation.action,
      FN_ORDER: invocation.orderId,
      FN_LIMIT_MS: String(invocation.limitMs),
      FN_ORDERS: world.ordersFile,
      FN_CALLS: world.callsFile,
      ...invocation.settings,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const result: Invoked = { phases: [], exit: { code: null, signal: null }, output: '' };
  const timers: NodeJS.Timeout[] = [];
  const killAt = (why: Invoked['killed'], ms: number) =>
    timers.push(
      setTimeout(() => {
        if (child.exitCode !== null || child.signalCode !== null || result.answer) return;
        result.killed ??= why;
        child.kill('SIGKILL');
      }, ms),
    );
  killAt('limit', 60_000);
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    result.output += chunk;
    pending += chunk;
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (line.startsWith('phase ')) {
        const [, name = '', at] = line.split(' ');
        result.phases.push([name, Number(at)]);
        if (name === 'started') killAt('limit', invocation.limitMs);
        if (invocation.kill && name === invocation.kill.phase && result.phases.filter(([seen]) => seen === name).length === 1)
          killAt(invocation.kill.phase, invocation.kill.afterMs);
      } else if (line.startsWith('answer ')) {
        const space = line.indexOf(' ', 7);
        result.answer = { status: Number(line.slice(7, space)), body: JSON.parse(line.slice(space + 1)) };
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (result.output += chunk));
  return new Promise((done) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      for (const timer of timers) clearTimeout(timer);
      result.exit = { code, signal };
      done(result);
    }),
  );
}

/** The POS charges of one order in the sandbox, by status (the examples send `customReference` `<order>/<attempt>`). */
export function chargesOf(sandbox: Sandbox, orderId: string) {
  const charges = sandbox.records.posPayments().filter((payment) => payment.customReference?.startsWith(`${orderId}/`));
  return {
    all: charges,
    success: charges.filter((payment) => payment.status === 'success'),
    failed: charges.filter((payment) => payment.status === 'failed'),
    open: charges.filter((payment) => payment.status === 'pending' || payment.status === 'timeout'),
  };
}

/** Every deadline-bound POS call of the invocations: how long after its deadline it settled (ms; negative: before). */
export function overshoots(callsFile: string): { method: string; outcome: string; overshoot: number }[] {
  let text = '';
  try {
    text = readFileSync(callsFile, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { method: string; deadline: number; settled: number; outcome: string })
    .map(({ method, deadline, settled, outcome }) => ({ method, outcome, overshoot: settled - deadline }));
}

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
