/**
 * The CLI's pieces a CI script needs (issue 31): `sessions pay`, the `--created-from/--created-to`
 * date filters, `--fixture -`, one CSV column order per record type, `sandbox wait` and
 * `export --summary json`. The built bin against sandboxes on 127.0.0.1.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentClient } from '../src/index.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { buildOnce, cliEnv, killAll, run, sandboxVariables } from './sandbox/cli-process.js';
import { sessionParams, useSandboxes } from './sandbox/support.js';

const sandboxes = useSandboxes();
let sandbox: Sandbox;
let client: PaymentClient;
const dir = mkdtempSync(join(tmpdir(), 'cli-pieces-'));

beforeAll(async () => {
  buildOnce();
  ({ sandbox, test: client } = await sandboxes.start({ modificationResolveMs: 50 }));
}, 60_000);
afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

function envFor(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return cliEnv(join(dir, 'none.json'), { ...sandboxVariables(sandbox), ...extra });
}

async function cli(args: string[], extra: Record<string, string | undefined> = {}, input?: string) {
  const started = run(args, { env: envFor(extra), ...(input === undefined ? {} : { input }) });
  const { code } = await started.exit;
  return { code, stdout: started.stdout(), stderr: started.stderr() };
}

/** A server that answers every request as the real service answers an unknown route: 404, failure envelope. */
async function notASandbox(): Promise<{ url: string; requests: string[]; server: Server }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ success: false, error: { message: 'Not found', code: 10004, statusCode: 404, traceId: 't' } }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}

describe('sessions pay', () => {
  it('pays a pending session as a name that pays, and prints the completed session', async () => {
    const { sessionId } = await client.sessions.create(sessionParams);
    const result = await cli(['sessions', 'pay', sessionId, '--format', 'json']);
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as { sessionId: string; status: string; paymentStatus?: string };
    expect(printed).toMatchObject({ sessionId, status: 'completed', paymentStatus: 'AUTHORISED' });
    expect((await client.sessions.retrieve(sessionId)).status).toBe('completed');
  });

  it('--holder picks the outcome: DECLINED fails the session, recorded as paid by the control API under that name', async () => {
    const { sessionId } = await client.sessions.create(sessionParams);
    const result = await cli(['sessions', 'pay', sessionId, '--holder', 'declined', '--format', 'json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ sessionId, status: 'failed' });
    expect(sandbox.records.session(sessionId)?.controlPayment).toMatchObject({ from: 'control', holderName: 'declined' });
  });

  it('a session that is not pending: exit 1 with the sandbox refusal; a holder under 3 characters: exit 2, nothing sent', async () => {
    const { sessionId } = await client.sessions.create(sessionParams);
    expect((await cli(['sessions', 'pay', sessionId])).code).toBe(0);
    const again = await cli(['sessions', 'pay', sessionId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^payment-service-sdk: The sandbox refused POST \/_sandbox\/test\/sessions\/\S+\/pay: .+\n$/);
    const other = await client.sessions.create(sessionParams);
    const short = await cli(['sessions', 'pay', other.sessionId, '--holder', ' ab ']);
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/--holder must have at least 3 characters/);
    expect((await client.sessions.retrieve(other.sessionId)).status).toBe('pending');
  });

  it('against the real service (not a sandbox): one line, exit 1, nothing sent but the probe', async () => {
    const service = await notASandbox();
    try {
      const result = await cli(['sessions', 'pay', 'abc'], { PAYMENT_SERVICE_BASE_URL: service.url });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`payment-service-sdk: sessions pay works against the sandbox only, and ${service.url} is not one\n`);
      expect(service.requests).toEqual(['GET /_sandbox/clock']);
    } finally {
      service.server.close();
    }
  });
});

/** A CSV's lines as fields (no quoted commas in these tests' data). */
const csvRows = (text: string) =>
  text
    .trimEnd()
    .split('\r\n')
    .map((line) => line.split(','));

describe('--created-from / --created-to, and one CSV column order per record type', () => {
  let dated: Sandbox;
  let datedClient: PaymentClient;
  /** The three UTC days the records were made on, and what each day holds. */
  const days: { day: string; sessions: string[]; pos: string[]; refunds: string[] }[] = [];
  const datedEnv = () => ({
    PAYMENT_SERVICE_API_KEY: dated.keys.test,
    PAYMENT_SERVICE_WEBCODE: dated.webcode,
    PAYMENT_SERVICE_BASE_URL: dated.baseUrl,
  });
  const on = (args: string[], input?: string) => cli(args, datedEnv(), input);

  beforeAll(async () => {
    ({ sandbox: dated, test: datedClient } = await sandboxes.start({ modificationResolveMs: 50 }));
    for (let index = 0; index < 3; index++) {
      if (index > 0) await dated.advanceClock(86_400_000);
      const made = { day: '', sessions: [] as string[], pos: [] as string[], refunds: [] as string[] };
      for (let count = 0; count < 2; count++) {
        const session = await datedClient.sessions.create(sessionParams);
        made.sessions.push(session.sessionId);
        const pos = await datedClient.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 1500, currency: 'EUR' } });
        made.pos.push(pos.posPaymentId ?? '');
        const refund = await datedClient.modifications.refund({
          paymentReference: pos.posPaymentId ?? '',
          amount: { value: 100, currency: 'EUR' },
        });
        made.refunds.push(refund.refundReference ?? '');
      }
      made.day = (await datedClient.sessions.retrieve(made.sessions[0] ?? '')).createdAt?.slice(0, 10) ?? '';
      days.push(made);
    }
  }, 60_000);

  it('sessions list and export sessions keep the sessions of a whole UTC day (the CLI filters), with one header', async () => {
    const middle = days[1];
    const listed = await on([
      'sessions',
      'list',
      '--all',
      '--created-from',
      middle?.day ?? '',
      '--created-to',
      middle?.day ?? '',
      '--format',
      'csv',
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    const exported = await on([
      'export',
      'sessions',
      '--created-from',
      middle?.day ?? '',
      '--created-to',
      middle?.day ?? '',
      '--format',
      'csv',
      '--take',
      '2',
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    const [listHeader, ...listRows] = csvRows(listed.stdout);
    const [exportHeader, ...exportRows] = csvRows(exported.stdout);
    expect(listHeader).toEqual(exportHeader);
    expect(listHeader?.slice(0, 4)).toEqual(['sessionId', 'status', 'amount.value', 'amount.currency']);
    expect(listRows.map((row) => row[0]).sort()).toEqual([...(middle?.sessions ?? [])].sort());
    expect(exportRows).toEqual(listRows);
  });

  it('pos list and export pos send the range as the service filters: an ISO date-time, the last day onwards', async () => {
    const last = days[2];
    const from = `${last?.day}T00:00:00Z`;
    const listed = await on(['pos', 'list', '--all', '--created-from', from, '--format', 'csv']);
    expect(listed.code, listed.stderr).toBe(0);
    const exported = await on(['export', 'pos', '--created-from', from, '--format', 'csv']);
    expect(exported.code, exported.stderr).toBe(0);
    const [listHeader, ...listRows] = csvRows(listed.stdout);
    const [exportHeader, ...exportRows] = csvRows(exported.stdout);
    expect(listHeader).toEqual(exportHeader);
    expect(listRows.map((row) => row[0]).sort()).toEqual([...(last?.pos ?? [])].sort());
    expect(exportRows.map((row) => row[0]).sort()).toEqual([...(last?.pos ?? [])].sort());
    const both = await on(['pos', 'list', '--created-from', from, '--created-at-start', '2026-01-01 00:00:00']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--created-at-start, not both/);
  });

  it('modifications list and export: up to the end of the first day, and one header', async () => {
    const first = days[0];
    const listed = await on(['modifications', 'list', '--all', '--created-to', first?.day ?? '', '--format', 'csv']);
    expect(listed.code, listed.stderr).toBe(0);
    const exported = await on(['export', 'modifications', '--created-to', first?.day ?? '', '--format', 'csv']);
    expect(exported.code, exported.stderr).toBe(0);
    const [listHeader, ...listRows] = csvRows(listed.stdout);
    const [exportHeader, ...exportRows] = csvRows(exported.stdout);
    expect(listHeader).toEqual(exportHeader);
    expect(listRows.map((row) => row[0]).sort()).toEqual([...(first?.refunds ?? [])].sort());
    expect(exportRows).toEqual(listRows);
  });

  it('the help says where each range applies; a bad value is a usage error naming the flag', async () => {
    expect((await on(['sessions', 'list', '--help'])).stdout).toMatch(/--created-from <date>[\s\S]*applied by the CLI/);
    expect((await on(['export', 'modifications', '--help'])).stdout).toMatch(/--created-to <date>[\s\S]*applied by the CLI/);
    expect((await on(['pos', 'list', '--help'])).stdout).toMatch(/sent as the service's own date filters/);
    expect((await on(['export', 'pos', '--help'])).stdout).toMatch(/sent as the service's own date filters/);
    for (const [flag, value] of [
      ['--created-from', '2026-02-30'],
      ['--created-to', 'yesterday'],
      ['--created-from', '2026-11-27T25:00:00Z'],
    ] as const) {
      for (const command of [
        ['sessions', 'list'],
        ['export', 'pos'],
        ['modifications', 'list'],
      ]) {
        const result = await on([...command, flag, value]);
        expect(result.code, `${command.join(' ')} ${flag} ${value}`).toBe(2);
        expect(result.stderr).toMatch(new RegExp(`^payment-service-sdk: ${flag} must be a date \\(YYYY-MM-DD.*got ${value}`));
      }
    }
    const backwards = await on(['export', 'sessions', '--created-from', '2026-11-27', '--created-to', '2026-11-26']);
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toMatch(/--created-from 2026-11-27 is after --created-to 2026-11-26/);
  });

  it('export --summary json ends stderr with one JSON line { rows, pages, durationMs }', async () => {
    const result = await on(['export', 'sessions', '--format', 'ndjson', '--take', '4', '--summary', 'json']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stderr.trimEnd().split('\n');
    const summary = JSON.parse(lines.at(-1) ?? '') as Record<string, unknown>;
    expect(Object.keys(summary)).toEqual(['rows', 'pages', 'durationMs']);
    expect(summary).toMatchObject({ rows: 6, pages: 2, durationMs: expect.any(Number) });
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(6);
    const bad = await on(['export', 'sessions', '--summary', 'yaml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--summary takes json, got yaml/);
  });
});

describe('trigger --fixture - reads standard input', () => {
  it('runs the fixture piped in', async () => {
    const text = readFileSync(join(import.meta.dirname, '../examples/fixtures/declined.json'), 'utf8');
    const result = await cli(['trigger', '--fixture', '-', '--format', 'json'], {}, text);
    expect(result.code, result.stderr).toBe(0);
    const made = JSON.parse(result.stdout) as { step: string; type: string; status: string }[];
    expect(made.map(({ step, type, status }) => ({ step, type, status }))).toEqual([
      { step: 'session', type: 'session', status: 'failed' },
    ]);
  });

  it('an empty or bad standard input, or --api-key - beside it: exit 2 naming standard input, nothing made', async () => {
    const before = sandbox.records.sessions().length;
    const empty = await cli(['trigger', '--fixture', '-'], {}, '');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(
      /^payment-service-sdk: the fixture on standard input is not JSON: it ends before its last value is complete/,
    );
    const unknown = await cli(['trigger', '--fixture', '-'], {}, '{"steps":[{"name":"a","action":"nope","params":{}}]}');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^payment-service-sdk: the fixture on standard input: /);
    const both = await cli(
      ['--api-key', '-', 'trigger', '--fixture', '-'],
      { PAYMENT_SERVICE_API_KEY: undefined },
      `${sandbox.keys.test}\n`,
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--fixture - and --api-key - both read standard input/);
    expect(sandbox.records.sessions()).toHaveLength(before);
  });
});

describe('sandbox wait', () => {
  const temp = () => mkdtempSync(join(dir, 'wait-'));

  it('returns once the sandbox writing the file is ready, waiting for it to start', async () => {
    const path = join(temp(), 'ready.json');
    const waiting = run(['sandbox', 'wait', '--ready-file', path, '--timeout', '60'], { env: envFor() });
    const sandboxRun = run(['sandbox', '--port', '0', '--ready-file', path], { env: envFor() });
    try {
      const { code } = await waiting.exit;
      expect(code, waiting.stderr()).toBe(0);
      const ready = JSON.parse(readFileSync(path, 'utf8')) as { baseUrl: string; pid: number };
      expect(ready.pid).toBe(sandboxRun.child.pid);
      expect(waiting.stderr()).toBe(`The sandbox at ${ready.baseUrl} is ready (pid ${ready.pid}).\n`);
      expect(waiting.stdout()).toBe('');
    } finally {
      sandboxRun.child.kill('SIGTERM');
      await sandboxRun.exit;
    }
  });

  it('a file left by a sandbox killed with SIGKILL: exit 1 naming it, not the timeout', async () => {
    const path = join(temp(), 'ready.json');
    const sandboxRun = run(['sandbox', '--port', '0', '--ready-file', path], { env: envFor() });
    expect((await run(['sandbox', 'wait', '--ready-file', path], { env: envFor() }).exit).code).toBe(0);
    sandboxRun.child.kill('SIGKILL');
    await sandboxRun.exit;
    const waiting = run(['sandbox', 'wait', '--ready-file', path, '--timeout', '50'], { env: envFor() });
    const started = performance.now();
    expect((await waiting.exit).code).toBe(1);
    expect(waiting.stderr()).toMatch(/^payment-service-sdk: the sandbox of \S+ready\.json \(pid \d+\) is no longer running/);
    expect(performance.now() - started).toBeLessThan(40_000);
  });

  it('a sandbox stopped by a signal before it was ready, a timeout, a bad --timeout, no --ready-file', async () => {
    const folder = temp();
    const path = join(folder, 'ready.json');
    // What a sandbox stopped before it was ready leaves (its pid gone).
    writeFileSync(`${path}.starting`, JSON.stringify({ pid: 999_999_999, failed: 'stopped by SIGTERM' }));
    const stopped = await cli(['sandbox', 'wait', '--ready-file', path]);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toBe('payment-service-sdk: the sandbox (pid 999999999) stopped before it was ready: stopped by SIGTERM\n');
    const timeout = await cli(['sandbox', 'wait', '--ready-file', join(folder, 'never.json'), '--timeout', '0.5']);
    expect(timeout.code).toBe(1);
    expect(timeout.stderr).toMatch(/no sandbox was ready at \S+never\.json after 0\.5 s: no sandbox started writing/);
    const bad = await cli(['sandbox', 'wait', '--ready-file', path, '--timeout', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--timeout must be a number of seconds/);
    const none = await cli(['sandbox', 'wait']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/sandbox wait needs --ready-file FILE/);
  });
});
