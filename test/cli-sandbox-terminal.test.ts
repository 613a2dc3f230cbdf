/**
 * `payment-service-sdk sandbox terminal <poiId>` and `sandbox terminals`: the built bin, spawned,
 * against a sandbox on 127.0.0.1. The processing time it sets is the one the sandbox then holds
 * (read back with the typed method), printed in the chosen format; a mistake is a usage error
 * (exit 2) and sends nothing; an unknown terminal and an address that is no sandbox exit 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox/index.js';
import { buildOnce, cliEnv, killAll, run, sandboxVariables } from './sandbox/cli-process.js';
import { useSandboxes } from './sandbox/support.js';

const sandboxes = useSandboxes();
let sandbox: Sandbox;
const dir = mkdtempSync(join(tmpdir(), 'cli-terminal-'));
const TERMINAL = 'V400m-TEST-000001';

beforeAll(async () => {
  buildOnce();
  ({ sandbox } = await sandboxes.start());
}, 60_000);
afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[], extra: Record<string, string | undefined> = {}) {
  const running = run(args, { env: cliEnv(join(dir, 'none.json'), { ...sandboxVariables(sandbox), ...extra }) });
  const { code } = await running.exit;
  return { code, stdout: running.stdout(), stderr: running.stderr() };
}

const OTHER_TERMINAL = 'S1F2-TEST-000002';

describe('sandbox terminal', () => {
  it('sets the processing time on the running sandbox and prints the terminal; --default and "default" go back', async () => {
    const set = await cli(['sandbox', 'terminal', TERMINAL, '--processing-ms', '35000', '--format', 'json']);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({
      poiId: TERMINAL,
      name: 'Terminal Test 1 - Mostrador',
      model: 'V400m',
      online: true,
      processingMs: 35_000,
    });
    expect(sandbox.terminals('test')[0]?.processingMs).toBe(35_000);
    expect(sandbox.terminals('live')[0]?.processingMs).toBeNull();

    const shown = await cli(['sandbox', 'terminal', TERMINAL, '--format', 'json']);
    expect(JSON.parse(shown.stdout).processingMs).toBe(35_000);
    const listed = await cli(['sandbox', 'terminals', '--format', 'ndjson']);
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).processingMs),
    ).toEqual([35_000, null, null]);

    const back = await cli(['sandbox', 'terminal', TERMINAL, '--default', '--format', 'json']);
    expect(JSON.parse(back.stdout).processingMs).toBeNull();
    await cli(['sandbox', 'terminal', TERMINAL, '--processing-ms', '10']);
    const word = await cli(['sandbox', 'terminal', TERMINAL, '--processing-ms', 'default', '--format', 'csv']);
    // CSV lines end in CRLF (RFC 4180).
    expect(word.stdout).toBe(`poiId,name,model,online,processingMs\r\n${TERMINAL},Terminal Test 1 - Mostrador,V400m,true,\r\n`);
    expect(sandbox.terminals('test')[0]?.processingMs).toBeNull();
  });

  it('sets the Live terminal with --env live and the Live key', async () => {
    const set = await cli(['--env', 'live', 'sandbox', 'terminal', TERMINAL, '--processing-ms', '500', '--format', 'json'], {
      PAYMENT_SERVICE_API_KEY: sandbox.keys.live,
    });
    expect(set.code, set.stderr).toBe(0);
    expect(sandbox.terminals('live')[0]?.processingMs).toBe(500);
    sandbox.setTerminal('live', TERMINAL, { processingMs: null });
  });

  it('takes a terminal offline and brings it online, keeping its processing time', async () => {
    const off = await cli(['sandbox', 'terminal', OTHER_TERMINAL, '--offline', '--format', 'json']);
    expect(off.code, off.stderr).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ poiId: OTHER_TERMINAL, online: false });
    expect(sandbox.terminals('test')[1]?.online).toBe(false);
    const on = await cli(['sandbox', 'terminal', OTHER_TERMINAL, '--online', '--format', 'json']);
    expect(JSON.parse(on.stdout)).toMatchObject({ poiId: OTHER_TERMINAL, online: true });
    const both = await cli(['sandbox', 'terminal', OTHER_TERMINAL, '--online', '--offline']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--offline or --online');
  });

  it('refuses a bad time as a usage error (exit 2, nothing sent); an unknown terminal and no sandbox exit 1', async () => {
    for (const args of [
      ['--processing-ms', 'slow'],
      ['--processing-ms', '-1'],
      ['--processing-ms', '600001'],
      ['--processing-ms', '5', '--default'],
    ]) {
      const answer = await cli(['sandbox', 'terminal', TERMINAL, ...args]);
      expect(answer.code, args.join(' ')).toBe(2);
      expect(answer.stderr).toMatch(/--processing-ms|--default/);
    }
    expect(sandbox.terminals('test')[0]?.processingMs).toBeNull();

    const unknown = await cli(['sandbox', 'terminal', 'NOPE-1', '--processing-ms', '5']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Terminal NOPE-1 not found');
    expect((await cli(['sandbox', 'terminal', 'NOPE-1'])).code).toBe(1);

    // An address that answers, but not as a sandbox: the command says so in one line.
    const other = createServer((_request, response) => response.writeHead(404).end('{}'));
    await new Promise<void>((listening) => other.listen(0, '127.0.0.1', listening));
    try {
      const elsewhere = await cli(['sandbox', 'terminals'], {
        PAYMENT_SERVICE_BASE_URL: `http://127.0.0.1:${(other.address() as AddressInfo).port}`,
      });
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.stderr).toContain('works against the sandbox only');
    } finally {
      other.close();
    }
  });

  it('is offered by the shell completion', async () => {
    const script = await cli(['completion', 'bash']);
    expect(script.stdout).toMatch(/"sandbox"\) words="wait image terminal terminals rotate-secret /);
    expect(script.stdout).toContain('"sandbox terminal") words="--processing-ms --default --offline --online --help"');
  });
});
