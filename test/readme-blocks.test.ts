/**
 * The code of the README and the guides of docs/ run as written, as processes against
 * `npx payment-service-sdk sandbox` (the built CLI): the merchant's path (docs/online-payments.md's
 * session, then the customer pays on the hosted page, then the `urlOk` or `urlKo` route), the POS
 * recovery block of docs/pos-payments.md, the control API call of docs/sandbox.md that adds a webhook
 * URL to a running sandbox, the CI job's Start the sandbox step (the README's and docs/testing.md's),
 * and the blocks that show values, whose `console.log(...); // comment` lines must print what their
 * comment says (`…` stands for any text).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without declarations
import { codeBlocks } from '../scripts/check-docs-code.mjs';
import { buildOnce, killAll, ROOT, type Running, startCli, stop } from './sandbox/cli-process.js';

const blocksOf = codeBlocks as (markdown: string) => { line: number; code: string }[];

/** Where the blocks are: the README, and the guides of docs/. */
const README = 'README.md';
const ONLINE = 'docs/online-payments.md';
const POS = 'docs/pos-payments.md';
const SANDBOX = 'docs/sandbox.md';
const TESTING = 'docs/testing.md';
const CLIENT = 'docs/client.md';

/** The text of the `## title` section of `file` (up to the next `## `; `level` 3 for a `### title`). */
function section(file: string, title: string, level = 2): string {
  const markdown = readFileSync(join(ROOT, file), 'utf8');
  const start = markdown.indexOf(`\n${'#'.repeat(level)} ${title}\n`);
  expect(start, `${file}: section "${title}"`).toBeGreaterThanOrEqual(0);
  const end = markdown.slice(start + 1).search(new RegExp(`\n#{1,${level}} `));
  return markdown.slice(start, end === -1 ? undefined : start + 1 + end);
}

/** The one `ts` block of a section that contains `marker`. */
function block(file: string, title: string, marker: string, level = 2): string {
  const found = blocksOf(section(file, title, level)).filter((candidate) => candidate.code.includes(marker));
  expect(found, `one ts block of ${file} "${title}" with ${marker}`).toHaveLength(1);
  return found[0]?.code ?? '';
}

/** What a block says it prints: the trailing comment of each `console.log(...);` line, in order. */
function shown(code: string): string[] {
  return code.split('\n').flatMap((line) => /^\s*console\.log\(.*\);\s*\/\/ (.*)$/.exec(line)?.[1] ?? []);
}

const escapeRegExp = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

/** Checks printed lines against shown ones, `…` matching any text. */
function expectPrinted(stdout: string, expected: string[]): void {
  const lines = stdout.trimEnd().split('\n');
  expect(lines).toHaveLength(expected.length);
  expected.forEach((comment, index) => {
    const pattern = new RegExp(`^${here(comment).split('…').map(escapeRegExp).join('.+?')}$`);
    expect(lines[index]).toMatch(pattern);
  });
}

const scripts: string[] = [];
let sandbox: Running;
/** The sandbox's address in place of the README's `http://127.0.0.1:4010`. */
const here = (text: string) => text.replaceAll('http://127.0.0.1:4010', sandbox.info.baseUrl);

/** Runs a script as a file of the repository (so `payment-service-sdk` is the built package). */
function runScript(
  name: string,
  code: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = join(ROOT, `.readme-${name}.mjs`);
  scripts.push(file);
  writeFileSync(file, code);
  const base: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PAYMENT_SERVICE_')) base[key] = value;
  const child = spawn(process.execPath, [file], { cwd: ROOT, env: { ...base, NO_COLOR: '1', ...env }, timeout: 20_000 });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (exit) => resolve({ code: exit, stdout, stderr })));
}

/** The settings docs/online-payments.md's Create a session section tells the reader to set, for this sandbox. */
function readmeSettings(): Record<string, string> {
  const settings = Object.fromEntries(
    [...section(ONLINE, 'Create a session').matchAll(/`(PAYMENT_SERVICE_[A-Z_]+)=([^`]+)`/g)].map(([, name = '', value = '']) => [
      name,
      here(value),
    ]),
  );
  expect(Object.keys(settings).sort()).toEqual([
    'PAYMENT_SERVICE_API_KEY',
    'PAYMENT_SERVICE_BASE_URL',
    'PAYMENT_SERVICE_CLIENT_SECRET',
    'PAYMENT_SERVICE_WEBCODE',
  ]);
  return settings;
}

beforeAll(async () => {
  buildOnce();
  // As the README starts it (`--port 4010`), on a free port.
  sandbox = await startCli(['--pos-delay-ms', '0']);
}, 60_000);
afterAll(async () => {
  for (const file of scripts) rmSync(file, { force: true });
  if (sandbox) await stop(sandbox);
  killAll();
});

describe("docs/online-payments.md's merchant path against the CLI sandbox", () => {
  // What the reader has before the blocks: the client the section says to make, an Express app and
  // an order store. After them, the customer: opens the page, pays (or is declined) with
  // payTestSession, and is sent back to the shop, whose answer is printed on stderr as JSON.
  const prelude = `import express from 'express';
import { PaymentClient } from 'payment-service-sdk';
import { payTestSession } from 'payment-service-sdk/testing';
const client = new PaymentClient();
const orders = new Map();
const findOrder = async (id) => orders.get(id);
const saveOrder = async (order) => void orders.set(order.id, order);
const app = express();
const server = await new Promise((resolve) => { const listening = app.listen(0, '127.0.0.1', () => resolve(listening)); });
`;
  const customer = `
const page = await (await fetch(session.paymentUrl)).text();
const outcome = await payTestSession(session.paymentUrl, { holderName: process.env.HOLDER_NAME || undefined });
const back = new URL(outcome.redirectUrl);
const answer = await fetch(\`http://127.0.0.1:\${server.address().port}\${back.pathname}\${back.search}\`);
console.error(JSON.stringify({ lang: /<html lang="([^"]*)"/.exec(page)?.[1], redirectUrl: outcome.redirectUrl, status: answer.status, body: await answer.text() }));
server.close();
`;
  const create = () => block(ONLINE, 'Create a session', 'sessions.create(');
  const paid = () => block(ONLINE, 'Verify the redirect', "app.get('/paid'");
  const failed = () => block(ONLINE, 'Verify the redirect', "app.get('/failed'");
  const walk = (name: string, holderName = '') =>
    runScript(name, [prelude, create(), paid(), failed(), customer].join('\n'), { ...readmeSettings(), HOLDER_NAME: holderName });
  const answerOf = (stderr: string) => JSON.parse(stderr.trimEnd().split('\n').at(-1) ?? '{}');

  it('creates the session, the customer pays, and /paid verifies the data appended to urlOk', async () => {
    const result = await walk('merchant-paid');
    expect(result.code, result.stderr).toBe(0);
    expectPrinted(result.stdout, [...shown(create()), ...shown(paid())]);
    const answer = answerOf(result.stderr);
    // shopperLocale set the page's language; `data` went after the query urlOk already had.
    expect(answer.lang).toBe('en-GB');
    expect(answer.redirectUrl).toMatch(/^https:\/\/shop\.example\/paid\?order=order-1042&data=[\w.-]+$/);
    expect(answer).toMatchObject({ status: 200, body: expect.stringMatching(/^Paid: SANDBOX-PXTT-\d+$/) });
  }, 30_000);

  it('a declined customer reaches urlKo with no data, and /failed finds out why from the session', async () => {
    const result = await walk('merchant-failed', 'DECLINED');
    expect(result.code, result.stderr).toBe(0);
    expectPrinted(result.stdout, [...shown(create()), ...shown(failed())]);
    const answer = answerOf(result.stderr);
    expect(answer.redirectUrl).toBe('https://shop.example/failed?order=order-1042');
    expect(answer).toMatchObject({ status: 200, body: expect.stringMatching(/^Not paid \(failed\)/) });
  }, 30_000);
});

describe("docs/pos-payments.md's POS recovery block", () => {
  const recovery = () => block(POS, 'Charge at a terminal', 'PosPaymentPendingError');
  const prelude = `import { PaymentClient } from 'payment-service-sdk';
const client = new PaymentClient();
const poiId = process.env.POI_ID;
const authorisationReceived = new Promise(() => {});
const saveForLater = async () => {};
`;
  const run = (name: string, poiId: string) => runScript(name, `${prelude}${recovery()}`, { ...readmeSettings(), POI_ID: poiId });

  it('prints the payment it charged', async () => {
    const result = await run('pos-success', 'V400m-TEST-000001');
    expect(result.code, result.stderr).toBe(0);
    expectPrinted(result.stdout, shown(recovery()));
  }, 30_000);

  it('rethrows an error that is not PosPaymentPendingError (an offline terminal)', async () => {
    const result = await run('pos-offline', 'P400Plus-TEST-000003');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/TerminalCommunicationError/);
    expect(result.stdout).toBe('');
  }, 30_000);
});

describe("the README's and the guides' blocks that show values print them", () => {
  for (const [file, title, marker] of [
    [CLIENT, 'References', 'parseReference('],
    [TESTING, 'Test mode', 'posTestAmount('],
    [README, 'The sandbox', 'createSandbox('],
    [SANDBOX, 'In a script, a test or a shell', 'createSandbox('],
  ] as const) {
    it(`${file}: ${title}`, async () => {
      const code = block(file, title, marker);
      expect(shown(code).length).toBeGreaterThan(0);
      const result = await runScript(`shows-${`${file}-${title}`.replace(/\W/g, '-').toLowerCase()}`, code);
      expect(result.code, result.stderr).toBe(0);
      expectPrinted(result.stdout, shown(code));
    }, 30_000);
  }
});

describe('a webhook URL added to a running sandbox, as docs/sandbox.md says', () => {
  it('the control API call of its Webhook URLs section adds it and answers the list', async () => {
    const sandboxSection = section(SANDBOX, 'Webhook URLs');
    const command = /^curl .*\/_sandbox\/webhook-urls .*$/m.exec(sandboxSection)?.[0];
    expect(command).toBeDefined();
    // The curl command's parts (a shell's quoting): method, headers, body and URL.
    const words = [...(command ?? '').matchAll(/'([^']*)'|(\S+)/g)].map(([, quoted, bare]) => quoted ?? bare ?? '');
    const request = { method: 'GET', headers: {} as Record<string, string>, body: '', url: '' };
    for (let index = 1; index < words.length; index++) {
      const word = words[index] ?? '';
      const value = () => words[++index] ?? '';
      if (word === '-X') request.method = value();
      else if (word === '-H') {
        const [name = '', ...rest] = value().split(':');
        request.headers[name.trim()] = rest.join(':').trim();
      } else if (word === '-d') request.body = value();
      else if (!word.startsWith('-')) request.url = here(word);
    }
    const answer = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body || null });
    const said = /It answers the list, `([^`]+)`/.exec(sandboxSection)?.[1];
    expect(await answer.json()).toEqual(JSON.parse(said ?? 'null'));
    const listed = await fetch(`${sandbox.info.baseUrl}/_sandbox/webhook-urls`, { headers: { 'x-api-key': sandbox.info.keys.test } });
    expect((await listed.json()).data.urls).toEqual([JSON.parse(request.body).url]);
  });
});

describe('the CI job of the README and docs/testing.md: its Start the sandbox step, run as written by sh', () => {
  /** The YAML block of the README's Test in CI section, and of docs/testing.md's GitHub Actions recipe. */
  const jobs = () => [
    /```yaml\n([\s\S]*?)```/.exec(section(README, 'Test in CI', 3))?.[1] ?? '',
    /```yaml\n([\s\S]*?)```/.exec(section(TESTING, 'GitHub Actions: the sandbox started by the job', 3))?.[1] ?? '',
  ];

  it('is the same job in both', () => {
    const [readme, guide] = jobs();
    expect(readme).toContain('- name: Start the sandbox');
    expect(readme).toBe(guide);
  });

  /** The `run: |` lines of the step named `name` of the job. */
  function stepRun(name: string): string {
    const yaml = jobs()[0] ?? '';
    const step = yaml.split(/^- name: /m).find((part) => part.startsWith(`${name}\n`)) ?? '';
    const lines = step.split('\n').slice(2);
    expect(step.split('\n')[1]?.trim(), `step ${name}`).toBe('run: |');
    return lines.map((line) => line.replace(/^ {4}/, '')).join('\n');
  }

  /** Runs `script` with sh, `npx payment-service-sdk` being the built bin (a shim first on PATH). */
  async function sh(script: string, temp: string): Promise<{ code: number | null; stderr: string; ms: number }> {
    const bin = join(temp, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'npx'), `#!/bin/sh\nshift\nexec '${process.execPath}' '${join(ROOT, 'dist/cli.cjs')}' "$@"\n`, { mode: 0o755 });
    const started = performance.now();
    const child = spawn('sh', ['-c', script], {
      cwd: temp,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, RUNNER_TEMP: temp },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // `exit`, not `close`: the step's sandbox keeps running in the background, holding stderr open.
    const code = await new Promise<number | null>((done) => child.on('exit', done));
    return { code, stderr, ms: performance.now() - started };
  }

  it('returns once the sandbox is ready, the ready file there; stopped, the file goes', async () => {
    const temp = mkdtempSync(join(tmpdir(), 'readme-ci-'));
    try {
      const step = stepRun('Start the sandbox');
      expect(step).toContain('sandbox wait --ready-file "$RUNNER_TEMP/sandbox.json"');
      const result = await sh(step, temp);
      expect(result.code, result.stderr).toBe(0);
      const ready = JSON.parse(readFileSync(join(temp, 'sandbox.json'), 'utf8')) as { baseUrl: string; pid: number };
      expect((await fetch(`${ready.baseUrl}/_sandbox/clock`, { headers: { 'x-api-key': 'sk_test_sandbox' } })).status).toBe(200);
      process.kill(ready.pid, 'SIGTERM');
      for (let polls = 0; polls < 200 && existsSync(join(temp, 'sandbox.json')); polls++) await new Promise((done) => setTimeout(done, 50));
      expect(existsSync(join(temp, 'sandbox.json'))).toBe(false);
    } finally {
      // A failed check above must not leave the step's sandbox running.
      const left = join(temp, 'sandbox.json');
      if (existsSync(left)) process.kill((JSON.parse(readFileSync(left, 'utf8')) as { pid: number }).pid, 'SIGKILL');
      rmSync(temp, { recursive: true, force: true });
    }
  }, 60_000);

  it('fails at once, saying why, when the sandbox stops before it is ready (its port in use)', async () => {
    const temp = mkdtempSync(join(tmpdir(), 'readme-ci-'));
    try {
      const port = new URL(sandbox.info.baseUrl).port;
      const step = stepRun('Start the sandbox').replace('--port 0', `--port ${port}`);
      const result = await sh(step, temp);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/payment-service-sdk: the sandbox \(pid \d+\) stopped before it was ready: port \d+ is in use/);
      // Well before the step's 30 s timeout.
      expect(result.ms).toBeLessThan(25_000);
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the PAYMENT_SANDBOX_ variables the guides set (CI services, docker-compose) name flags of `payment-service-sdk sandbox`', () => {
  it('each is a flag of sandbox --help, as PAYMENT_SANDBOX_<FLAG>', async () => {
    const { stdout } = await new Promise<{ stdout: string }>((done) => {
      const child = spawn(process.execPath, [join(ROOT, 'dist/cli.cjs'), 'sandbox', '--help'], { cwd: ROOT });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      child.on('close', () => done({ stdout: out }));
    });
    const flags = new Set(
      [...stdout.matchAll(/--([a-z][a-z-]+)/g)].map(([, flag = '']) => `PAYMENT_SANDBOX_${flag.replaceAll('-', '_').toUpperCase()}`),
    );
    expect(flags.has('PAYMENT_SANDBOX_ALLOWED_HOST')).toBe(true);
    const used = new Set(
      [TESTING, 'docs/sandbox-container.md', SANDBOX].flatMap((file) =>
        [...readFileSync(join(ROOT, file), 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)].flatMap(([, yaml = '']) =>
          [...yaml.matchAll(/\b(PAYMENT_SANDBOX_[A-Z_]+):/g)].map(([, name = '']) => name),
        ),
      ),
    );
    expect(used.size).toBeGreaterThanOrEqual(4);
    expect([...used].filter((name) => !flags.has(name))).toEqual([]);
  });
});
