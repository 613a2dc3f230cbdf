/**
 * `payment-service-sdk logs tail` and `logs show`: the built bin against a sandbox on 127.0.0.1.
 * Under tmux, `tail` prints every entry once, in the order the sandbox logged them, while 20
 * clients write; its filters keep what they say; `show` prints an entry with both bodies; against a
 * server that is not a sandbox both say so in one line and exit 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../src/index.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { buildOnce, cliEnv, killAll, run, sandboxVariables } from './sandbox/cli-process.js';
import { raw, sessionParams, useSandboxes } from './sandbox/support.js';
import { hasTmux, inTmux, quietly } from './support/tmux.js';

const sandboxes = useSandboxes();
let sandbox: Sandbox;
const dir = mkdtempSync(join(tmpdir(), 'cli-logs-'));
const sessionsNames: string[] = [];

beforeAll(async () => {
  buildOnce();
  ({ sandbox } = await sandboxes.start({ modificationResolveMs: 50 }));
}, 60_000);
afterAll(() => {
  killAll();
  for (const name of sessionsNames) quietly('tmux', ['kill-session', '-t', name]);
  rmSync(dir, { recursive: true, force: true });
});

const envFor = (extra: Record<string, string | undefined> = {}) =>
  cliEnv(join(dir, 'none.json'), { ...sandboxVariables(sandbox), ...extra });

async function cli(args: string[], extra: Record<string, string | undefined> = {}) {
  const started = run(args, { env: envFor(extra) });
  const { code } = await started.exit;
  return { code, stdout: started.stdout(), stderr: started.stderr() };
}

/** A client of the sandbox's Test environment, as an app would make one (no retries: each call is one request). */
const appClient = () =>
  new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl: sandbox.baseUrl, environment: 'test', maxRetries: 0 });

interface Entry {
  id: string;
  status: number;
  operation: string | null;
  idempotencyKey: string | null;
  requestBody: string | null;
  responseBody: string | null;
}

/** A session create the sandbox refuses (400: no amount), sent raw: the SDK would refuse it before sending. */
async function refusedCreate(): Promise<void> {
  const { amount: _amount, ...rest } = sessionParams;
  expect((await raw(sandbox, 'POST', '/payment/session', { body: rest })).status).toBe(400);
}

/** Every entry of the Test log after `afterSeq`, oldest first, through the control API. */
async function logged(afterSeq: number): Promise<Entry[]> {
  const entries: Entry[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const url = `${sandbox.baseUrl}/_sandbox/test/requests?take=100${cursor ? `&cursor=${cursor}` : ''}`;
    const body = (await (await fetch(url, { headers: { 'x-api-key': sandbox.keys.test } })).json()) as {
      data: { items: Entry[]; cursor: string | null; hasMore: boolean };
    };
    entries.push(...body.data.items);
    if (!body.data.hasMore) break;
    cursor = body.data.cursor;
  }
  return entries.filter((entry) => seq(entry.id) > afterSeq).reverse();
}

const seq = (id: string) => Number(/-REQ-(\d+)$/.exec(id)?.[1] ?? Number.NaN);
const newestSeq = async () => (await logged(0)).reduce((max, entry) => Math.max(max, seq(entry.id)), 0);

/** Waits (bounded) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let polls = 0; polls < 600; polls++) {
    if (await check()) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`never: ${what}`);
}

/** A `logs tail` child with its stdout lines; resolves once it is following. */
async function tailing(args: string[]) {
  const started = run(['logs', 'tail', ...args], { env: envFor() });
  await until(() => started.stderr().includes('Following the request log'), `tail started: ${started.stderr()}`);
  return started;
}

describe.skipIf(!hasTmux)('logs tail on a terminal', () => {
  it('prints every entry once, in order, while 20 clients write', async () => {
    const start = await newestSeq();
    const name = `cli-logs-${process.pid}`;
    sessionsNames.push(name);
    const pane = inTmux(name, ['logs', 'tail'], envFor());
    await pane.until(/Following the request log/);
    const clients = Array.from({ length: 20 }, appClient);
    await Promise.all(
      clients.map(async (client, index) => {
        for (let count = 0; count < 4; count++) {
          await client.sessions.create({ ...sessionParams, customReference: `c${index}-${count}` });
          // A refused one among them: its entry is printed with why.
          if (count === 2) await refusedCreate();
        }
      }),
    );
    const expected = await logged(start);
    expect(expected.length).toBeGreaterThanOrEqual(100);
    const lastId = expected.at(-1)?.id ?? '';
    // The whole scrollback, wrapped lines joined.
    const history = () => quietly('tmux', ['capture-pane', '-p', '-J', '-S', '-', '-t', name]);
    await until(() => history().includes(lastId), `${lastId} on the screen`);
    const printed = history()
      .split('\n')
      .flatMap((line) => /\b(\S+-REQ-\d+)\b/.exec(line)?.[1] ?? []);
    expect(printed).toEqual(expected.map((entry) => entry.id));
    const refused = history()
      .split('\n')
      .filter((line) => / 400 /.test(line));
    expect(refused, history()).toHaveLength(20);
    // Coloured by class on a terminal (yellow 4xx, green 2xx), the colour's escape never printed as text.
    expect(history()).not.toContain('\\x1b');
    const coloured = quietly('tmux', ['capture-pane', '-p', '-e', '-J', '-S', '-', '-t', name]);
    expect(coloured).toContain('\u001b[33m400');
    expect(coloured).toContain('\u001b[32m201');
    expect(history()).not.toContain(sandbox.keys.test);
    // Why it was refused ends the line.
    expect(refused[0]).toMatch(/POST +\/external\/v1\/test\/payment\/session +createSession +\d+ ms +\S+-REQ-\d+ +\S/);
    pane.press('C-c');
    await pane.until(/\[exit 0\]/);
  }, 120_000);
});

describe('logs tail filters, logs show', () => {
  it('--status 4xx, --operation and --idempotency-key keep what they say; --format json is one entry per line', async () => {
    const client = appClient();
    const refused = await tailing(['--status', '4xx', '--format', 'json']);
    const refunds = await tailing(['--operation', 'refund', '--format', 'json']);
    const keyed = await tailing(['--idempotency-key', 'order-77', '--format', 'json']);
    const start = await newestSeq();
    await client.sessions.create(sessionParams, { idempotencyKey: 'order-77' });
    await client.sessions.create(sessionParams, { idempotencyKey: 'order-77' });
    await refusedCreate();
    const pos = await client.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 1500, currency: 'EUR' } });
    await client.modifications.refund({ paymentReference: pos.posPaymentId ?? '', amount: { value: 100, currency: 'EUR' } });
    await client.modifications.refund({ paymentReference: 'nothing-here', amount: { value: 100, currency: 'EUR' } }).catch(() => undefined);
    const all = await logged(start);
    const lines = (output: string) =>
      output
        .trimEnd()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Entry);
    const expectOf = (keep: (entry: Entry) => boolean) => all.filter(keep).map((entry) => entry.id);
    const wants = [
      [refused, expectOf((entry) => entry.status >= 400 && entry.status < 500)],
      [refunds, expectOf((entry) => entry.operation === 'refund')],
      [keyed, expectOf((entry) => entry.idempotencyKey === 'order-77')],
    ] as const;
    for (const [child, ids] of wants) {
      await until(() => child.stdout().includes(ids.at(-1) ?? '-'), `${ids.at(-1)} printed`);
      expect(lines(child.stdout()).map((entry) => entry.id)).toEqual(ids);
      child.child.kill('SIGINT');
      expect((await child.exit).code).toBe(0);
    }
    expect(wants[0][1]).toHaveLength(2);
    expect(wants[1][1]).toHaveLength(2);
    expect(wants[2][1]).toHaveLength(2);
  });

  it('logs show prints an entry with both bodies; --format json the entry whole', async () => {
    const start = await newestSeq();
    await refusedCreate();
    const [entry] = await logged(start);
    expect(entry).toBeDefined();
    const text = await cli(['logs', 'show', entry?.id ?? '']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^POST /external/v1/test/payment/session\\nid +${entry?.id}\\n`));
    expect(text.stdout).toMatch(/request body\n {2}\{\n {4}"webcode": "SANDBOX",/);
    expect(text.stdout).toMatch(/response body\n {2}\{\n {4}"success": false/);
    expect(text.stdout).not.toContain(sandbox.keys.test);
    const json = await cli(['logs', 'show', entry?.id ?? '', '--format', 'json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(entry);
    const missing = await cli(['logs', 'show', 'SANDBOX-REQ-999999999']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^payment-service-sdk: The sandbox refused GET \/_sandbox\/test\/requests\/SANDBOX-REQ-999999999: /);
  });

  it('a bad --status or --format is a usage error (exit 2)', async () => {
    const status = await cli(['logs', 'tail', '--status', '4xy']);
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(/--status must be a status code \(202\) or a class \(4xx, 5xx\), got 4xy/);
    const format = await cli(['logs', 'tail', '--format', 'csv']);
    expect(format.code).toBe(2);
  });
});

describe('logs from a script (issue 37, item 1)', () => {
  it('logs list prints what already happened with the filters and --since, oldest first, JSON lines off a terminal; exit 0', async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    await refusedCreate();
    await refusedCreate();
    const listed = await cli(['logs', 'list', '--since', since, '--status', '4xx', '--operation', 'createSession']);
    expect(listed.code, listed.stderr).toBe(0);
    const entries = listed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Entry);
    expect(entries.length).toBeGreaterThanOrEqual(2);
    expect(entries.every((entry) => entry.status === 400 && entry.operation === 'createSession')).toBe(true);
    const numbers = entries.map((entry) => Number(entry.id.split('-').pop()));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    const future = await cli(['logs', 'list', '--since', new Date(Date.now() + 3_600_000).toISOString()]);
    expect(future).toMatchObject({ code: 0, stdout: '' });
    for (const bad of ['-1', '99999', '2026-01-31']) {
      const refused = await cli(['logs', 'list', '--since', bad]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('--since must be an ISO 8601 date-time');
    }
  });

  it('logs tail off a terminal writes JSON lines, and ends by itself with --count or --timeout (exit 0)', async () => {
    const counted = run(['logs', 'tail', '--count', '2', '--timeout', '60s'], { env: envFor() });
    const deadline = Date.now() + 30_000;
    while (!counted.stderr().includes('Following') && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50));
    await refusedCreate();
    await refusedCreate();
    await refusedCreate();
    expect((await counted.exit).code).toBe(0);
    const lines = counted.stdout().trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ status: 400, operation: 'createSession' });
    expect(counted.stderr()).toContain('Stops after 2 entries or after 60s');
    const timed = await cli(['logs', 'tail', '--timeout', '300ms']);
    expect(timed).toMatchObject({ code: 0, stdout: '' });
    const bad = await cli(['logs', 'tail', '--count', '0']);
    expect(bad.code).toBe(2);
  });
});

describe('against a server that is not a sandbox', () => {
  it('logs tail and logs show say so in one line and exit 1', async () => {
    const requests: string[] = [];
    const service = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success: false, error: { message: 'Not found', code: 10004, statusCode: 404, traceId: 't' } }));
    });
    await new Promise<void>((done) => service.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    try {
      for (const args of [
        ['logs', 'tail'],
        ['logs', 'show', 'X-REQ-1'],
      ]) {
        const result = await cli(args, { PAYMENT_SERVICE_BASE_URL: url });
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(
          `payment-service-sdk: ${args.slice(0, 2).join(' ')} works against the sandbox only, and ${url} is not one\n`,
        );
      }
      expect(requests).toEqual(['GET /_sandbox/clock', 'GET /_sandbox/clock']);
    } finally {
      service.close();
    }
  });
});
