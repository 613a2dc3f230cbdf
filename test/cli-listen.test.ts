/**
 * `payment-service-sdk listen`: the built bin as a local webhook receiver, fed by a sandbox on
 * 127.0.0.1. It registers itself with the sandbox, prints and confirms each event, passes each
 * delivery on byte for byte to `--forward-to` and answers with the app's status, receives the
 * dashboard's resends, and takes itself off the sandbox on Ctrl-C.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox/index.js';
import { buildOnce, cliEnv, controlsIn, killAll, run, sandboxVariables } from './sandbox/cli-process.js';
import { type Started, sessionParams, useSandboxes } from './sandbox/support.js';

const sandboxes = useSandboxes();
const dir = mkdtempSync(join(tmpdir(), 'cli-listen-'));
const servers: Server[] = [];

beforeAll(() => buildOnce(), 60_000);
afterAll(() => {
  killAll();
  for (const server of servers) server.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Printed {
  eventCode: string;
  reference: string | null;
  paymentReference: string | null;
  amount: number | null;
  currency: string | null;
  status: string | null;
  confirmation: string;
  confirmationDetail: string | null;
  forwarded: { status: number | null; body: string } | null;
  event: { event_code: string; data: Record<string, unknown> };
}

function envFor(sandbox: Sandbox | undefined, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return cliEnv(join(dir, 'none.json'), { ...(sandbox ? sandboxVariables(sandbox) : {}), ...extra });
}

async function until<T>(what: () => string, read: () => T | false | null | undefined, timeoutMs = 12_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

/** Starts `listen ...args` and resolves with its address once it says it is listening (and registered, against a sandbox). */
async function listen(args: string[], env: NodeJS.ProcessEnv) {
  const started = run(['listen', ...args], { env });
  const url = await until(
    () => `listen to start; stderr: ${started.stderr()}`,
    () => /Press Ctrl\+C/.test(started.stderr()) && /Listening for webhooks on (\S+)/.exec(started.stderr())?.[1],
  );
  const events = () =>
    started
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Printed);
  return {
    ...started,
    url,
    events,
    eventsAt: (count: number) =>
      until(
        () => `${count} events; stdout: ${started.stdout()}; stderr: ${started.stderr()}`,
        () => events().length >= count && events(),
      ),
  };
}

async function post(url: string, body: string, method = 'POST') {
  const response = await fetch(url, { method, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { body } : {}) });
  return { status: response.status, body: await response.text() };
}

async function paidSession(started: Started) {
  const session = await started.test.sessions.create(sessionParams);
  const paid = await started.sandbox.paySession('test', session.sessionId);
  return paid.paymentReference ?? '';
}

/** A server on 127.0.0.1 that answers every request with `status` and `body`; `hits` counts them. */
async function plainServer(status: number, body: string) {
  const hits: string[] = [];
  const server = createServer((request, response) => {
    hits.push(`${request.method} ${request.url}`);
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(body);
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

/** A server on 127.0.0.1 that keeps each request's raw headers and body bytes, answering 200 `ok`. */
async function recordingServer() {
  const requests: { rawHeaders: string[]; body: Buffer }[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      requests.push({ rawHeaders: incoming.rawHeaders, body: Buffer.concat(chunks) });
      response.end('ok');
    });
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, requests };
}

/** POSTs `body` with exactly `headers` (node:http adds `host`, `connection` and `content-length` only). */
function rawPost(url: string, headers: Record<string, string>, body: Buffer): Promise<number> {
  return new Promise((done, fail) => {
    const outgoing = request(url, { method: 'POST', headers: { ...headers, 'content-length': body.length } }, (response) => {
      response.resume();
      response.on('end', () => done(response.statusCode ?? 0));
    });
    outgoing.on('error', fail);
    outgoing.end(body);
  });
}

/** What a sender of a large body met: the answer (if any) and the error, once its connection closed. */
interface LargeAnswer {
  status?: number | undefined;
  connection?: string | undefined;
  body: string;
  error?: string | undefined;
}

/**
 * POSTs `megabytes` MB in 1 MB writes over a connection of its own, the length declared or not
 * (then Node sends it chunked), and resolves once that connection has closed.
 */
function postLarge(url: string, megabytes: number, declared: boolean): Promise<LargeAnswer> {
  const chunk = Buffer.alloc(1_000_000, 'a');
  const headers = { 'content-type': 'application/json', ...(declared ? { 'content-length': String(megabytes * chunk.length) } : {}) };
  return new Promise((done) => {
    const result: LargeAnswer = { body: '' };
    const outgoing = request(url, { method: 'POST', agent: false, headers }, (response) => {
      result.status = response.statusCode;
      result.connection = response.headers.connection;
      response.setEncoding('utf8').on('data', (text: string) => (result.body += text));
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => (result.error = error.code ?? error.message));
    // An error the close brings (a reset) is emitted around it: look once both are out.
    outgoing.once('socket', (socket) => socket.once('close', () => setImmediate(() => done(result))));
    let sent = 0;
    const more = () => {
      while (sent < megabytes) {
        sent += 1;
        if (!outgoing.write(chunk)) return void outgoing.once('drain', more);
      }
      outgoing.end();
    };
    more();
  });
}

/** Header names of a raw header list, lowercased, without those each hop sets itself. */
function headerNames(rawHeaders: string[]): string[] {
  const own = new Set(['host', 'connection', 'content-length']);
  return rawHeaders
    .filter((_, index) => index % 2 === 0)
    .map((name) => name.toLowerCase())
    .filter((name) => !own.has(name))
    .sort();
}

describe('against the sandbox', { timeout: 30_000 }, () => {
  it("registers, prints and confirms each event, forwards it byte for byte, answers with the app's status; resends arrive; Ctrl-C unregisters", async () => {
    const direct = await sandboxes.receiver();
    const app = await sandboxes.receiver({ failFirst: 1, failStatus: 503 });
    const started = await sandboxes.start({ webhookUrls: [direct.url] });
    const { sandbox } = started;
    const listener = await listen(['--forward-to', app.url, '--format', 'ndjson'], envFor(sandbox));
    expect(sandbox.webhookUrls).toEqual([direct.url, listener.url]);
    expect(listener.stderr()).toContain(`registered as a webhook URL of the sandbox at ${sandbox.baseUrl}`);

    const reference = await paidSession(started);
    // The app fails the first delivery with 503; listen answers the sandbox 503, so the sandbox retries (1 s later).
    const [first, second] = await listener.eventsAt(2);
    expect(first).toMatchObject({
      eventCode: 'AUTHORISATION',
      reference,
      paymentReference: reference,
      amount: 2599,
      currency: 'EUR',
      status: 'AUTHORISED',
      confirmation: 'confirmed',
      outcome: 'authorised',
      confirmationDetail: null,
      forwarded: { status: 503, body: 'failing on purpose' },
    });
    expect(first?.event).toMatchObject({ event_code: 'AUTHORISATION', data: { customReference: 'order-42' } });
    expect(second).toMatchObject({ reference, confirmation: 'confirmed', forwarded: { status: 200, body: 'ok' } });
    const [delivery] = sandbox.records.deliveries({ url: listener.url });
    expect(delivery?.attempts.map((attempt) => attempt.status)).toEqual([503, 200]);

    // What the app got is what the sandbox sent: the same bytes, the same headers but those of one hop.
    await direct.waitFor(1);
    expect(app.received).toHaveLength(2);
    expect(app.received[0]?.body).toBe(direct.received[0]?.body);
    expect(app.received[0]?.headers['content-type']).toBe(direct.received[0]?.headers['content-type']);
    expect(app.received[0]?.headers['user-agent']).toBe('payment-service-sdk-sandbox');

    // A resend from the dashboard (its control API) reaches the receiver too.
    await sandbox.resendDelivery('test', delivery?.id ?? 0);
    const third = (await listener.eventsAt(3))[2];
    expect(third).toMatchObject({ reference, confirmation: 'confirmed', forwarded: { status: 200 } });

    listener.child.kill('SIGINT');
    expect((await listener.exit).code).toBe(0);
    expect(listener.stderr()).toContain(`Removed ${listener.url} from the sandbox's webhook URLs.`);
    expect(sandbox.webhookUrls).toEqual([direct.url]);
  });

  it('prints a REFUND as a line of the table, confirmed', async () => {
    const started = await sandboxes.start({ modificationResolveMs: 50 });
    const listener = await listen(['--format', 'table'], envFor(started.sandbox));
    expect(listener.stderr()).toContain('not forwarding (add --forward-to URL)');
    const reference = await paidSession(started);
    const refund = await started.test.modifications.refund({ paymentReference: reference, amount: { value: 500, currency: 'EUR' } });
    const printed = await until(
      () => 'two lines',
      () => {
        const all = listener.stdout().trim().split('\n');
        return all.length >= 2 && all;
      },
    );
    // Each event is printed once confirmed: the two in either order.
    const lines = ['AUTHORISATION', 'REFUND'].map((code) => printed.find((line) => line.slice(10).startsWith(code)));
    expect(lines[0]).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  AUTHORISATION  ${reference}\\s+2599 EUR\\s+AUTHORISED\\s+confirmed$`));
    expect(lines[1]).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  REFUND\\s+${refund.refundReference}\\s+500 EUR\\s+success\\s+confirmed$`));
    listener.child.kill('SIGTERM');
    expect((await listener.exit).code).toBe(0);
    expect(started.sandbox.webhookUrls).toEqual([]);
  });

  it('prints a declined POS payment as confirmed and refused, in the table and in JSON', async () => {
    const started = await sandboxes.start({ posDelayMs: 0 });
    const table = await listen(['--format', 'table'], envFor(started.sandbox));
    const json = await listen(['--format', 'ndjson'], envFor(started.sandbox));
    const declined = await started.test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 1077, currency: 'EUR' } });
    expect(declined.status).toBe('failed');
    const [event] = await json.eventsAt(1);
    expect(event).toMatchObject({ reference: declined.posPaymentId, status: 'REFUSED', confirmation: 'confirmed', outcome: 'refused' });
    const line = await until(
      () => 'the table line',
      () =>
        table
          .stdout()
          .trim()
          .split('\n')
          .find((row) => row.includes(declined.posPaymentId)),
    );
    expect(line).toMatch(new RegExp(`AUTHORISATION  ${declined.posPaymentId}\\s+1077 EUR\\s+REFUSED\\s+refused$`));
    for (const listener of [table, json]) {
      listener.child.kill('SIGTERM');
      await listener.exit;
    }
  });

  it('says when the API does not confirm an event; refuses what is not a webhook; CSV lines', async () => {
    const started = await sandboxes.start();
    const listener = await listen(['--format', 'csv'], envFor(started.sandbox));
    const reference = await paidSession(started);
    await until(
      () => 'the real event',
      () => listener.stdout().split('\r\n').length >= 3,
    );

    const forged = (data: Record<string, unknown>) =>
      JSON.stringify({ event_code: 'AUTHORISATION', data: { currency: 'EUR', paymentStatus: 'AUTHORISED', ...data } });
    expect((await post(listener.url, forged({ paymentReference: reference, amount: 1 }))).status).toBe(200);
    expect((await post(listener.url, forged({ paymentReference: `${started.sandbox.webcode}-PXTT-999999`, amount: 100 }))).status).toBe(
      200,
    );
    const refused = await post(listener.url, 'not json');
    expect(refused.status).toBe(400);
    expect((await post(listener.url, '', 'GET')).status).toBe(405);

    const rows = await until(
      () => 'four CSV lines',
      () => {
        const all = listener.stdout().split('\r\n').filter(Boolean);
        return all.length >= 4 && all;
      },
    );
    expect(rows[0]).toBe(
      'receivedAt,eventCode,reference,paymentReference,amount,currency,status,confirmation,outcome,confirmationDetail,forwardedStatus,forwardedBody',
    );
    expect(rows[1]).toMatch(new RegExp(`,AUTHORISATION,${reference},${reference},2599,EUR,AUTHORISED,confirmed,authorised,,,$`));
    // Each event is printed once confirmed: the two forged ones in either order.
    const mismatch = rows.find((row) => row.includes(',mismatch,'));
    expect(mismatch).toMatch(new RegExp(`,AUTHORISATION,${reference},${reference},1,EUR,AUTHORISED,mismatch,,"The API does not confirm`));
    expect(mismatch).toContain('amount is 2599, the webhook says 1');
    expect(rows.find((row) => row.includes('-PXTT-999999'))).toMatch(/,100,EUR,AUTHORISED,not-found,/);
    expect(rows).toHaveLength(4);
    expect(listener.stderr()).toMatch(/listen: a delivery that is not a webhook: The webhook body is not valid JSON/);
    listener.child.kill('SIGTERM');
    await listener.exit;
  });
});

describe('stopping', { timeout: 30_000 }, () => {
  it('the reader of stdout gone (`| head`): takes itself off the sandbox, exit 141', async () => {
    const started = await sandboxes.start();
    const listener = await listen(['--format', 'ndjson'], envFor(started.sandbox));
    expect(started.sandbox.webhookUrls).toEqual([listener.url]);
    listener.child.stdout?.destroy();
    await paidSession(started);
    expect((await listener.exit).code).toBe(141);
    expect(listener.stderr()).toContain(`Removed ${listener.url} from the sandbox's webhook URLs.`);
    expect(started.sandbox.webhookUrls).toEqual([]);
  });
});

describe('elsewhere', { timeout: 30_000 }, () => {
  it('--forward-to passes exactly the headers the sender sent, and the body byte for byte', async () => {
    const app = await recordingServer();
    const listener = await listen(['--no-confirm', '--forward-to', app.url, '--format', 'ndjson'], envFor(undefined));
    const body = Buffer.from(
      `{ "event_code" : "AUTHORISATION",\r\n\t"data": {"paymentReference": "X-PXT-1", "amount": 2599, "currency": "EUR", "paymentStatus": "AUTHORISED", "note": "caf\u00e9 \\u00e9 \u{1f600}"} }  `,
      'utf8',
    );
    const sent = { 'Content-Type': 'application/json; charset=utf-8', 'X-Signature': 'abc==', 'X-Request-Id': 'r-1' };
    expect(await rawPost(listener.url, sent, body)).toBe(200);
    await listener.eventsAt(1);
    expect(app.requests).toHaveLength(1);
    const [forwarded] = app.requests;
    expect(headerNames(forwarded?.rawHeaders ?? [])).toEqual(['content-type', 'x-request-id', 'x-signature']);
    const value = (name: string) => forwarded?.rawHeaders[forwarded.rawHeaders.findIndex((item) => item.toLowerCase() === name) + 1];
    expect(value('x-signature')).toBe('abc==');
    expect(value('content-type')).toBe('application/json; charset=utf-8');
    expect(value('content-length')).toBe(String(body.length));
    expect(forwarded?.body.equals(body)).toBe(true);
    listener.child.kill('SIGTERM');
    await listener.exit;
  });

  it('a 20 MB body, chunked or declared: 413 and its message, read by the sender before the connection closes (no reset); listening goes on', async () => {
    const listener = await listen(['--no-confirm', '--format', 'ndjson'], envFor(undefined));
    for (const declared of [false, true]) {
      const answer = await postLarge(listener.url, 20, declared);
      expect(answer).toEqual({ status: 413, connection: 'close', body: JSON.stringify({ error: 'a webhook is at most 1048576 bytes' }) });
    }
    expect(listener.stderr()).toContain('listen: refused a delivery of more than 1048576 bytes');
    // Still listening: a webhook after the refusals is received.
    const webhook = {
      event_code: 'AUTHORISATION',
      data: { paymentReference: 'X-BIG-1', amount: 100, currency: 'EUR', paymentStatus: 'AUTHORISED' },
    };
    expect((await post(listener.url, JSON.stringify(webhook))).status).toBe(200);
    expect((await listener.eventsAt(1))[0]?.paymentReference).toBe('X-BIG-1');
    listener.child.kill('SIGTERM');
    await listener.exit;
  });

  it('escapes control characters of a delivery in the table on stdout and in messages on stderr', async () => {
    const listener = await listen(['--no-confirm', '--format', 'table'], envFor(undefined));
    const hostile = 'X\u001b]0;pwned\u0007\u001b[2J\u009b31m\u007f';
    const event = {
      event_code: 'AUTHORISATION',
      data: { paymentReference: hostile, amount: 100, currency: 'EUR', paymentStatus: `AUTH\u0007` },
    };
    expect((await post(listener.url, JSON.stringify(event))).status).toBe(200);
    expect((await post(listener.url, `\u001b]0;retitled\u0007\u001b[2J`)).status).toBe(400);
    const out = await until(
      () => `a line; stdout: ${listener.stdout()}`,
      () => listener.stdout().includes('AUTHORISATION') && listener.stdout(),
    );
    await until(
      () => `the refusal on stderr: ${listener.stderr()}`,
      () => listener.stderr().includes('not a webhook'),
    );
    expect(controlsIn(out)).toEqual([]);
    expect(out).toContain('X\\x1b]0;pwned\\x07\\x1b[2J\\u009b31m\\x7f');
    expect(out).toContain('AUTH\\x07');
    expect(controlsIn(listener.stderr())).toEqual([]);
    expect(listener.stderr()).toContain('\\x1b]0;retitled\\x07');
    listener.child.kill('SIGTERM');
    await listener.exit;
  });

  it('a key the sandbox refuses: says so, registers nothing, exit 1', async () => {
    const started = await sandboxes.start();
    const refused = run(['listen', '--no-confirm'], { env: envFor(started.sandbox, { PAYMENT_SERVICE_API_KEY: 'sk_test_not_this_one' }) });
    expect((await refused.exit).code).toBe(1);
    expect(refused.stderr()).toMatch(/^payment-service-sdk: the sandbox at \S+ refused the API key \(403, 11008\): .*--api-key/);
    expect(refused.stderr()).not.toContain('not a sandbox');
    expect(refused.stderr()).not.toContain('sk_test_not_this_one');
    expect(refused.stderr().trim().split('\n')).toHaveLength(1);
    expect(started.sandbox.webhookUrls).toEqual([]);
  });

  it('a key the API refuses (the Live key in Test) while confirming: says so before listening, exit 1', async () => {
    const started = await sandboxes.start();
    const { sandbox } = started;
    const refused = run(['listen'], { env: envFor(sandbox, { PAYMENT_SERVICE_API_KEY: sandbox.keys.live }) });
    expect((await refused.exit).code).toBe(1);
    expect(refused.stderr()).toMatch(
      /^payment-service-sdk: the API at \S+ refused the API key \(403, 11008\): no event could be confirmed/,
    );
    expect(refused.stderr()).not.toContain(sandbox.keys.live);
    expect(refused.stderr().trim().split('\n')).toHaveLength(1);
    expect(sandbox.webhookUrls).toEqual([]);
  });

  it('a port in use: one line, exit 1', async () => {
    const taken = await plainServer(200, '{}');
    const port = new URL(taken.url).port;
    const started = run(['listen', '--no-confirm', '--port', port], { env: envFor(undefined) });
    expect((await started.exit).code).toBe(1);
    expect(started.stderr()).toBe(`payment-service-sdk: port ${port} is in use: pick another with --port (0 picks a free one)\n`);
  });

  it('not a sandbox and --no-confirm: no key needed, no registration, events printed unconfirmed', async () => {
    const service = await plainServer(404, JSON.stringify({ success: false, error: { message: 'Not found', code: 10004 } }));
    const listener = await listen(['--no-confirm', '--format', 'json'], envFor(undefined, { PAYMENT_SERVICE_BASE_URL: service.url }));
    expect(listener.stderr()).toMatch(/not a sandbox: set this address .* as the webhook URL in the merchant dashboard/);
    expect(listener.stderr()).toContain('not confirming events (--no-confirm)');
    expect(service.hits).toEqual([]);
    const event = {
      event_code: 'REFUND',
      data: { amount: 100, currency: 'EUR', paymentReference: 'X-PXT-1', refundReference: 'X-RF-2', status: 'success' },
    };
    expect((await post(listener.url, JSON.stringify(event))).status).toBe(200);
    const [printed] = await listener.eventsAt(1);
    expect(printed).toMatchObject({
      eventCode: 'REFUND',
      reference: 'X-RF-2',
      paymentReference: 'X-PXT-1',
      amount: 100,
      status: 'success',
      confirmation: 'skipped',
      forwarded: null,
    });
    listener.child.kill('SIGINT');
    expect((await listener.exit).code).toBe(0);
  });

  it('an app that does not answer: the sender gets 502, the event is still printed', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const down = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/hooks`;
    await new Promise<void>((done) => closed.close(() => done()));
    const listener = await listen(['--no-confirm', '--forward-to', down, '--format', 'ndjson'], envFor(undefined));
    const answer = await post(listener.url, JSON.stringify({ event_code: 'CHARGEBACK', data: { paymentReference: 'X-PXT-1' } }));
    expect(answer.status).toBe(502);
    expect(answer.body).toContain('the app did not answer');
    const [printed] = await listener.eventsAt(1);
    expect(printed).toMatchObject({ eventCode: 'CHARGEBACK', confirmation: 'skipped', forwarded: { status: null, body: '' } });
    expect(listener.stderr()).toContain(`listen: ${down} did not answer`);
    listener.child.kill('SIGTERM');
    await listener.exit;
  });

  it.each([
    [['--forward-to', 'ftp://example.com/'], /--forward-to must be an absolute http\(s\) URL/],
    [['--forward-to', 'http://127.0.0.1:0/hooks'], /--forward-to must name the port your app listens on/],
    [['--forward-to', 'http://0.0.0.0:3000/hooks'], /--forward-to must name the host of your app/],
    [['--forward-to', 'http://:3000/hooks'], /--forward-to must be an absolute http\(s\) URL/],
    [['--port', '70000'], /--port must be an integer from 0 to 65535/],
    [['--format', 'xml'], /--format must be one of/],
  ])('usage errors exit 2 in one line: %j', async (args, message) => {
    const started = run(['listen', ...args], {
      env: envFor(undefined, {
        PAYMENT_SERVICE_API_KEY: 'sk_test_x',
        PAYMENT_SERVICE_WEBCODE: 'W',
        PAYMENT_SERVICE_BASE_URL: 'http://127.0.0.1:9',
      }),
    });
    expect((await started.exit).code).toBe(2);
    expect(started.stderr()).toMatch(message);
    expect(started.stderr().trim().split('\n')).toHaveLength(1);
    expect(started.stdout()).toBe('');
  });

  it('without a key (and without --no-confirm): exit 2, says which setting is missing', async () => {
    const started = run(['listen'], { env: envFor(undefined) });
    expect((await started.exit).code).toBe(2);
    expect(started.stderr()).toBe(
      'payment-service-sdk: no API key: pass --api-key, set PAYMENT_SERVICE_API_KEY, or run payment-service-sdk config set apiKey …\n',
    );
  });

  it('help names every option and what is printed', async () => {
    const started = run(['listen', '--help'], { env: envFor(undefined) });
    expect((await started.exit).code).toBe(0);
    for (const option of ['--port', '--host', '--forward-to', '--no-confirm']) expect(started.stdout()).toContain(option);
    expect(started.stdout()).toContain('--format json');
    expect(started.stdout()).toContain('merchant dashboard');
  });
});
