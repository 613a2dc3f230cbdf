/**
 * `npx payment-service-sdk sandbox`: the built CLI (dist/cli.cjs) run with this Node, on 127.0.0.1.
 * One JSON line on stdout, a banner on stderr, clean exit on SIGINT/SIGTERM, `--data-dir` persistence.
 */
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRedirectData, PaymentClient } from '../../src/index.js';
import { createSandbox } from '../../src/sandbox/index.js';
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
    // Well past the 200 ms resolution; polled so that a working sandbox passes fast (the bound is not a measurement).
    let [record] = await clientOf(second.info).pos.listModifications(pos.posPaymentId);
    for (const deadline = Date.now() + 10_000; record?.status !== 'success' && Date.now() < deadline; ) {
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
    const tenants = (method: 'GET' | 'POST', info: Banner) =>
      local(info, '/_sandbox/tenants', { 'x-api-key': info.keys.test }, method).then((response) => response.json());
    expect((await tenants('POST', first.info)).data.webcode).toMatch(/^T/);
    await stop(first);
    const opened = join(dir, 'opened.txt');
    const browser = join(dir, 'browser.sh');
    // Written aside and renamed: the test must never read the file between its creation and its line.
    writeFileSync(browser, `#!/bin/sh\necho "$1" > ${opened}.part && mv ${opened}.part ${opened}\n`, { mode: 0o755 });
    const second = run(['sandbox', '--port', '0', '--data-dir', dir, '--reset', '--open'], { env: { ...process.env, BROWSER: browser } });
    for (let index = 0; index < 1500 && !existsSync(opened); index++) await new Promise((done) => setTimeout(done, 20));
    const info = JSON.parse(second.stdout().split('\n')[0] ?? '{}') as Banner;
    expect(readFileSync(opened, 'utf8').trim()).toBe(`${info.baseUrl}/`);
    expect(second.stderr()).toContain('(reset at start)');
    expect((await clientOf(info).sessions.list().toArray()).length).toBe(0);
    // Made tenants, kept in the folder, are gone with their files.
    expect((await tenants('GET', info)).data.tenants).toEqual([]);
    expect(readdirSync(join(dir, 'tenants'))).toEqual(['tenants.json']);
    second.child.kill('SIGTERM');
    expect((await second.exit).code).toBe(0);
  });
});

/** A request (GET unless `method`) on the sandbox's port at 127.0.0.1, with `headers`, not following redirects. */
function local(info: Banner, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Response> {
  const { port } = new URL(info.baseUrl);
  return fetch(`http://127.0.0.1:${port}${path}`, { method, headers, redirect: 'manual' });
}

describe('payment-service-sdk sandbox beyond loopback, --allowed-host, a port in use', () => {
  it('--host 0.0.0.0 warns, uses random keys and secrets, and opens the dashboard only with the token printed once', async () => {
    const running = await startCli(['--host', '0.0.0.0']);
    await stderrContains(running, 'Press Ctrl+C');
    const stderr = running.stderr();
    expect(stderr).toMatch(/^Warning: listening on 0\.0\.0\.0, beyond loopback/);
    const { keys, clientSecrets } = running.info;
    for (const value of [keys.test, keys.live, clientSecrets.test, clientSecrets.live]) {
      expect(value).not.toMatch(/_sandbox$/);
      expect(value).toMatch(/^(sk|cs)_(test|live)_[\w-]{24}$/);
    }
    // The well-known key is refused; the printed one works.
    const control = (key: string) => local(running.info, '/_sandbox/clock', { 'x-api-key': key });
    expect((await control('sk_test_sandbox')).status).toBe(403);
    expect((await control(keys.test)).status).toBe(200);

    const link = /dashboard (http:\/\/\S+\/\?token=([\w-]+)) /.exec(stderr);
    expect(link, stderr).not.toBeNull();
    const token = link?.[2] ?? '';
    expect(stderr.split(token)).toHaveLength(2);
    expect(running.stdout()).not.toContain(token);

    const refused = await local(running.info, '/');
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toMatch(/name="token"/);
    expect((await local(running.info, '/?token=wrong')).status).toBe(401);
    const first = await local(running.info, `/test/sessions?status=pending&token=${token}`);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/test/sessions?status=pending');
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const withCookie = await local(running.info, '/', { cookie: cookie.split(';')[0] ?? '' });
    expect(withCookie.status).toBe(200);
    expect(await withCookie.text()).toMatch(/name="token"/);
    expect(await stop(running)).toEqual({ code: 0, signal: null });
  });

  it('--host 0.0.0.0 keeps keys and secrets given on the command line', async () => {
    const running = await startCli(['--host', '0.0.0.0', '--test-key', 'tk_given', '--live-secret', 'ls_given']);
    expect(running.info.keys.test).toBe('tk_given');
    expect(running.info.clientSecrets.live).toBe('ls_given');
    expect(running.info.keys.live).not.toBe('sk_live_sandbox');
    await stop(running);
  });

  it('on loopback: no warning, the documented keys, the dashboard open without a token', async () => {
    const running = await startCli([]);
    await stderrContains(running, 'Press Ctrl+C');
    expect(running.stderr()).not.toMatch(/Warning|token=/);
    expect(running.info.keys).toEqual({ test: 'sk_test_sandbox', live: 'sk_live_sandbox' });
    expect((await local(running.info, '/')).status).toBe(200);
    await stop(running);
  });

  it('--allowed-host NAME answers that Host, any other name gets 421', async () => {
    const running = await startCli(['--allowed-host', 'sandbox.shop.test']);
    const terminals = `/external/v1/test/pos/terminals?webcode=${running.info.webcode}`;
    const key = { 'x-api-key': running.info.keys.test };
    // fetch will not set Host: a raw request does.
    const withHost = (host: string) =>
      new Promise<number>((done, fail) => {
        const { port } = new URL(running.info.baseUrl);
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.end(`GET ${terminals} HTTP/1.1\r\nhost: ${host}\r\nx-api-key: ${key['x-api-key']}\r\nconnection: close\r\n\r\n`),
        );
        let text = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        socket.on('close', () => done(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
        socket.on('error', fail);
      });
    expect(await withHost('sandbox.shop.test:4010')).toBe(200);
    expect(await withHost('other.shop.test')).toBe(421);
    await stop(running);
  });

  it('refuses an empty key or secret with one line, exit 2', async () => {
    const started = run(['sandbox', '--port', '0', '--test-secret', '']);
    expect((await started.exit).code).toBe(2);
    expect(started.stderr()).toBe('payment-service-sdk: --test-secret must not be empty (see --help)\n');
  });

  it('a port in use: one line naming the port and --port, exit 1, no stack trace', async () => {
    const blocker = createServer();
    await new Promise<void>((done) => blocker.listen(0, '127.0.0.1', done));
    const { port } = blocker.address() as { port: number };
    try {
      const started = run(['sandbox', '--port', String(port)]);
      expect((await started.exit).code).toBe(1);
      expect(started.stderr()).toBe(`payment-service-sdk: port ${port} is in use: pick another with --port\n`);
      expect(started.stdout()).toBe('');
    } finally {
      await new Promise<void>((done) => blocker.close(() => done()));
    }
  });
});

describe('a database damaged past its first page', () => {
  /** A data dir holding `count` sessions, made in this process and closed. */
  async function filledDir(count: number): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-cli-damage-'));
    temporary.push(dir);
    const sandbox = createSandbox({ dataDir: dir });
    const url = `${sandbox.baseUrl}/external/v1/test/payment/session`;
    for (let index = 0; index < count; index++) {
      const response = await sandbox.handle(
        new Request(url, {
          method: 'POST',
          headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json' },
          body: JSON.stringify({ webcode: sandbox.webcode, ...sessionParams, customReference: `order-${index}` }),
        }),
      );
      if (response.status !== 201) throw new Error(`session ${index}: ${response.status}`);
    }
    await sandbox.close();
    return dir;
  }

  /** Overwrites the header of the first and last leaf pages of the sessions table with 0xFF. */
  function damageSessions(file: string): number[] {
    const db = new DatabaseSync(file);
    const pageSize = Number(db.prepare('PRAGMA page_size').get()?.page_size);
    const leaves = db
      .prepare("SELECT pageno FROM dbstat WHERE name = 'sessions' AND pagetype = 'leaf' ORDER BY path")
      .all()
      .map((row) => Number(row.pageno));
    db.close();
    const pages = [leaves[0] ?? 0, leaves.at(-1) ?? 0];
    const handle = openSync(file, 'r+');
    for (const page of pages) writeSync(handle, Buffer.alloc(16, 0xff), 0, 16, (page - 1) * pageSize);
    closeSync(handle);
    return pages;
  }

  it('sandbox --check says OK in one line on a sound file, and exits 2 without --data-dir', async () => {
    const dir = await filledDir(10);
    const sound = run(['sandbox', '--check', '--data-dir', dir]);
    expect((await sound.exit).code).toBe(0);
    expect(sound.stdout()).toBe(`${join(dir, 'sandbox.db')}: OK (every page checked)\n`);
    const missing = run(['sandbox', '--check']);
    expect((await missing.exit).code).toBe(2);
    expect(missing.stderr()).toMatch(/--check needs --data-dir/);
  });

  it('starts, answers every listing with a 500 naming the file and what to do, says it once on stderr; --check exits 1', async () => {
    const dir = await filledDir(3_000);
    const file = join(dir, 'sandbox.db');
    const pages = damageSessions(file);
    expect(Math.min(...pages)).toBeGreaterThan(1);

    const running = await startCli(['--data-dir', dir]);
    const client = clientOf(running.info);
    for (let attempt = 0; attempt < 3; attempt++) {
      const answer = await fetch(`${running.info.baseUrl}/external/v1/test/payment/sessions?webcode=${running.info.webcode}`, {
        headers: { 'x-api-key': running.info.keys.test },
      });
      expect(answer.status).toBe(500);
      const { error } = (await answer.json()) as { error: { message: string; code: number } };
      expect(error.code).toBe(19500);
      expect(error.message).toBe(
        `Sandbox error: The sandbox database ${file} is damaged (database disk image is malformed): stop the sandbox, move the file aside (mv ${file} ${file}.broken) and start it again. \`payment-service-sdk sandbox --check --data-dir DIR\` verifies a file.`,
      );
    }
    await expect(client.sessions.list().toArray()).rejects.toThrow(/is damaged/);
    await stderrContains(running, 'is damaged');
    expect(running.stderr().split(`The sandbox database ${file} is damaged`)).toHaveLength(2);
    expect(running.stderr()).toMatch(/move the file aside/);
    await stop(running);

    const checked = run(['sandbox', '--check', '--data-dir', dir]);
    expect((await checked.exit).code).toBe(1);
    expect(checked.stderr()).toMatch(new RegExp(`^payment-service-sdk: ${file.replaceAll('/', '\\/')} is damaged: .+ move the file aside`));
    expect(checked.stdout()).toBe('');
  }, 60_000);
});
