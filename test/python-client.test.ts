/**
 * The client in another language of docs/testing.md: examples/python/sandbox_client.py, of which
 * the guide shows an excerpt and the command that runs it, run as written with python3 (standard library only) against the sandbox's container
 * on the host's network, as the guide runs it, and against the CLI sandbox (so it is checked where
 * no container can run; under REQUIRE_CONTAINERS=1 the container run is required too).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../src/index.js';
import { PaymentSandboxContainer } from '../src/testcontainers/index.js';
import { buildOnce, killAll, ROOT, type Running, startCli, stop } from './sandbox/cli-process.js';
import { dockerApi } from './support/sandbox-image.js';

const SCRIPT = join(ROOT, 'examples/python/sandbox_client.py');
const GUIDE = readFileSync(join(ROOT, 'docs/testing.md'), 'utf8');
const children = new Set<ChildProcess>();

/** The guide's "Clients in other languages" section. */
function guideSection(): string {
  const start = GUIDE.indexOf('\n## Clients in other languages\n');
  expect(start, 'docs/testing.md section "Clients in other languages"').toBeGreaterThanOrEqual(0);
  const end = GUIDE.indexOf('\n## ', start + 1);
  return GUIDE.slice(start, end === -1 ? undefined : end);
}

/** The blocks of the section in `language`. */
function guideBlocks(language: string): string[] {
  return [...guideSection().matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((match) => match[1] ?? '');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Runs the script with python3 and `env` on top of this process's environment; a 60 s limit. */
function runScript(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('python3', [SCRIPT], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

/** What the script prints when every step checked out, for the default webcode. */
function expectFlow(stdout: string, webhookPort: number): void {
  const lines = stdout.trimEnd().split('\n');
  const expected = [
    new RegExp(`^webhooks on http://127\\.0\\.0\\.1:${webhookPort}/webhooks$`),
    /^session SANDBOX-EXTT-\d+: pending$/,
    /^urlOk data verified: SANDBOX-PXTT-\d+ 2599 EUR AUTHORISED$/,
    /^webhook AUTHORISATION SANDBOX-PXTT-\d+ order-1042: session completed$/,
    /^refund SANDBOX-RFXT-\d+: pending$/,
    /^webhook REFUND SANDBOX-RFXT-\d+: success$/,
    /^session SANDBOX-EXTT-\d+: cancelled, sent to urlKo$/,
    /^listed 2 sessions in 2 pages: completed, cancelled$/,
  ];
  expect(lines).toHaveLength(expected.length);
  for (const [index, pattern] of expected.entries()) expect(lines[index]).toMatch(pattern);
  // The references printed are the ones the webhooks and the token carried.
  const payment = /urlOk data verified: (\S+)/.exec(stdout)?.[1];
  expect(stdout).toContain(`webhook AUTHORISATION ${payment} `);
  const refund = /^refund (\S+):/m.exec(stdout)?.[1];
  expect(stdout).toContain(`webhook REFUND ${refund}: success`);
}

/** The sandbox's own records after a run: the paid session refunded, the other cancelled. */
async function expectRecords(baseUrl: string): Promise<void> {
  const client = new PaymentClient({ apiKey: 'sk_test_sandbox', webcode: 'SANDBOX', baseUrl, maxRetries: 0 });
  const sessions = await client.sessions.list().toArray();
  expect(sessions.map((session) => session.status).sort()).toEqual(['cancelled', 'completed']);
  const refunds = await client.modifications.list({ type: 'refund' }).toArray();
  expect(refunds).toHaveLength(1);
  expect(refunds[0]).toMatchObject({ status: 'success', amount: { value: 2599, currency: 'EUR' } });
}

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  killAll();
});

it('the guide runs the file the tests run, and its excerpt is a part of that file, as written', () => {
  const [commands = ''] = guideBlocks('sh');
  expect(commands).toContain('python3 examples/python/sandbox_client.py\n');
  expect(existsSync(join(ROOT, 'examples/python/sandbox_client.py'))).toBe(true);
  const excerpts = guideBlocks('python');
  expect(excerpts.length).toBeGreaterThan(0);
  const script = readFileSync(SCRIPT, 'utf8');
  for (const excerpt of excerpts) expect(script, excerpt.slice(0, 80)).toContain(excerpt);
});

describe('against the CLI sandbox', () => {
  let sandbox: Running;
  let webhookPort: number;

  beforeAll(async () => {
    buildOnce();
    webhookPort = await freePort();
    sandbox = await startCli(['--pos-delay-ms', '0', '--webhook-url', `http://127.0.0.1:${webhookPort}/webhooks`]);
  });

  afterAll(async () => {
    if (sandbox) await stop(sandbox);
  });

  it('pays, verifies the token, receives both webhooks, refunds, cancels and walks the listing', async () => {
    const result = await runScript({ SANDBOX_URL: sandbox.info.baseUrl, WEBHOOK_PORT: String(webhookPort) });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expectFlow(result.stdout, webhookPort);
    await expectRecords(sandbox.info.baseUrl);
  }, 60_000);

  it('exits 1 when the token was signed with another secret', async () => {
    const result = await runScript({
      SANDBOX_URL: sandbox.info.baseUrl,
      WEBHOOK_PORT: String(await freePort()),
      SANDBOX_CLIENT_SECRET: 'cs_test_not_this_one',
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('FAILED: bad signature: not made with this client secret');
    expect(result.stdout).not.toContain('urlOk data verified');
  }, 60_000);

  it("exits 1 with the service's failure envelope when the key is refused", async () => {
    const result = await runScript({
      SANDBOX_URL: sandbox.info.baseUrl,
      WEBHOOK_PORT: String(await freePort()),
      SANDBOX_API_KEY: 'sk_test_wrong',
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(/^FAILED: POST \/payment\/session: 403 11008 \S/);
    expect(result.stderr).not.toContain('sk_test_wrong');
  }, 60_000);
});

const api = await dockerApi();
const image = api?.image;
afterAll(() => api?.stop());

describe.skipIf(image === undefined)('against the container on the host network', () => {
  it('runs the same flow with the README command (--network host, --host 127.0.0.1, --webhook-url to the script)', async () => {
    const [port, webhookPort] = [await freePort(), await freePort()];
    const container = await new PaymentSandboxContainer(image)
      .withHostNetwork(port)
      .withWebhookUrl(`http://127.0.0.1:${webhookPort}/webhooks`)
      .withPosDelayMs(0)
      .start();
    try {
      expect(container.getBaseUrl()).toBe(`http://127.0.0.1:${port}`);
      const result = await runScript({ SANDBOX_URL: container.getBaseUrl(), WEBHOOK_PORT: String(webhookPort) });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expectFlow(result.stdout, webhookPort);
      await expectRecords(container.getBaseUrl());
    } finally {
      await container.stop();
    }
  }, 120_000);
});
