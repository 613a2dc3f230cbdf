/**
 * A tenant removed while its requests are in flight (issue 30, item 1), over real HTTP on
 * 127.0.0.1: requests of every kind are held inside the sandbox (an API read and a refund by
 * latency rules, a POS payment at its terminal and its resend with the same key, a slow terminal,
 * a control action and a dashboard action waiting on a webhook attempt, the dashboard's live
 * stream, a payment page whose body is still being read), the tenant is removed, and each gets a
 * clear answer in bounded time: 403 as for any unknown key (the dashboard and the payment page:
 * their own 404 pages), never 5xx; nothing of the tenant is left, and the other tenants and the
 * sandbox work throughout. Also: five tenants removed at once, the CLI sandbox with
 * `--pos-delay-ms 2000`, and the sandbox's stop, which releases the same waits (503 there).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, manualClock, type Sandbox } from '../../src/sandbox/index.js';
import { buildOnce, killAll, startCli, stop } from './cli-process.js';
import { GOOD_CARD, sessionParams } from './support.js';

/** Latency of the rules that hold calls: far beyond every bound the test waits. */
const HOLD_MS = 300_000;
/** The longest the test waits for any one answer; a request still unanswered then has hung. */
const BOUND_MS = 20_000;

interface Made {
  webcode: string;
  keys: { test: string; live: string };
}

interface Answer {
  status: number;
  text: string;
  body: any;
}

/** A webhook receiver that takes every delivery and never answers it: what holds the actions that wait on their webhooks. */
interface HeldReceiver {
  url: string;
  /** Deliveries taken so far. */
  count(): number;
  /** Deliveries whose connection the sandbox cut. */
  cut(): number;
  close(): Promise<void>;
}

async function heldReceiver(): Promise<HeldReceiver> {
  const held: ServerResponse[] = [];
  let cut = 0;
  const server = createServer((request, response) => {
    held.push(response);
    request.resume();
    response.on('close', () => {
      if (!response.writableEnded) cut++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    count: () => held.length,
    cut: () => cut,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `check` every 20 ms, at most 1 000 times; fails naming `what` if it never holds. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let round = 0; round < 1_000; round++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`Never happened: ${what}`);
}

/** The answer of a request, read whole; a request not answered within {@link BOUND_MS} is status 0 ("hung"). */
async function answerOf(response: Promise<Response>): Promise<Answer> {
  try {
    const answer = await response;
    const text = await answer.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: answer.status, text, body };
  } catch (error) {
    return { status: 0, text: `hung or cut: ${String(error)}`, body: undefined };
  }
}

let sandbox: Sandbox;
let baseUrl: string;
let dataDir: string;
let receiver: HeldReceiver;
const clock = manualClock(Date.UTC(2026, 0, 5, 9));
const errors: unknown[] = [];
const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);
/** Set by a test: the next payment-page POST stops when its body is first read, until `gate` opens. */
let pageHold: { reached: () => void; gate: Promise<void> } | undefined;

function send(
  path: string,
  init: { method?: string; key?: string; json?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined) headers['x-api-key'] = init.key;
  let body: string | undefined;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  } else if (init.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  return fetch(`${baseUrl}${path}`, {
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    redirect: 'manual',
    signal: AbortSignal.timeout(BOUND_MS),
    ...(body === undefined ? {} : { body }),
  });
}

/** A call of the service's Test paths with the tenant's key; a GET names its webcode in the query, a POST in its body. */
function api(tenant: Made, method: 'GET' | 'POST', path: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  if (method === 'GET')
    return send(`/external/v1/test${path}${path.includes('?') ? '&' : '?'}webcode=${tenant.webcode}`, { key: tenant.keys.test, headers });
  return send(`/external/v1/test${path}`, { key: tenant.keys.test, json: { webcode: tenant.webcode, ...body }, headers });
}

async function control(tenant: Made | undefined, method: 'GET' | 'POST' | 'DELETE', path: string, json?: unknown): Promise<Answer> {
  return answerOf(send(`/_sandbox/${path}`, { method, key: tenant?.keys.test ?? sandbox.keys.test, json }));
}

async function makeTenant(webcode: string): Promise<Made> {
  const made = await control(undefined, 'POST', 'tenants', { webcode });
  expect(made.status).toBe(201);
  return made.body.data;
}

async function createSession(tenant: Made): Promise<{ sessionId: string; paymentUrl: string }> {
  const answer = await answerOf(api(tenant, 'POST', '/payment/session', sessionParams));
  expect(answer.status).toBe(201);
  return answer.body.data;
}

/** What every request of a key the sandbox does not know is answered: the removed tenant's must be the same. */
async function unknownKeyAnswer(): Promise<{ status: number; code: number; message: string }> {
  const answer = await answerOf(
    api({ webcode: 'NOBODY', keys: { test: 'sk_test_unknown', live: 'sk_live_unknown' } }, 'GET', '/payment/sessions'),
  );
  return { status: answer.status, code: answer.body.error.code, message: answer.body.error.message };
}

beforeAll(async () => {
  process.on('unhandledRejection', onRejection);
  dataDir = mkdtempSync(join(tmpdir(), 'sandbox-removal-'));
  receiver = await heldReceiver();
  sandbox = createSandbox({
    dataDir,
    clock,
    // On the sandbox clock, which the test never advances: a POS payment waits at its terminal until the removal.
    posDelayMs: 5_000,
    webhookRetry: { attempts: 1, timeoutMs: HOLD_MS },
    onError: (error) => errors.push(error),
  });
  const handle = sandbox.handle;
  sandbox.handle = (request, info) => {
    const hold = pageHold;
    if (!hold || request.method !== 'POST' || !new URL(request.url).pathname.startsWith('/pay-external-test/'))
      return handle(request, info);
    pageHold = undefined;
    const bytes = request.arrayBuffer();
    // Read only when the page reads it (highWaterMark 0): the page has found its tenant by then.
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          hold.reached();
          await hold.gate;
          controller.enqueue(new Uint8Array(await bytes));
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const init = { method: 'POST', headers: request.headers, body, signal: request.signal, duplex: 'half' };
    return handle(new Request(request.url, init as RequestInit), info);
  };
  ({ baseUrl } = await sandbox.listen());
});

afterAll(async () => {
  await sandbox.close();
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.off('unhandledRejection', onRejection);
});

afterEach(async () => {
  for (const tenant of sandbox.tenants()) await sandbox.removeTenant(tenant.webcode);
});

/** Holds the next payment-page POST when the page first reads its body; resolves once it is held, with the gate's opener. */
async function holdPagePost(paymentUrl: string): Promise<{ answer: Promise<Answer>; release: () => void }> {
  let pageReached = () => {};
  let release = () => {};
  const reached = new Promise<void>((resolve) => (pageReached = resolve));
  pageHold = { reached: pageReached, gate: new Promise<void>((resolve) => (release = resolve)) };
  const answer = answerOf(send(new URL(paymentUrl).pathname, { form: { ...GOOD_CARD, action: 'pay' } }));
  await reached;
  return { answer, release };
}

/** Removes DOOMED with the owner's key while OTHER makes a session; both answer. */
async function removeWhileOtherWorks(other: Made): Promise<void> {
  expect((await answerOf(api(other, 'POST', '/payment/session', sessionParams))).status).toBe(201);
  const removal = control(undefined, 'DELETE', 'tenants/DOOMED');
  const during = answerOf(api(other, 'POST', '/payment/session', sessionParams));
  expect((await removal).status).toBe(200);
  expect((await during).status).toBe(201);
}

/** Each answer is exactly the unknown key's: 403, its code and message, the failure envelope. */
function expectUnknownKey(answers: Record<string, Answer>, unknown: { status: number; code: number; message: string }): void {
  for (const [kind, answer] of Object.entries(answers)) {
    expect({ kind, status: answer.status, code: answer.body?.error?.code, message: answer.body?.error?.message }).toEqual({
      kind,
      ...unknown,
    });
    expect(answer.body).toMatchObject({ success: false, error: { statusCode: 403, traceId: expect.any(String) } });
  }
}

/**
 * Nothing of DOOMED is left (not its folder, not its entry; made again with its webcode it starts
 * empty); OTHER and the sandbox's own keep working with their records whole; nothing was reported.
 */
async function expectNothingLeft(other: Made, otherSessions: number): Promise<void> {
  expect(existsSync(join(dataDir, 'tenants', 'DOOMED'))).toBe(false);
  const kept = JSON.parse(readFileSync(join(dataDir, 'tenants', 'tenants.json'), 'utf8')) as { tenants: { webcode: string }[] };
  expect(kept.tenants.map((tenant) => tenant.webcode)).toEqual(['OTHER']);
  const again = await makeTenant('DOOMED');
  for (const kind of ['sessions', 'pos-payments', 'modifications', 'deliveries']) {
    const listed = await control(again, 'GET', `test/${kind}`);
    expect({ kind, total: listed.body.data.total }).toEqual({ kind, total: 0 });
  }
  const others = await answerOf(api(other, 'GET', '/payment/sessions'));
  expect(others.status).toBe(200);
  expect(others.body.data.meta.total).toBe(otherSessions);
  const own = { webcode: sandbox.webcode, keys: sandbox.keys };
  expect((await answerOf(api(own, 'POST', '/payment/session', sessionParams))).status).toBe(201);
  expect((await control(undefined, 'GET', 'tenants')).status).toBe(200);
  expect(errors).toEqual([]);
  expect(rejections).toEqual([]);
}

describe('a tenant removed while its requests are in flight', () => {
  it('answers an API read, a refund, a POS payment at its terminal and its resend 403 as an unknown key, and its page payment 404', async () => {
    const unknown = await unknownKeyAnswer();
    expect(unknown.status).toBe(403);
    const doomed = await makeTenant('DOOMED');
    const other = await makeTenant('OTHER');
    const refunded = await createSession(doomed);
    expect((await control(doomed, 'POST', `test/sessions/${refunded.sessionId}/pay`, {})).status).toBe(200);
    const paid = await answerOf(api(doomed, 'GET', `/payment/session/${refunded.sessionId}`));
    const paymentReference: string = paid.body.data.paymentReference;
    expect(paymentReference).toMatch(/^DOOMED-/);
    const toRead = await createSession(doomed);
    const toPayOnPage = await createSession(doomed);
    for (const route of ['GET /payment/session/{sessionId}', 'POST /payment/refund']) {
      const rule = await control(doomed, 'POST', 'faults', { environment: 'test', route, effect: { type: 'latency', ms: HOLD_MS } });
      expect(rule.status).toBe(200);
    }

    // The holds, each seen in place inside the sandbox before the removal.
    const read = answerOf(api(doomed, 'GET', `/payment/session/${toRead.sessionId}`));
    const refundBody = { paymentReference, amount: { value: 100, currency: 'EUR' } };
    const refund = answerOf(api(doomed, 'POST', '/payment/refund', refundBody, { 'idempotency-key': 'refund-1' }));
    await until('both latency rules struck', async () =>
      ((await control(doomed, 'GET', 'faults')).body.data as { injected: number }[]).every((rule) => rule.injected === 1),
    );
    const pos = { poiId: 'V400m-TEST-000001', amount: { value: 1_000, currency: 'EUR' } };
    const posWait = answerOf(api(doomed, 'POST', '/pos/payment', pos, { 'idempotency-key': 'pos-1' }));
    await until('the POS payment waits at its terminal', async () => {
      const listed = await control(doomed, 'GET', 'test/pos-payments');
      return listed.body.data?.items?.some((payment: { status: string }) => payment.status === 'pending') === true;
    });
    const posResend = answerOf(api(doomed, 'POST', '/pos/payment', pos, { 'idempotency-key': 'pos-1' }));
    const page = await holdPagePost(toPayOnPage.paymentUrl);

    await removeWhileOtherWorks(other);
    page.release();
    expectUnknownKey({ read: await read, refund: await refund, posWait: await posWait, posResend: await posResend }, unknown);
    const paidOnPage = await page.answer;
    expect(paidOnPage.status).toBe(404);
    expect(paidOnPage.text).toContain('Payment not found');
    await expectNothingLeft(other, 2);
  }, 120_000);

  it('answers a control action 403 and a dashboard action 404, cutting the webhook attempts they wait on and the live stream', async () => {
    const unknown = await unknownKeyAnswer();
    const doomed = await makeTenant('DOOMED');
    const other = await makeTenant('OTHER');
    const toPayByControl = await createSession(doomed);
    const toPayByDashboard = await createSession(doomed);
    expect((await control(doomed, 'POST', 'webhook-urls', { url: receiver.url })).status).toBe(200);
    const taken = receiver.count();

    const controlAction = control(doomed, 'POST', `test/sessions/${toPayByControl.sessionId}/pay`, {});
    await until('the control action waits on its webhook', () => receiver.count() >= taken + 1);
    const formToken = /name="token" value="([^"]+)"/.exec((await answerOf(send('/?tenant=DOOMED'))).text)?.[1] ?? '';
    expect(formToken).not.toBe('');
    const form = { token: formToken, tenant: 'DOOMED', environment: 'test', id: toPayByDashboard.sessionId, returnTo: '/?tenant=DOOMED' };
    const dashboardAction = answerOf(send('/_dashboard/actions/pay', { form }));
    await until('the dashboard action waits on its webhook', () => receiver.count() >= taken + 2);
    const stream = await send('/_dashboard/events?tenant=DOOMED');
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    const events = (stream.body as ReadableStream<Uint8Array>).getReader();
    expect((await events.read()).done).toBe(false);

    await removeWhileOtherWorks(other);
    expectUnknownKey({ controlAction: await controlAction }, unknown);
    const dashboard = await dashboardAction;
    expect(dashboard.status).toBe(404);
    expect(dashboard.text).toContain('No tenant with webcode DOOMED');
    // The removed tenant's live stream ends; the browser's reconnection then finds no tenant (404).
    let ended = false;
    for (let chunk = 0; chunk < 100 && !ended; chunk++) ended = (await events.read()).done;
    expect(ended).toBe(true);
    expect((await answerOf(send('/_dashboard/events?tenant=DOOMED'))).status).toBe(404);
    // The webhook attempts the actions waited on were cut, not waited out.
    await until('the held webhook attempts were cut', () => receiver.cut() >= 2);
    await expectNothingLeft(other, 2);
  }, 120_000);

  it('answers a POS payment at its terminal (real time, in memory) 403 at once when its tenant goes in process', async () => {
    const memory = createSandbox({ posDelayMs: 60_000, onError: (error) => errors.push(error) });
    try {
      const { baseUrl: memoryUrl } = await memory.listen();
      const worker = memory.createTenant({ webcode: 'WORKER' });
      const pos = { webcode: 'WORKER', poiId: 'S1F2-TEST-000002', amount: { value: 2_000, currency: 'EUR' } };
      const waiting = answerOf(
        fetch(`${memoryUrl}/external/v1/test/pos/payment`, {
          method: 'POST',
          headers: { 'x-api-key': worker.keys.test, 'content-type': 'application/json' },
          body: JSON.stringify(pos),
          signal: AbortSignal.timeout(BOUND_MS),
        }),
      );
      await until('the POS payment waits at its terminal', async () => {
        const listed = await fetch(`${memoryUrl}/_sandbox/test/pos-payments`, { headers: { 'x-api-key': worker.keys.test } });
        return ((await listed.json()) as { data: { total: number } }).data.total === 1;
      });
      await memory.removeTenant('WORKER');
      const answer = await waiting;
      expect(answer.status).toBe(403);
      expect(answer.body.error.code).toBe(11008);
      expect(errors).toEqual([]);
      expect(rejections).toEqual([]);
    } finally {
      await memory.close();
    }
  }, 60_000);
});

describe('many tenants removed at once, each with requests held', () => {
  it('answers all 50 (latency, slow terminal, terminal wait) 403 and none 5xx, while the sandbox’s own tenant keeps working', async () => {
    const unknown = await unknownKeyAnswer();
    const workers = await Promise.all(['W1', 'W2', 'W3', 'W4', 'W5'].map((webcode) => makeTenant(webcode)));
    const held: Promise<Answer>[] = [];
    const injected = async (worker: Made) =>
      ((await control(worker, 'GET', 'faults')).body.data as { injected: number }[]).map((rule) => rule.injected);
    for (const [index, worker] of workers.entries()) {
      const latency = { environment: 'test', route: 'GET /payment/sessions', effect: { type: 'latency', ms: HOLD_MS } };
      const slowTerminal = {
        environment: 'test',
        route: 'POST /pos/payment',
        times: 1,
        effect: { type: 'terminal', outcome: 'slow', ms: HOLD_MS },
      };
      for (const rule of [latency, slowTerminal]) expect((await control(worker, 'POST', 'faults', rule)).status).toBe(200);
      for (let call = 0; call < 8; call++) held.push(answerOf(api(worker, 'GET', '/payment/sessions')));
      // The first POS payment is held by the slow terminal before it runs; the next one then waits at its terminal.
      const pos = { poiId: 'S1F2-TEST-000002', amount: { value: 1_000 + index, currency: 'EUR' } };
      held.push(answerOf(api(worker, 'POST', '/pos/payment', pos)));
      await until('the slow terminal struck', async () => (await injected(worker))[1] === 1);
      held.push(answerOf(api(worker, 'POST', '/pos/payment', pos)));
    }
    await until('every call is held', async () => {
      const states = await Promise.all(
        workers.map(async (worker) => ({
          struck: await injected(worker),
          waiting: (await control(worker, 'GET', 'test/pos-payments')).body.data.total as number,
        })),
      );
      return states.every((state) => state.struck[0] === 8 && state.waiting === 1);
    });
    const own = { webcode: sandbox.webcode, keys: sandbox.keys };
    const during = answerOf(api(own, 'POST', '/payment/session', sessionParams));
    const removals = await Promise.all(workers.map((worker) => control(undefined, 'DELETE', `tenants/${worker.webcode}`)));
    expect(removals.map((removal) => removal.status)).toEqual([200, 200, 200, 200, 200]);
    expect((await during).status).toBe(201);
    const answers = await Promise.all(held);
    expect(answers).toHaveLength(50);
    expectUnknownKey(Object.fromEntries(answers.map((answer, index) => [`call ${index}`, answer])), unknown);
    expect(sandbox.tenants()).toEqual([]);
    expect((await answerOf(api(own, 'GET', '/payment/sessions'))).status).toBe(200);
    expect(errors).toEqual([]);
    expect(rejections).toEqual([]);
  }, 120_000);
});

describe("the sandbox's stop, which releases the same waits", () => {
  it('answers a POS payment at its terminal and its resend with the same Idempotency-Key 503 (19503) at once', async () => {
    const stopping = createSandbox({ clock: manualClock(Date.UTC(2026, 0, 5, 9)), posDelayMs: 5_000 });
    let handled = 0;
    const handle = stopping.handle;
    stopping.handle = (request, info) => {
      handled++;
      return handle(request, info);
    };
    const { baseUrl: stoppingUrl } = await stopping.listen();
    const payAtTerminal = () =>
      answerOf(
        fetch(`${stoppingUrl}/external/v1/test/pos/payment`, {
          method: 'POST',
          headers: { 'x-api-key': stopping.keys.test, 'content-type': 'application/json', 'idempotency-key': 'pos-stop' },
          body: JSON.stringify({ webcode: stopping.webcode, poiId: 'V400m-TEST-000001', amount: { value: 1_000, currency: 'EUR' } }),
          signal: AbortSignal.timeout(BOUND_MS),
        }),
      );
    const waiting = payAtTerminal();
    await until('the POS payment waits at its terminal', () => stopping.records.posPayments().length === 1);
    const resend = payAtTerminal();
    // Handed to the sandbox, the resend reaches its wait on the first payment without any timer.
    await until('the resend is being answered', () => handled === 2);
    await stopping.close();
    for (const answer of [await waiting, await resend]) {
      expect(answer.status).toBe(503);
      expect(answer.body.error.code).toBe(19503);
    }
  }, 60_000);
});

describe('the CLI sandbox', () => {
  beforeAll(buildOnce);
  afterAll(killAll);

  it('sandbox --pos-delay-ms 2000: a POS payment waiting for its terminal answers 403 when its tenant is removed', async () => {
    const cli = await startCli(['--pos-delay-ms', '2000']);
    try {
      const { baseUrl: cliUrl, keys } = cli.info;
      const made = await fetch(`${cliUrl}/_sandbox/tenants`, {
        method: 'POST',
        headers: { 'x-api-key': keys.test, 'content-type': 'application/json' },
        body: JSON.stringify({ webcode: 'CLI_WORKER' }),
      });
      const worker = ((await made.json()) as { data: Made }).data;
      const pos = { webcode: 'CLI_WORKER', poiId: 'V400m-TEST-000001', amount: { value: 1_000, currency: 'EUR' } };
      const waiting = answerOf(
        fetch(`${cliUrl}/external/v1/test/pos/payment`, {
          method: 'POST',
          headers: { 'x-api-key': worker.keys.test, 'content-type': 'application/json' },
          body: JSON.stringify(pos),
          signal: AbortSignal.timeout(BOUND_MS),
        }),
      );
      await until('the POS payment waits at its terminal', async () => {
        const listed = await fetch(`${cliUrl}/_sandbox/test/pos-payments`, { headers: { 'x-api-key': worker.keys.test } });
        return ((await listed.json()) as { data?: { total: number } }).data?.total === 1;
      });
      const removed = await fetch(`${cliUrl}/_sandbox/tenants/CLI_WORKER`, { method: 'DELETE', headers: { 'x-api-key': keys.test } });
      expect(removed.status).toBe(200);
      const answer = await waiting;
      expect(answer.status).toBe(403);
      expect(answer.body.error).toMatchObject({ code: 11008, statusCode: 403, message: 'API key without permission for this resource' });
      // The sandbox keeps answering, and stops cleanly.
      const own = await fetch(`${cliUrl}/external/v1/test/pos/terminals?webcode=${cli.info.webcode}`, {
        headers: { 'x-api-key': keys.test },
      });
      expect(own.status).toBe(200);
      expect((await stop(cli)).code).toBe(0);
      expect(cli.stderr()).not.toMatch(/Sandbox error|Unhandled|TypeError/);
    } finally {
      cli.child.kill('SIGKILL');
    }
  }, 60_000);
});
