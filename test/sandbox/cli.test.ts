/**
 * `npx payment-service-sdk sandbox`: the built CLI (dist/cli.cjs) run with this Node, on 127.0.0.1.
 * One JSON line on stdout, a banner on stderr, clean exit on SIGINT/SIGTERM, `--data-dir` persistence.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRedirectData, PaymentClient } from '../../src/index.js';
import { type Banner, buildOnce, killAll, run, startCli, stderrContains, stop } from './cli-process.js';
import { type Receiver, sessionParams, startReceiver, submitForm, URL_OK } from './support.js';

function clientOf(info: Banner, environment: 'test' | 'live' = 'test'): PaymentClient {
  return new PaymentClient({ apiKey: info.keys[environment], webcode: info.webcode, baseUrl: info.baseUrl, environment, maxRetries: 0 });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  return typeof address === 'object' && address ? address.port : 0;
}

const temporary: string[] = [];
const receivers: Receiver[] = [];

// `npm test` builds before vitest; build here only when run on its own.
beforeAll(buildOnce, 60_000);

afterAll(async () => {
  killAll();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

describe('payment-service-sdk sandbox (CLI)', () => {
  it('prints one JSON line with baseUrl, webcode, keys and clientSecrets, a banner on stderr, and serves the SDK', async () => {
    const running = await startCli([]);
    expect(Object.keys(running.info).sort()).toEqual(['baseUrl', 'clientSecrets', 'keys', 'webcode']);
    expect(running.info.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(running.info.webcode).toEqual(expect.any(String));
    expect(running.info.keys).toEqual({ test: expect.any(String), live: expect.any(String) });
    expect(running.info.clientSecrets).toEqual({ test: expect.any(String), live: expect.any(String) });
    await stderrContains(running, running.info.baseUrl);
    expect(running.stderr()).not.toContain('{"baseUrl"');

    const client = clientOf(running.info);
    expect(await client.terminals.list()).toHaveLength(3);
    const session = await client.sessions.create({ ...sessionParams });
    expect(session.paymentUrl.startsWith(`${running.info.baseUrl}/pay-external-test/`)).toBe(true);
    const live = await clientOf(running.info, 'live').sessions.create({ ...sessionParams });
    expect(live.sessionId).toContain('-EXT-');

    expect(await stop(running, 'SIGTERM')).toEqual({ code: 0, signal: null });
    // Only the JSON line on stdout.
    expect(running.stdout()).toBe(`${running.line}\n`);
  });

  it('takes --port, --host, --webcode, keys, secrets, --webhook-url (repeatable) and --pos-delay-ms', async () => {
    const port = await freePort();
    const first = await startReceiver();
    const second = await startReceiver();
    receivers.push(first, second);
    const running = await startCli([
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--webcode',
      'CLISHOP',
      '--test-key',
      'tk_cli',
      '--live-key',
      'lk_cli',
      '--test-secret',
      'ts_cli',
      '--live-secret',
      'ls_cli',
      '--webhook-url',
      first.url,
      '--webhook-url',
      second.url,
      '--pos-delay-ms',
      '0',
    ]);
    expect(JSON.parse(running.line)).toEqual({
      baseUrl: `http://127.0.0.1:${port}`,
      webcode: 'CLISHOP',
      keys: { test: 'tk_cli', live: 'lk_cli' },
      clientSecrets: { test: 'ts_cli', live: 'ls_cli' },
    });
    const client = clientOf(running.info);
    const session = await client.sessions.create({ ...sessionParams });
    expect(session.sessionId).toMatch(/^CLISHOP-EXTT-\d+$/);
    const answer = await submitForm(session.paymentUrl);
    expect(answer.target?.startsWith(URL_OK)).toBe(true);
    const data = await decodeRedirectData(new URL(answer.target ?? '').searchParams.get('data') ?? '', 'ts_cli');
    expect(data.paymentReference).toMatch(/^CLISHOP-PXTT-\d+$/);

    const began = Date.now();
    const pos = await client.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' } });
    expect(pos.status).toBe('success');
    expect(Date.now() - began).toBeLessThan(1_500);

    // Both receivers get both events (AUTHORISATION of the session and of the POS payment).
    for (const receiver of [first, second]) {
      const received = await receiver.waitFor(2);
      expect(received.map((item) => item.json.data.paymentReference).sort()).toEqual([data.paymentReference, pos.posPaymentId].sort());
    }
    expect(await stop(running, 'SIGINT')).toEqual({ code: 0, signal: null });
  });

  it('applies a --pos-delay-ms to POS payments', async () => {
    const running = await startCli(['--pos-delay-ms', '300']);
    const began = Date.now();
    await clientOf(running.info).pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' } });
    expect(Date.now() - began).toBeGreaterThanOrEqual(290);
    expect((await stop(running)).code).toBe(0);
  });

  it('keeps the state in memory by default: a restart starts empty', async () => {
    const first = await startCli(['--pos-delay-ms', '0']);
    const session = await clientOf(first.info).sessions.create({ ...sessionParams });
    expect((await stop(first)).code).toBe(0);
    const second = await startCli(['--pos-delay-ms', '0']);
    await expect(clientOf(second.info).sessions.retrieve(session.sessionId)).rejects.toMatchObject({ status: 404 });
    expect((await stop(second)).code).toBe(0);
  });

  it('keeps the state across restarts with --data-dir, in DIR/sandbox.db (SQLite)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-cli-'));
    temporary.push(dir);
    const first = await startCli(['--data-dir', dir, '--pos-delay-ms', '0']);
    const client = clientOf(first.info);
    const pending = await client.sessions.create({ ...sessionParams, customReference: 'kept-1' });
    const paidSession = await client.sessions.create({ ...sessionParams }, { idempotencyKey: 'persisted-key' });
    await submitForm(paidSession.paymentUrl);
    const pos = await client.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' } });
    expect((await stop(first)).code).toBe(0);

    // A clean stop checkpoints the write-ahead log into the database file.
    expect(readdirSync(dir)).toEqual(['sandbox.db']);
    expect(readFileSync(join(dir, 'sandbox.db')).subarray(0, 16).toString('latin1')).toBe('SQLite format 3\u0000');

    const second = await startCli(['--data-dir', dir, '--pos-delay-ms', '0']);
    const again = clientOf(second.info);
    expect(await again.sessions.retrieve(pending.sessionId)).toMatchObject({ status: 'pending', customReference: 'kept-1' });
    const paid = await again.sessions.retrieve(paidSession.sessionId);
    expect(paid).toMatchObject({ status: 'completed', paymentStatus: 'AUTHORISED' });
    expect((await again.pos.list().toArray()).map((item) => item.posPaymentId)).toEqual([pos.posPaymentId]);
    // The idempotency record survived too: a replay returns the stored session.
    const replay = await again.sessions.create({ ...sessionParams }, { idempotencyKey: 'persisted-key' });
    expect(replay.sessionId).toBe(paidSession.sessionId);
    // New identifiers do not collide with the stored ones.
    const fresh = await again.sessions.create({ ...sessionParams });
    expect([pending.sessionId, paidSession.sessionId]).not.toContain(fresh.sessionId);
    expect((await again.sessions.list().toArray()).length).toBe(3);
    expect((await stop(second)).code).toBe(0);
    expect(readdirSync(dir)).toEqual(['sandbox.db']);
  });

  it('resolves a refund acknowledged just before a restart once it runs again with --data-dir', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-cli-'));
    temporary.push(dir);
    const first = await startCli(['--data-dir', dir, '--pos-delay-ms', '0']);
    const client = clientOf(first.info);
    const pos = await client.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' } });
    const refund = await client.modifications.refund({ paymentReference: pos.posPaymentId, reason: 'restart' });
    expect(refund.status).toBe('pending');
    expect((await stop(first)).code).toBe(0);

    const second = await startCli(['--data-dir', dir, '--pos-delay-ms', '0']);
    // Well past the 200 ms resolution; polled so that a working sandbox passes fast.
    let [record] = await clientOf(second.info).pos.listModifications(pos.posPaymentId);
    for (const deadline = Date.now() + 800; record?.status !== 'success' && Date.now() < deadline; ) {
      await new Promise((done) => setTimeout(done, 50));
      [record] = await clientOf(second.info).pos.listModifications(pos.posPaymentId);
    }
    // Modifications resolve to success (the REFUND webhook is due within 1 s); a restart must not strand them.
    expect(record).toMatchObject({ operationReference: refund.refundReference, status: 'success' });
    expect((await stop(second)).code).toBe(0);
  });

  it('takes --max-body-bytes and --idempotency-ttl-ms', async () => {
    const running = await startCli(['--max-body-bytes', '400', '--idempotency-ttl-ms', '300']);
    const post = (body: Record<string, unknown>) =>
      fetch(`${running.info.baseUrl}/external/v1/test/payment/session`, {
        method: 'POST',
        headers: { 'x-api-key': running.info.keys.test, 'content-type': 'application/json', 'idempotency-key': 'ttl-key' },
        body: JSON.stringify({ webcode: running.info.webcode, ...sessionParams, ...body }),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
    const large = await post({ description: 'x'.repeat(500) });
    expect(large.status).toBe(413);
    expect(large.body.error.code).toBe(19413);
    const first = await post({});
    expect(first.status).toBe(201);
    expect((await post({})).body.data.sessionId).toBe(first.body.data.sessionId);
    await new Promise((done) => setTimeout(done, 350));
    expect((await post({})).body.data.sessionId).not.toBe(first.body.data.sessionId);
    expect((await stop(running)).code).toBe(0);
  });

  it('prints one stderr line per failed webhook attempt: id, event, URL, status or error, and the next retry', async () => {
    const failing = await startReceiver({ failFirst: 1, failStatus: 503 });
    receivers.push(failing);
    const closed = `http://127.0.0.1:${await freePort()}/hooks`;
    const running = await startCli(['--port', '0', '--pos-delay-ms', '0', '--webhook-url', failing.url, '--webhook-url', closed]);
    const client = clientOf(running.info);
    const session = await client.sessions.create({ ...sessionParams });
    expect((await submitForm(session.paymentUrl)).status).toBeLessThan(400);
    const { paymentReference } = await client.sessions.retrieve(session.sessionId);
    await stderrContains(running, `to ${closed} failed: fetch failed`);
    await stderrContains(running, `to ${failing.url} failed: HTTP 503, attempt 1; next retry in 1 s`);
    await failing.waitFor(1, 5_000);
    const lines = running
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('webhook '));
    // One line for the receiver's failure (its retry succeeded); the closed port keeps failing.
    expect(lines.filter((line) => line.includes(failing.url))).toHaveLength(1);
    expect(lines).toContainEqual(
      `webhook 1 (AUTHORISATION ${paymentReference}) to ${failing.url} failed: HTTP 503, attempt 1; next retry in 1 s`,
    );
    expect(lines.find((line) => line.includes(closed))).toMatch(
      new RegExp(
        `^webhook 2 \\(AUTHORISATION ${paymentReference}\\) to ${closed.replaceAll('.', '\\.')} failed: fetch failed: connect ECONNREFUSED .*, attempt 1; next retry in 1 s$`,
      ),
    );
    // Nothing about the delivery that then succeeded, and nothing on stdout but the JSON line.
    expect(running.stdout()).toBe(`${running.line}\n`);
    await stop(running, 'SIGTERM');
  });

  it('exits with status 2 and one line pointing to --help on a bad option', async () => {
    for (const args of [
      ['sandbox', '--port', 'eighty'],
      ['sandbox', '--no-such-flag'],
    ]) {
      const started = run(args);
      const { code } = await started.exit;
      expect(code).toBe(2);
      expect(started.stderr()).toMatch(/^payment-service-sdk: .*(--port|--no-such-flag).*\(see --help\)\n$/);
      expect(started.stdout()).toBe('');
    }
  });

  it('--reset starts a --data-dir sandbox empty; --open hands the dashboard address to $BROWSER', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-cli-reset-'));
    temporary.push(dir);
    const first = await startCli(['--data-dir', dir]);
    await clientOf(first.info).sessions.create({ ...sessionParams });
    await stop(first);
    const opened = join(dir, 'opened.txt');
    const browser = join(dir, 'browser.sh');
    writeFileSync(browser, `#!/bin/sh\necho "$1" > ${opened}\n`, { mode: 0o755 });
    const second = run(['sandbox', '--port', '0', '--data-dir', dir, '--reset', '--open'], { env: { ...process.env, BROWSER: browser } });
    for (let index = 0; index < 200 && !existsSync(opened); index++) await new Promise((done) => setTimeout(done, 20));
    const info = JSON.parse(second.stdout().split('\n')[0] ?? '{}') as Banner;
    expect(readFileSync(opened, 'utf8').trim()).toBe(`${info.baseUrl}/`);
    expect(second.stderr()).toContain('(reset at start)');
    expect((await clientOf(info).sessions.list().toArray()).length).toBe(0);
    second.child.kill('SIGTERM');
    expect((await second.exit).code).toBe(0);
  });
});
