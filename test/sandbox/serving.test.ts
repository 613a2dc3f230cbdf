/**
 * What the container image relies on, tested on the built CLI over real HTTP (127.0.0.1): the
 * flags as PAYMENT_SANDBOX_* variables, the links given out on the address each request came by
 * (or the public URL), the documented keys beyond loopback only with --trusted-network, and a stop
 * on SIGTERM that finishes what is in flight and loses no acknowledged write.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOnce, killAll, type Running, run } from './cli-process.js';

const dirs: string[] = [];
beforeAll(buildOnce);
afterAll(() => {
  killAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-serving-'));
  dirs.push(dir);
  return dir;
}

/** This process's environment without any PAYMENT_SANDBOX_* variable, then `variables`. */
function envWith(variables: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('PAYMENT_SANDBOX_')) env[name] = value;
  return { ...env, ...variables };
}

/** `sandbox --port 0 ...args` with `variables`, once its JSON line is out. */
async function start(args: string[], variables: Record<string, string> = {}): Promise<Running> {
  const started = run(['sandbox', '--port', '0', ...args], { env: envWith(variables) });
  const line = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`No JSON line; stderr: ${started.stderr()}`)), 5_000);
    started.child.stdout?.on('data', () => {
      const end = started.stdout().indexOf('\n');
      if (end < 0) return;
      clearTimeout(timer);
      done(started.stdout().slice(0, end));
    });
    void started.exit.then(() => {
      clearTimeout(timer);
      fail(new Error(`exited early; stderr: ${started.stderr()}`));
    });
  });
  return { ...started, line, info: JSON.parse(line) };
}

interface Answer {
  status: number;
  body: any;
  text: string;
}

/** A request to the sandbox on 127.0.0.1:`port` with the `Host` given (fetch cannot set one). */
function call(
  port: number,
  options: { method?: string; path: string; host?: string | undefined; headers?: Record<string, string>; body?: unknown },
): Promise<Answer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        agent: false,
        headers: {
          host: options.host ?? `127.0.0.1:${port}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
      },
      (incoming) => {
        let text = '';
        incoming.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        incoming.on('end', () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({ status: incoming.statusCode ?? 0, body: parsed, text });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const portOf = (running: Running) => Number(new URL(running.info.baseUrl).port || 80);

const session = (webcode = 'SANDBOX') => ({
  webcode,
  amount: { value: 1000, currency: 'EUR' },
  urlOk: 'http://localhost:3000/ok',
  urlKo: 'http://localhost:3000/ko',
});

function createSession(port: number, options: { host?: string; key?: string; webcode?: string; idempotencyKey?: string } = {}) {
  return call(port, {
    method: 'POST',
    path: '/external/v1/test/payment/session',
    host: options.host,
    headers: {
      'x-api-key': options.key ?? 'sk_test_sandbox',
      ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
    },
    body: session(options.webcode),
  });
}

/** A POS payment of 10.00 EUR on the first Test terminal, with the Idempotency-Key `pos-1`. */
function payAtTerminal(port: number): Promise<Answer> {
  return call(port, {
    method: 'POST',
    path: '/external/v1/test/pos/payment',
    headers: { 'x-api-key': 'sk_test_sandbox', 'idempotency-key': 'pos-1' },
    body: { webcode: 'SANDBOX', poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' } },
  });
}

/** A port nothing listens on now, on 127.0.0.1. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

describe('sandbox flags as PAYMENT_SANDBOX_* variables', { timeout: 30_000 }, () => {
  it('takes every setting from its variable, lists from commas or spaces, and a flag given wins', async () => {
    const sandbox = await start(['--webcode', 'FROMFLAG'], {
      PAYMENT_SANDBOX_WEBCODE: 'FROMENV',
      PAYMENT_SANDBOX_TEST_KEY: 'sk_test_fromenv',
      PAYMENT_SANDBOX_WEBHOOK_URL: 'http://127.0.0.1:9/a, http://127.0.0.1:9/b http://127.0.0.1:9/c',
      PAYMENT_SANDBOX_ALLOWED_HOST: 'sandbox,shop-sandbox',
    });
    expect(sandbox.info.webcode).toBe('FROMFLAG');
    expect(sandbox.info.keys.test).toBe('sk_test_fromenv');
    const port = portOf(sandbox);
    const urls = await call(port, { path: '/_sandbox/webhook-urls', headers: { 'x-api-key': 'sk_test_fromenv' } });
    expect(urls.body.data.urls).toEqual(['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b', 'http://127.0.0.1:9/c']);
    // Both names of the list are accepted in Host; another is not.
    expect((await call(port, { path: '/openapi.json', host: 'shop-sandbox:4010' })).status).toBe(200);
    expect((await call(port, { path: '/openapi.json', host: 'sandbox' })).status).toBe(200);
    expect((await call(port, { path: '/openapi.json', host: 'other:4010' })).status).toBe(421);
    sandbox.child.kill('SIGTERM');
    await sandbox.exit;
  });

  it('seeds from PAYMENT_SANDBOX_SEED as from --seed, and refuses a switch variable that is not true or false', async () => {
    const tokens: string[] = [];
    for (const [args, variables] of [
      [[], { PAYMENT_SANDBOX_SEED: '7' }],
      [['--seed', '7'], {}],
      [[], {}],
    ] as const) {
      const sandbox = await start([...args], variables);
      tokens.push(new URL((await createSession(portOf(sandbox))).body.data.paymentUrl).pathname);
      sandbox.child.kill('SIGTERM');
      await sandbox.exit;
    }
    expect(tokens[0]).toBe(tokens[1]);
    expect(tokens[2]).not.toBe(tokens[0]);

    const refused = run(['sandbox', '--port', '0'], { env: envWith({ PAYMENT_SANDBOX_TRUSTED_NETWORK: 'maybe' }) });
    expect((await refused.exit).code).toBe(2);
    expect(refused.stderr()).toContain('PAYMENT_SANDBOX_TRUSTED_NETWORK must be true or false');
  });

  it('names each flag’s variable in --help', async () => {
    const help = run(['sandbox', '--help']);
    await help.exit;
    const text = help.stdout().replace(/\s+/g, ' ');
    for (const variable of [
      'PAYMENT_SANDBOX_WEBHOOK_URL',
      'PAYMENT_SANDBOX_SEED',
      'PAYMENT_SANDBOX_FAULTS',
      'PAYMENT_SANDBOX_POS_DELAY_MS',
    ])
      expect(text).toContain(`(env: ${variable})`);
  });
});

describe('the addresses the sandbox gives out', { timeout: 30_000 }, () => {
  it('are on the origin each request came by: paymentUrl, the control API, the dashboard and the OpenAPI servers', async () => {
    const sandbox = await start(['--allowed-host', 'sandbox']);
    const port = portOf(sandbox);
    for (const host of [`localhost:${port}`, 'sandbox:4010']) {
      const created = await createSession(port, { host });
      expect(created.status).toBe(201);
      const { paymentUrl, sessionId } = created.body.data;
      expect(paymentUrl).toMatch(new RegExp(`^http://${host}/pay-external-test/`));
      const control = await call(port, { path: `/_sandbox/test/sessions/${sessionId}`, host, headers: { 'x-api-key': 'sk_test_sandbox' } });
      expect(control.body.data.record.paymentUrl).toBe(paymentUrl);
      const page = await call(port, { path: `/test/sessions/${sessionId}`, host });
      expect(page.text).toContain(`href="${paymentUrl}"`);
      const openapi = await call(port, { path: '/openapi.json', host });
      expect(openapi.body.servers[0].url).toBe(`http://${host}`);
      const controlApi = await call(port, { path: '/_sandbox/openapi.json', host });
      expect(controlApi.body.servers[0].url).toBe(`http://${host}`);
    }
    sandbox.child.kill('SIGTERM');
    await sandbox.exit;
  });

  it('are on --public-url when one is set, whatever the Host, and its name is accepted', async () => {
    const port = await freePort();
    const sandbox = await start(['--port', String(port), '--public-url', 'http://pay.test:8080/']);
    expect(sandbox.info.baseUrl).toBe('http://pay.test:8080');
    const created = await createSession(port, { host: 'pay.test:8080' });
    expect(created.body.data.paymentUrl).toMatch(/^http:\/\/pay\.test:8080\/pay-external-test\//);
    expect((await createSession(port)).body.data.paymentUrl).toMatch(/^http:\/\/pay\.test:8080\//);
    expect((await call(port, { path: '/openapi.json' })).body.servers[0].url).toBe('http://pay.test:8080');
    sandbox.child.kill('SIGTERM');
    await sandbox.exit;

    const refused = run(['sandbox', '--port', '0', '--public-url', 'http://pay.test/base']);
    expect((await refused.exit).code).toBe(2);
    expect(refused.stderr()).toContain('--public-url must be an origin');
  });

  it('on 0.0.0.0: announces loopback, and keeps the documented keys and an open dashboard only with --trusted-network', async () => {
    const trusted = await start(['--host', '0.0.0.0'], { PAYMENT_SANDBOX_TRUSTED_NETWORK: 'true' });
    expect(trusted.info.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(trusted.info.keys).toEqual({ test: 'sk_test_sandbox', live: 'sk_live_sandbox' });
    expect(trusted.info.clientSecrets).toEqual({ test: 'cs_test_sandbox', live: 'cs_live_sandbox' });
    expect(trusted.line).not.toContain('0.0.0.0');
    const port = portOf(trusted);
    expect((await call(port, { path: '/' })).status).toBe(200);
    expect((await createSession(port)).body.data.paymentUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/`));
    trusted.child.kill('SIGTERM');
    await trusted.exit;

    const exposed = await start(['--host', '0.0.0.0'], { PAYMENT_SANDBOX_TRUSTED_NETWORK: 'false' });
    expect(exposed.info.keys.test).not.toBe('sk_test_sandbox');
    expect((await call(portOf(exposed), { path: '/' })).status).toBe(401);
    exposed.child.kill('SIGTERM');
    await exposed.exit;
  });
});

describe('stopping on SIGTERM', { timeout: 30_000 }, () => {
  it('finishes the request in flight, exits 0 with a clean-stop line, and the write it acknowledged is there after a restart', async () => {
    const dataDir = tempDir();
    const first = await start(['--data-dir', dataDir]);
    const port = portOf(first);
    const rule = await call(port, {
      method: 'POST',
      path: '/_sandbox/faults',
      headers: { 'x-api-key': 'sk_test_sandbox' },
      body: { route: 'POST /payment/session', times: 1, effect: { type: 'latency', ms: 400 } },
    });
    expect(rule.status).toBe(200);
    const inFlight = createSession(port, { idempotencyKey: 'order-1' });
    await new Promise((done) => setTimeout(done, 150));
    first.child.kill('SIGTERM');
    const answered = await inFlight;
    expect(answered.status).toBe(201);
    expect(await first.exit).toEqual({ code: 0, signal: null });
    expect(first.stderr()).toMatch(/Stopped on SIGTERM in \d+ ms: requests in flight answered, store closed\./);

    const second = await start(['--data-dir', dataDir]);
    const again = portOf(second);
    const { sessionId } = answered.body.data;
    const read = await call(again, {
      path: `/external/v1/test/payment/session/${sessionId}?webcode=SANDBOX`,
      headers: { 'x-api-key': 'sk_test_sandbox' },
    });
    expect(read.status).toBe(200);
    const replay = await createSession(again, { idempotencyKey: 'order-1' });
    expect(replay.body.data.sessionId).toBe(sessionId);
    second.child.kill('SIGTERM');
    expect((await second.exit).code).toBe(0);
  });

  it('answers a POS payment still at its terminal 503 (19503) at once; it completes after a restart, and a retry with its key gets the result', async () => {
    const dataDir = tempDir();
    const first = await start(['--data-dir', dataDir, '--pos-delay-ms', '1500']);
    const port = portOf(first);
    const waiting = payAtTerminal(port);
    await new Promise((done) => setTimeout(done, 200));
    first.child.kill('SIGTERM');
    const answer = await waiting;
    expect(answer.status).toBe(503);
    expect(answer.body.error.code).toBe(19503);
    expect((await first.exit).code).toBe(0);

    const second = await start(['--data-dir', dataDir, '--pos-delay-ms', '1500']);
    const retried = await payAtTerminal(portOf(second));
    expect(retried.status).toBe(200);
    expect(retried.body.data.status).toBe('success');
    second.child.kill('SIGTERM');
    expect((await second.exit).code).toBe(0);
  });
});
