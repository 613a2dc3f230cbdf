/**
 * The code in README.md and docs/: every `ts` block type-checks with `strict` against the built
 * package (scripts/check-docs-code.mjs, also `npm run check:docs`), docs/sandbox.md's "pay a session
 * from a script" runs as written against `npx payment-service-sdk sandbox`, and
 * docs/sandbox-tenants-fixtures.md's tenants block runs as written and exits by itself.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without declarations
import { checkDocsCode, codeBlocks } from '../scripts/check-docs-code.mjs';
import { buildOnce, killAll, ROOT, startCli, stop } from './sandbox/cli-process.js';

interface Checked {
  blocks: number;
  problems: string[];
}
const check = checkDocsCode as (options?: { files?: string[]; sources?: Record<string, string> }) => Checked;
const blocksOf = codeBlocks as (markdown: string) => { line: number; code: string }[];

beforeAll(buildOnce, 60_000);
afterAll(killAll);

describe('code blocks of README.md and docs/', () => {
  it('every ts block compiles with strict against the built package', () => {
    const { blocks, problems } = check();
    // 50 when the README held most of them; moved into the guides of docs/, none dropped, and the
    // README's map has short blocks of its own.
    expect(blocks).toBeGreaterThanOrEqual(61);
    expect(problems).toEqual([]);
  }, 60_000);

  it('reports a block that uses an export without importing it, at its Markdown line', () => {
    const markdown = [
      '# Title',
      '',
      '```ts',
      "import { PaymentClient } from 'payment-service-sdk';",
      "const ok = new PaymentClient({ apiKey: 'k', webcode: 'W', baseUrl: 'http://127.0.0.1:1' });",
      '```',
      '',
      '```ts',
      "const missing = new PaymentClient({ apiKey: 'k' });",
      "client.sessions.create({ amount: { value: 1, currency: 'EUR' } });",
      '```',
    ].join('\n');
    const { blocks, problems } = check({ files: ['GUIDE.md'], sources: { 'GUIDE.md': markdown } });
    expect(blocks).toBe(2);
    expect(problems).toEqual([
      expect.stringMatching(/^GUIDE\.md:9:21 TS2304: Cannot find name 'PaymentClient'/),
      // `client` comes from the shared context, but the call lacks urlOk and urlKo.
      expect.stringMatching(/^GUIDE\.md:10:24 TS2345: /),
    ]);
  }, 60_000);
});

describe("docs/sandbox-tenants-fixtures.md's tenants block", () => {
  const script = join(ROOT, '.docs-tenants.mjs');
  afterAll(() => rmSync(script, { force: true }));

  it('runs as written, prints what its comment says and exits by itself (it closes the sandbox)', async () => {
    const guide = readFileSync(join(ROOT, 'docs/sandbox-tenants-fixtures.md'), 'utf8');
    const found = blocksOf(guide).filter((candidate) => candidate.code.includes('sandbox.createTenant('));
    expect(found).toHaveLength(1);
    writeFileSync(script, found[0]?.code ?? '');
    // A process that is still running after the bound is killed: a block that never exits fails here.
    const child = spawn(process.execPath, [script], { cwd: ROOT, timeout: 15_000, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) =>
      child.on('close', (exit, killed) => done([exit, killed])),
    );
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(stdout).toBe('true\n');
  }, 30_000);
});

describe("docs/sandbox.md's script that pays a session on the CLI sandbox", () => {
  const script = join(ROOT, '.readme-pay.mjs');
  afterAll(() => rmSync(script, { force: true }));

  it('runs as written and prints a paid, completed session', async () => {
    const found = blocksOf(readFileSync(join(ROOT, 'docs/sandbox.md'), 'utf8')).filter((candidate) =>
      candidate.code.includes('const outcome = await payTestSession('),
    );
    expect(found).toHaveLength(1);
    const block = found[0];
    expect(block?.code).toContain("baseUrl: 'http://127.0.0.1:4010'");
    // The guide's sandbox listens on 4010; this one on a free port, with the guide's defaults otherwise.
    const sandbox = await startCli(['--port', '0', '--pos-delay-ms', '0']);
    try {
      writeFileSync(script, (block?.code ?? '').replace('http://127.0.0.1:4010', sandbox.info.baseUrl));
      const { stdout } = await promisify(execFile)(process.execPath, [script], { cwd: ROOT, timeout: 20_000 });
      expect(stdout.trim()).toMatch(/^true completed SANDBOX-PXTT-\d+$/);
    } finally {
      await stop(sandbox);
    }
  }, 30_000);
});
