/**
 * Fault rules over real HTTP on 127.0.0.1: the control API and `sandbox.faults`, the validation
 * of rules, each API and terminal effect with the `X-Sandbox-Fault` header and the strike count,
 * `times` and a seeded `probability`, and the proof the sandbox exists for: the SDK with its
 * default retries against after-commit errors, resets and 503s makes no duplicate session.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient, PaymentServiceError } from '../../src/index.js';
import { createSandbox, FaultRuleError, manualClock, SANDBOX_CODES, type Sandbox } from '../../src/sandbox/index.js';
import { buildOnce, killAll, run, startCli, stop } from './cli-process.js';
import { failureOf, raw, sessionParams, useSandboxes } from './support.js';

const { start, adopt, receiver } = useSandboxes();
const dir = mkdtempSync(join(tmpdir(), 'sandbox-faults-'));
afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

async function control(sandbox: Sandbox, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) {
  const response = await fetch(`${sandbox.baseUrl}/_sandbox/${path}`, {
    method,
    headers: { 'x-api-key': sandbox.keys.test, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

const createSession = (sandbox: Sandbox, reference = 'order-42', idempotencyKey?: string) =>
  raw(sandbox, 'POST', '/payment/session', {
    body: { ...sessionParams, customReference: reference },
    ...(idempotencyKey ? { idempotencyKey } : {}),
  });

/** The raw bytes of an answer and how the connection ended, read with `node:http` (fetch hides a cut body). */
function rawHttp(sandbox: Sandbox, path: string): Promise<{ headers: Record<string, unknown>; received: number; error?: string }> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ ...sessionParams, webcode: sandbox.webcode });
    const outgoing = request(`${sandbox.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json' },
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => resolve({ headers: {}, received: 0, error: error.code ?? error.message }));
    outgoing.on('response', (incoming) => {
      let received = 0;
      incoming.on('data', (chunk: Buffer) => {
        received += chunk.byteLength;
      });
      incoming.on('aborted', () => resolve({ headers: incoming.headers, received, error: 'aborted' }));
      incoming.on('error', () => undefined);
      incoming.on('end', () => resolve({ headers: incoming.headers, received }));
    });
    outgoing.end(body);
  });
}

describe('fault rules: control API and typed methods', () => {
  it('adds, lists, removes and clears rules; answers carry id and injected', async () => {
    const { sandbox } = await start();
    const rule = { route: 'POST /payment/session', times: 2, effect: { type: 'error', status: 503, when: 'before' } };
    const added = await control(sandbox, 'POST', 'faults', rule);
    expect(added.status).toBe(200);
    expect(added.body.data).toEqual({ ...rule, id: expect.any(String), injected: 0 });
    const typed = sandbox.faults.add({ route: 'GET /pos/payments', effect: { type: 'latency', ms: [0, 5] } });
    expect(typed.id).not.toBe(added.body.data.id);
    expect((await control(sandbox, 'GET', 'faults')).body.data).toEqual([added.body.data, typed]);
    expect(sandbox.faults.list()).toEqual([added.body.data, typed]);

    const removed = await control(sandbox, 'DELETE', `faults/${added.body.data.id}`);
    expect(removed.body.data).toEqual(added.body.data);
    expect((await control(sandbox, 'DELETE', `faults/${added.body.data.id}`)).status).toBe(404);
    expect(sandbox.faults.remove(typed.id)).toEqual(typed);
    sandbox.faults.add(rule as never);
    expect((await control(sandbox, 'DELETE', 'faults')).body.data).toEqual([]);
    sandbox.faults.add(rule as never);
    sandbox.faults.clear();
    expect(sandbox.faults.list()).toEqual([]);
  });

  it.each([
    ['no route and no event', { effect: { type: 'truncate' } }, 'name a route'],
    ['an unknown route', { route: 'POST /payment/sessions', effect: { type: 'truncate' } }, 'route must be one of'],
    ['an API effect on an event', { event: 'AUTHORISATION', effect: { type: 'latency', ms: 5 } }, 'give a route'],
    ['a webhook effect on a route', { route: 'POST /payment/session', effect: { type: 'drop' } }, 'give an event'],
    [
      'one copy for duplicate',
      { event: 'AUTHORISATION', effect: { type: 'duplicate', copies: 1 } },
      'copies must be a whole number from 2 to 10000',
    ],
    ['reorder on a route', { route: 'POST /payment/session', effect: { type: 'reorder' } }, 'give an event'],
    [
      'a terminal effect off the POS route',
      { route: 'POST /payment/session', effect: { type: 'terminal', outcome: 'busy' } },
      'POST /pos/payment',
    ],
    [
      'an error status outside the list',
      { route: 'POST /payment/session', effect: { type: 'error', status: 501, when: 'before' } },
      'effect.status',
    ],
    ['no when', { route: 'POST /payment/session', effect: { type: 'reset' } }, 'effect.when'],
    ['a range upside down', { route: 'POST /payment/session', effect: { type: 'latency', ms: [9, 1] } }, 'MIN <= MAX'],
    ['a probability over 1', { route: 'POST /payment/session', probability: 1.5, effect: { type: 'truncate' } }, 'probability'],
    ['times 0', { route: 'POST /payment/session', times: 0, effect: { type: 'truncate' } }, 'times'],
    ['an unknown field', { route: 'POST /payment/session', effect: { type: 'truncate' }, often: true }, 'often'],
    ['an unknown effect', { route: 'POST /payment/session', effect: { type: 'explode' } }, 'effect.type'],
    ['a slow terminal without ms', { route: 'POST /pos/payment', effect: { type: 'terminal', outcome: 'slow' } }, 'effect.ms'],
  ])('refuses %s with 400 and the envelope', async (_name, rule, words) => {
    const { sandbox } = await start();
    const answer = await control(sandbox, 'POST', 'faults', rule);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ success: false, error: { code: 12001, statusCode: 400 } });
    expect(answer.body.error.message).toContain(words);
    expect(() => sandbox.faults.add(rule as never)).toThrow(FaultRuleError);
    expect(sandbox.faults.list()).toEqual([]);
  });
});

describe('fault rules at their extremes: every number has a range, a tenant at most 100 rules', () => {
  const API = 'POST /payment/session';
  const refusals: [string, unknown, string][] = [
    [
      '2^32 copies',
      { event: 'AUTHORISATION', effect: { type: 'duplicate', copies: 2 ** 32 } },
      'effect.copies must be a whole number from 2 to 10000',
    ],
    [
      '2^53 − 1 copies',
      { event: 'AUTHORISATION', effect: { type: 'duplicate', copies: Number.MAX_SAFE_INTEGER } },
      'effect.copies must be a whole number from 2 to 10000',
    ],
    [
      '10 001 copies',
      { event: 'AUTHORISATION', effect: { type: 'duplicate', copies: 10_001 } },
      'effect.copies must be a whole number from 2 to 10000',
    ],
    ['a latency of 2^31 ms', { route: API, effect: { type: 'latency', ms: 2 ** 31 } }, 'effect.ms must be a whole number from 0 to 600000'],
    [
      'a latency over 10 minutes',
      { route: API, effect: { type: 'latency', ms: 600_001 } },
      'effect.ms must be a whole number from 0 to 600000',
    ],
    [
      'a latency range past 10 minutes',
      { route: API, effect: { type: 'latency', ms: [0, 2 ** 31] } },
      'each a whole number from 0 to 600000',
    ],
    [
      'a slow terminal of 2^31 ms',
      { route: 'POST /pos/payment', effect: { type: 'terminal', outcome: 'slow', ms: 2 ** 31 } },
      'effect.ms must be a whole number from 0 to 600000',
    ],
    [
      'a delay over a day',
      { event: 'REFUND', effect: { type: 'delay', ms: 86_400_001 } },
      'effect.ms must be a whole number from 0 to 86400000',
    ],
    [
      'a Retry-After over a day',
      { route: API, effect: { type: 'error', status: 429, when: 'before', retryAfter: 86_401 } },
      'effect.retryAfter must be a whole number from 0 to 86400',
    ],
    [
      'times over a million',
      { route: API, times: 1_000_001, effect: { type: 'truncate' } },
      'times must be a whole number from 1 to 1000000',
    ],
    ['a negative probability', { route: API, probability: -0.1, effect: { type: 'truncate' } }, 'probability must be a number from 0 to 1'],
  ];

  it.each(refusals)('refuses %s with 400 naming the field and its range', async (_name, rule, words) => {
    const { sandbox } = await start();
    const answer = await control(sandbox, 'POST', 'faults', rule);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ success: false, error: { code: 12001, statusCode: 400 } });
    expect(answer.body.error.message).toContain(words);
    expect(sandbox.faults.list()).toEqual([]);
  });

  it('accepts every value at its bounds', async () => {
    const { sandbox } = await start();
    const bounds = [
      { event: 'AUTHORISATION', effect: { type: 'duplicate', copies: 2 } },
      { event: 'AUTHORISATION', effect: { type: 'duplicate', copies: 10_000 } },
      { route: API, effect: { type: 'latency', ms: 0 } },
      { route: API, effect: { type: 'latency', ms: 600_000 } },
      { route: API, effect: { type: 'latency', ms: [0, 600_000] } },
      { route: 'POST /pos/payment', effect: { type: 'terminal', outcome: 'slow', ms: 600_000 } },
      { event: 'REFUND', effect: { type: 'delay', ms: 0 } },
      { event: 'REFUND', effect: { type: 'delay', ms: 86_400_000 } },
      { route: API, effect: { type: 'error', status: 503, when: 'before', retryAfter: 0 } },
      { route: API, effect: { type: 'error', status: 503, when: 'before', retryAfter: 86_400 } },
      { route: API, times: 1, probability: 0, effect: { type: 'truncate' } },
      { route: API, times: 1_000_000, probability: 1, effect: { type: 'truncate' } },
    ];
    for (const rule of bounds) {
      const answer = await control(sandbox, 'POST', 'faults', rule);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.data).toMatchObject(rule);
    }
    expect(sandbox.faults.list()).toHaveLength(bounds.length);
  });

  it('holds 100 rules per tenant: the 101st is refused with 400 until one is removed; other tenants are not counted', async () => {
    const { sandbox } = await start();
    const rule = { route: API, times: 1, effect: { type: 'truncate' } };
    const ids: string[] = [];
    for (let index = 0; index < 100; index++) {
      const answer = await control(sandbox, 'POST', 'faults', rule);
      expect(answer.status).toBe(200);
      ids.push(answer.body.data.id);
    }
    const refused = await control(sandbox, 'POST', 'faults', rule);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ success: false, error: { code: 12001, statusCode: 400 } });
    expect(refused.body.error.message).toBe(
      'Fault rule refused: a tenant holds at most 100 rules: remove one (DELETE /_sandbox/faults/{id}) before adding another',
    );
    expect(() => sandbox.faults.add(rule as never)).toThrow(FaultRuleError);
    expect(sandbox.faults.list()).toHaveLength(100);
    const other = sandbox.createTenant({ webcode: 'FAULTS_OTHER' });
    const theirs = await fetch(`${sandbox.baseUrl}/_sandbox/faults`, {
      method: 'POST',
      headers: { 'x-api-key': other.keys.test, 'content-type': 'application/json' },
      body: JSON.stringify(rule),
    });
    expect(theirs.status).toBe(200);
    expect((await control(sandbox, 'DELETE', `faults/${ids[0]}`)).status).toBe(200);
    expect((await control(sandbox, 'POST', 'faults', rule)).status).toBe(200);
  });
});

const HALF_503 = { route: 'POST /payment/session', probability: 0.5, effect: { type: 'error', status: 503, when: 'before' } } as const;

/** The statuses of 24 creates in a row. */
async function statuses(sandbox: Sandbox): Promise<number[]> {
  const answers: number[] = [];
  for (let index = 0; index < 24; index++) answers.push((await createSession(sandbox, `order-${index}`)).status);
  return answers;
}

describe('fault rules: API effects', () => {
  it('error before: the status with the envelope and Retry-After, nothing runs, then times runs out', async () => {
    const { sandbox } = await start();
    const rule = sandbox.faults.add({
      route: 'POST /payment/session',
      times: 1,
      effect: { type: 'error', status: 429, when: 'before', retryAfter: 7 },
    });
    const struck = await createSession(sandbox);
    expect(struck.status).toBe(429);
    expect(struck.headers.get('retry-after')).toBe('7');
    expect(struck.headers.get('x-sandbox-fault')).toBe(rule.id);
    expect(failureOf(struck)).toMatchObject({ code: SANDBOX_CODES.injectedFault, statusCode: 429 });
    expect(sandbox.records.sessions()).toEqual([]);
    const next = await createSession(sandbox);
    expect([next.status, next.headers.get('x-sandbox-fault')]).toEqual([201, null]);
    expect(sandbox.faults.list()[0]?.injected).toBe(1);
  });

  it('error after commit: the session exists, the client sees 500, a resend with the key replays it', async () => {
    const { sandbox } = await start();
    const rule = sandbox.faults.add({
      route: 'POST /payment/session',
      times: 1,
      effect: { type: 'error', status: 500, when: 'after-commit' },
    });
    const struck = await createSession(sandbox, 'order-1', 'key-1');
    expect([struck.status, struck.headers.get('x-sandbox-fault')]).toEqual([500, rule.id]);
    expect(sandbox.records.sessions().map((session) => session.customReference)).toEqual(['order-1']);
    const again = await createSession(sandbox, 'order-1', 'key-1');
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(sandbox.records.sessions()).toHaveLength(1);
  });

  it('reset before and after commit: the connection closes with no answer; only after-commit made the session', async () => {
    const { sandbox } = await start();
    const before = sandbox.faults.add({ route: 'POST /payment/session', times: 1, effect: { type: 'reset', when: 'before' } });
    await expect(createSession(sandbox, 'order-1')).rejects.toThrow(TypeError);
    expect(sandbox.records.sessions()).toEqual([]);
    sandbox.faults.add({ route: 'POST /payment/session', times: 1, effect: { type: 'reset', when: 'after-commit' } });
    await expect(createSession(sandbox, 'order-2')).rejects.toThrow(TypeError);
    expect(sandbox.records.sessions().map((session) => session.customReference)).toEqual(['order-2']);
    expect(sandbox.faults.list().map((rule) => [rule.id === before.id, rule.injected])).toEqual([
      [true, 1],
      [false, 1],
    ]);
  });

  it('truncate: half the body under the whole Content-Length, then the connection closes', async () => {
    const { sandbox } = await start();
    const rule = sandbox.faults.add({ route: 'POST /payment/session', times: 1, effect: { type: 'truncate' } });
    const cut = await rawHttp(sandbox, '/external/v1/test/payment/session');
    const declared = Number(cut.headers['content-length']);
    expect(cut.headers['x-sandbox-fault']).toBe(rule.id);
    expect(cut.error).toBeDefined();
    expect(cut.received).toBe(Math.floor(declared / 2));
    const whole = await rawHttp(sandbox, '/external/v1/test/payment/session');
    expect([whole.error, whole.received]).toEqual([undefined, Number(whole.headers['content-length'])]);
  });

  it('latency: the answer is the operation’s, named by the rule; environment limits the rule', async () => {
    const { sandbox } = await start();
    const rule = sandbox.faults.add({ environment: 'test', route: 'POST /payment/session', effect: { type: 'latency', ms: [1, 20] } });
    const slowed = await createSession(sandbox);
    expect([slowed.status, slowed.headers.get('x-sandbox-fault')]).toEqual([201, rule.id]);
    const live = await raw(sandbox, 'POST', '/payment/session', { env: 'live', body: { ...sessionParams } });
    expect([live.status, live.headers.get('x-sandbox-fault')]).toEqual([201, null]);
    expect((await control(sandbox, 'GET', 'faults')).body.data[0].injected).toBe(1);
  });

  it('terminal busy and offline answer 13005 and 13004 on POST /pos/payment', async () => {
    const { sandbox } = await start();
    const busy = sandbox.faults.add({ route: 'POST /pos/payment', times: 1, effect: { type: 'terminal', outcome: 'busy' } });
    const offline = sandbox.faults.add({ route: 'POST /pos/payment', times: 1, effect: { type: 'terminal', outcome: 'offline' } });
    const pay = () =>
      raw(sandbox, 'POST', '/pos/payment', { body: { poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' } } });
    const first = await pay();
    expect([first.status, failureOf(first).code, first.headers.get('x-sandbox-fault')]).toEqual([409, 13005, busy.id]);
    const second = await pay();
    expect([second.status, failureOf(second).code, second.headers.get('x-sandbox-fault')]).toEqual([502, 13004, offline.id]);
    expect(sandbox.records.posPayments()).toEqual([]);
  });

  it('probability draws from the seeded stream: the same seed strikes the same calls', async () => {
    const pattern = async (seed: number) => {
      const { sandbox } = await start({ seed });
      sandbox.faults.add(HALF_503);
      return statuses(sandbox);
    };
    const first = await pattern(7);
    expect(await pattern(7)).toEqual(first);
    expect(first).toContain(503);
    expect(first).toContain(201);
    expect(await pattern(8)).not.toEqual(first);
  });
});

describe('fault rules: webhook effects', () => {
  it('duplicate sends copies at once, delay waits on the sandbox clock, drop holds the event until a resend', async () => {
    const hook = await receiver();
    const { sandbox, test } = await start({ webhookUrls: [hook.url], clock: manualClock() });
    const pay = async (reference: string) => {
      const session = await test.sessions.create({ ...sessionParams, customReference: reference });
      await sandbox.paySession('test', session.sessionId);
      await sandbox.webhooksSettled();
    };
    const duplicate = sandbox.faults.add({ event: 'AUTHORISATION', times: 1, effect: { type: 'duplicate', copies: 3 } });
    await pay('dup');
    expect(hook.received.map((delivery) => delivery.headers['x-sandbox-fault'])).toEqual([duplicate.id, duplicate.id, duplicate.id]);
    expect(new Set(hook.received.map((delivery) => delivery.body)).size).toBe(1);

    const delay = sandbox.faults.add({ event: 'AUTHORISATION', times: 1, effect: { type: 'delay', ms: 60_000 } });
    await pay('late');
    expect(hook.received).toHaveLength(3);
    expect(sandbox.records.deliveries({ status: 'pending' }).map((delivery) => delivery.fault)).toEqual([delay.id]);
    await sandbox.advanceClock(60_000);
    await sandbox.webhooksSettled();
    expect(hook.received.map((delivery) => delivery.headers['x-sandbox-fault'])).toHaveLength(4);
    expect(hook.received[3]?.headers['x-sandbox-fault']).toBe(delay.id);

    const drop = sandbox.faults.add({ event: 'AUTHORISATION', times: 1, effect: { type: 'drop' } });
    await pay('lost');
    expect(hook.received).toHaveLength(4);
    const [dropped] = sandbox.records.deliveries({ status: 'abandoned' });
    expect([dropped?.fault, dropped?.attempts]).toEqual([drop.id, []]);
    await sandbox.resendDelivery('test', dropped?.id ?? 0);
    expect(hook.received).toHaveLength(5);
    expect(hook.received[4]?.headers['x-sandbox-fault']).toBeUndefined();
    expect(sandbox.faults.list().map((rule) => rule.injected)).toEqual([1, 1, 1]);
  });

  it('reorder holds an event back until the next event of the same payment has been sent', async () => {
    const hook = await receiver();
    const { sandbox, test } = await start({ webhookUrls: [hook.url] });
    const reorder = sandbox.faults.add({ event: 'AUTHORISATION', times: 1, effect: { type: 'reorder' } });
    const session = await test.sessions.create({ ...sessionParams });
    await sandbox.paySession('test', session.sessionId);
    await sandbox.webhooksSettled();
    expect(hook.received).toEqual([]);
    expect(sandbox.records.deliveries().map((delivery) => [delivery.held, delivery.fault])).toEqual([[true, reorder.id]]);
    await sandbox.emitEvent('test', 'AUTHORISATION', session.sessionId);
    await hook.waitFor(2);
    await sandbox.webhooksSettled();
    expect(hook.received.map((delivery) => delivery.headers['x-sandbox-fault'])).toEqual([undefined, reorder.id]);
    expect(sandbox.records.deliveries().map((delivery) => delivery.delivered)).toEqual([true, true]);
  });
});

describe('fault rules: entries on the timelines of the records they struck', () => {
  it('files API strikes under the record the call made or named, webhook strikes with their deliveries; listings file none', async () => {
    const hook = await receiver();
    const { sandbox } = await start({ webhookUrls: [hook.url], modificationResolveMs: 600_000 });
    const timeline = async (path: string) => (await control(sandbox, 'GET', `test/${path}`)).body.data.faults;
    const lost = sandbox.faults.add({
      route: 'POST /payment/session',
      times: 1,
      effect: { type: 'error', status: 500, when: 'after-commit' },
    });
    const slowList = sandbox.faults.add({ route: 'GET /payment/sessions', times: 1, effect: { type: 'latency', ms: 1 } });
    expect((await createSession(sandbox, 'order-1')).status).toBe(500);
    expect((await raw(sandbox, 'GET', '/payment/sessions')).headers.get('x-sandbox-fault')).toBe(slowList.id);
    const [session] = sandbox.records.sessions();
    const sessionId = session?.sessionId ?? '';
    expect(await timeline(`sessions/${sessionId}`)).toEqual([
      {
        at: expect.any(Number),
        environment: 'test',
        rule: lost.id,
        effect: { type: 'error', status: 500, when: 'after-commit' },
        route: 'POST /payment/session',
        event: null,
        references: [sessionId],
        deliveries: [],
      },
    ]);

    const copies = sandbox.faults.add({ event: 'AUTHORISATION', times: 1, effect: { type: 'duplicate', copies: 2 } });
    const paid = await sandbox.paySession('test', sessionId);
    const paymentReference = paid.paymentReference ?? '';
    const refund = (reference: string) =>
      raw(sandbox, 'POST', '/payment/refund', { body: { paymentReference: reference, amount: { value: 100, currency: 'EUR' } } });
    const refused = sandbox.faults.add({ route: 'POST /payment/refund', times: 1, effect: { type: 'error', status: 503, when: 'before' } });
    expect((await refund(paymentReference)).status).toBe(503);
    expect(sandbox.records.modifications()).toEqual([]);
    const reset = sandbox.faults.add({ route: 'POST /payment/refund', times: 1, effect: { type: 'reset', when: 'after-commit' } });
    await expect(refund(paymentReference)).rejects.toThrow(TypeError);
    const [made] = sandbox.records.modifications();

    const entries = await timeline(`sessions/${sessionId}`);
    expect(entries.map((entry: any) => [entry.rule, entry.route ?? entry.event, entry.deliveries.length])).toEqual([
      [lost.id, 'POST /payment/session', 0],
      [copies.id, 'AUTHORISATION', 2],
      [refused.id, 'POST /payment/refund', 0],
      [reset.id, 'POST /payment/refund', 0],
    ]);
    expect(entries[1].deliveries).toEqual(sandbox.records.deliveries().map((delivery) => delivery.id));
    expect(entries[3].references).toEqual(expect.arrayContaining([paymentReference, made?.operationReference]));
    expect((await timeline(`modifications/${made?.operationReference}`)).map((entry: any) => entry.rule)).toEqual([reset.id]);
    // A session no rule struck has no entry.
    expect(await timeline(`sessions/${(await createSession(sandbox, 'order-2')).body.data.sessionId}`)).toEqual([]);
  });

  it('files a slow terminal under the POS payment it made', async () => {
    const { sandbox } = await start();
    const slow = sandbox.faults.add({ route: 'POST /pos/payment', times: 1, effect: { type: 'terminal', outcome: 'slow', ms: 1 } });
    const made = await raw(sandbox, 'POST', '/pos/payment', {
      body: { poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' } },
    });
    expect(made.headers.get('x-sandbox-fault')).toBe(slow.id);
    const posPaymentId = made.body.data.posPaymentId;
    const entries = (await control(sandbox, 'GET', `test/pos-payments/${posPaymentId}`)).body.data.faults;
    expect(entries.map((entry: any) => [entry.rule, entry.effect.type, entry.references])).toEqual([[slow.id, 'terminal', [posPaymentId]]]);
  });
});

describe('fault rules: the SDK against a failing sandbox', () => {
  it('makes no duplicate session through after-commit 500s, resets and 503s', async () => {
    const { sandbox, baseUrl } = await start({ seed: 23 });
    const route = 'POST /payment/session';
    sandbox.faults.add({ route, probability: 0.1, effect: { type: 'error', status: 503, when: 'before' } });
    sandbox.faults.add({ route, probability: 0.1, effect: { type: 'reset', when: 'before' } });
    sandbox.faults.add({ route, probability: 0.1, effect: { type: 'error', status: 500, when: 'after-commit' } });
    sandbox.faults.add({ route, probability: 0.1, effect: { type: 'reset', when: 'after-commit' } });
    // Default retries (2), backoff and retry budget: only the base URL is the sandbox's.
    const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, environment: 'test' });
    const outcomes: Array<{ reference: string; sessionId?: string; error?: unknown }> = [];
    const creates = 300;
    let nextIndex = 0;
    const worker = async () => {
      while (nextIndex < creates) {
        const reference = `soak-${nextIndex++}`;
        try {
          const session = await client.sessions.create({ ...sessionParams, customReference: reference });
          outcomes.push({ reference, sessionId: session.sessionId });
        } catch (error) {
          outcomes.push({ reference, error });
        }
      }
    };
    await Promise.all(Array.from({ length: 30 }, worker));

    const perReference = new Map<string, string[]>();
    for (const session of sandbox.records.sessions()) {
      const list = perReference.get(session.customReference ?? '') ?? [];
      list.push(session.sessionId);
      perReference.set(session.customReference ?? '', list);
    }
    expect([...perReference.values()].filter((ids) => ids.length > 1)).toEqual([]);
    expect(outcomes).toHaveLength(creates);
    for (const outcome of outcomes) {
      if (outcome.error === undefined) expect(perReference.get(outcome.reference)).toEqual([outcome.sessionId]);
      else expect(outcome.error).toBeInstanceOf(PaymentServiceError);
    }
    const injected = sandbox.faults.list().map((rule) => rule.injected);
    expect(injected.every((count) => count > 0)).toBe(true);
    expect(outcomes.filter((outcome) => outcome.error === undefined).length).toBeGreaterThan(creates / 2);
  }, 30_000);
});

describe('fault rules: the CLI', () => {
  beforeAll(buildOnce, 60_000);

  it('sandbox --faults FILE --seed N: the rules from the start, striking as the same seed does in-process', async () => {
    const file = join(dir, 'faults.json');
    writeFileSync(file, JSON.stringify([HALF_503]));
    const running = await startCli(['--faults', file, '--seed', '7']);
    const { baseUrl, keys, webcode } = running.info;
    const listed = await fetch(`${baseUrl}/_sandbox/faults`, { headers: { 'x-api-key': keys.test } });
    expect(((await listed.json()) as any).data).toEqual([{ ...HALF_503, id: expect.any(String), injected: 0 }]);
    const asCli = await statuses({ baseUrl, keys, webcode } as Sandbox);
    const inProcess = adopt(createSandbox({ seed: 7 }));
    await inProcess.listen();
    inProcess.faults.add(HALF_503);
    expect(asCli).toEqual(await statuses(inProcess));
    expect(asCli).toContain(503);
    expect(running.stderr()).toContain('fault rules: 1 from');
    await stop(running);
  });

  it.each([
    ['a file that is not an array', '{"route":"POST /payment/session"}', 'must be a JSON array'],
    ['a file that is not JSON', '[', 'not JSON'],
    [
      'a rule the sandbox refuses',
      JSON.stringify([HALF_503, { effect: { type: 'truncate' } }]),
      'rule 2: Fault rule refused: name a route',
    ],
  ])('exits 2 on %s, nothing on stdout', async (_name, text, words) => {
    const file = join(dir, `bad-${words.length}.json`);
    writeFileSync(file, text);
    const started = run(['sandbox', '--port', '0', '--faults', file]);
    expect((await started.exit).code).toBe(2);
    expect(started.stderr()).toContain(words);
    expect(started.stdout()).toBe('');
  });

  it('exits 2 on a --seed that is not a whole number', async () => {
    const started = run(['sandbox', '--port', '0', '--seed', '1.5']);
    expect((await started.exit).code).toBe(2);
    expect(started.stderr()).toContain('--seed must be an integer');
  });
});
