/**
 * Tenants over real HTTP on 127.0.0.1: made, listed and removed through `/_sandbox/tenants` with
 * the owner's key; each one's records, totals, idempotency entries, clock and webhooks its own; its
 * sessions paid through the hosted page; 100 tenants running one scenario at once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../../src/index.js';
import { manualClock } from '../../src/sandbox/index.js';
import { openPage, type Receiver, raw, type Started, sessionParams, startReceiver, startSandbox, submitForm, URL_OK } from './support.js';

interface Answer {
  status: number;
  body: any;
}

interface Made {
  webcode: string;
  name: string;
  keys: { test: string; live: string };
  clientSecrets: { test: string; live: string };
}

let started: Started;

async function control(method: 'GET' | 'POST' | 'DELETE', path: string, options: { key?: string; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = { 'x-api-key': options.key ?? started.sandbox.keys.test };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${started.baseUrl}/_sandbox/${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  return { status: response.status, body: await response.json() };
}

async function makeTenant(body: Record<string, unknown> = {}): Promise<Made> {
  const answer = await control('POST', 'tenants', { body });
  expect(answer.status).toBe(201);
  return answer.body.data;
}

function clientOf(tenant: Made): PaymentClient {
  return new PaymentClient({
    apiKey: tenant.keys.test,
    webcode: tenant.webcode,
    baseUrl: started.baseUrl,
    environment: 'test',
    maxRetries: 0,
  });
}

function expectFailure(answer: Answer, status: number, code: number): void {
  expect(answer.status).toBe(status);
  expect(answer.body).toMatchObject({ success: false, error: { code, statusCode: status, message: expect.any(String) } });
}

const clock = manualClock(Date.UTC(2026, 0, 5, 9));

beforeAll(async () => {
  started = await startSandbox({ clock });
});
afterAll(() => started.sandbox.close());
afterEach(async () => {
  for (const tenant of started.sandbox.tenants()) await started.sandbox.removeTenant(tenant.webcode);
});

describe('POST, GET and DELETE /_sandbox/tenants', () => {
  it('makes a tenant with its own webcode, keys and client secrets, lists it and removes it', async () => {
    const made = await makeTenant({ webcode: 'WORKER_1', name: 'worker 1' });
    expect(made).toEqual({
      webcode: 'WORKER_1',
      name: 'worker 1',
      keys: { test: expect.stringMatching(/^sk_test_[A-Za-z0-9]{24}$/), live: expect.stringMatching(/^sk_live_[A-Za-z0-9]{24}$/) },
      clientSecrets: { test: expect.stringMatching(/^cs_test_/), live: expect.stringMatching(/^cs_live_/) },
    });
    const generated = await makeTenant();
    expect(generated.webcode).toMatch(/^T[A-Z0-9]{10}$/);
    expect(generated.name).toBe(generated.webcode);
    expect(generated.keys.test).not.toBe(made.keys.test);

    const listed = await control('GET', 'tenants', { key: started.sandbox.keys.live });
    expect(listed.status).toBe(200);
    expect(listed.body.data.tenants).toEqual([made, generated]);

    const session = await clientOf(made).sessions.create(sessionParams);
    expect(session.sessionId).toMatch(/^WORKER_1-EXTT-/);
    const removed = await control('DELETE', 'tenants/WORKER_1');
    expect(removed).toEqual({ status: 200, body: { success: true, data: { webcode: 'WORKER_1', removed: true } } });
    // Its keys stop working at once; the other tenant stays.
    expectFailure(await control('GET', 'test/sessions', { key: made.keys.test }), 403, 11008);
    expect((await control('GET', 'tenants')).body.data.tenants).toEqual([generated]);
    expectFailure(await control('DELETE', 'tenants/WORKER_1'), 404, 19404);
  });

  it('refuses a webcode of the wrong form or in use, a bad name, and keys that are not the owner’s', async () => {
    for (const webcode of ['', 'worker', 'A-B', 'X'.repeat(33), 42, null]) {
      expectFailure(await control('POST', 'tenants', { body: { webcode } }), 400, 12001);
    }
    for (const name of ['', '   ', 'n'.repeat(101), 7]) expectFailure(await control('POST', 'tenants', { body: { name } }), 400, 12001);
    expectFailure(await control('POST', 'tenants', { body: [] }), 400, 12001);
    const made = await makeTenant({ webcode: 'TAKEN' });
    const taken = await control('POST', 'tenants', { body: { webcode: 'TAKEN' } });
    expectFailure(taken, 409, 19412);
    expect(taken.body.error.message).toBe('A tenant with webcode TAKEN exists already');
    expectFailure(await control('POST', 'tenants', { body: { webcode: started.sandbox.webcode } }), 409, 19412);
    // A tenant's own key manages nothing, nor does an unknown one.
    for (const key of [made.keys.test, made.keys.live, 'sk_test_unknown']) {
      expectFailure(await control('GET', 'tenants', { key }), 403, 11008);
      expectFailure(await control('POST', 'tenants', { key, body: {} }), 403, 11008);
      expectFailure(await control('DELETE', 'tenants/TAKEN', { key }), 403, 11008);
    }
    expectFailure(await control('DELETE', 'tenants'), 405, 19405);
    expectFailure(await control('POST', 'tenants/TAKEN'), 405, 19405);
    // Nothing was made by the refused calls.
    expect(started.sandbox.tenants().map((tenant) => tenant.webcode)).toEqual(['TAKEN']);
  });

  it('sandbox.createTenant, tenants and removeTenant do the same in process', async () => {
    const made = started.sandbox.createTenant({ name: 'in process' });
    expect(started.sandbox.tenants()).toEqual([made]);
    expect((await control('GET', 'tenants')).body.data.tenants).toEqual([made]);
    expect(() => started.sandbox.createTenant({ webcode: made.webcode })).toThrow(`A tenant with webcode ${made.webcode} exists already`);
    await started.sandbox.removeTenant(made.webcode);
    expect(started.sandbox.tenants()).toEqual([]);
  });
});

describe('isolation', () => {
  it('a tenant’s keys see only its records, in the API and the control API; meta.total counts its own', async () => {
    const [a, b] = [await makeTenant(), await makeTenant()] as [Made, Made];
    const ownA = await clientOf(a).sessions.create(sessionParams);
    await clientOf(a).sessions.create(sessionParams);
    const ownB = await clientOf(b).sessions.create(sessionParams);
    await started.test.sessions.create(sessionParams);

    const listA = await raw(started.sandbox, 'GET', '/payment/sessions', { key: a.keys.test, webcode: a.webcode });
    expect(listA.body.data.meta.total).toBe(2);
    const listB = await raw(started.sandbox, 'GET', '/payment/sessions', { key: b.keys.test, webcode: b.webcode });
    expect(listB.body.data.meta.total).toBe(1);
    expect(listB.body.data.payments.map((item: { sessionId: string }) => item.sessionId)).toEqual([ownB.sessionId]);
    // Another tenant's session is not found with B's key, nor B's with the owner's.
    expect((await raw(started.sandbox, 'GET', `/payment/session/${ownA.sessionId}`, { key: b.keys.test, webcode: b.webcode })).status).toBe(
      404,
    );
    expect((await raw(started.sandbox, 'GET', `/payment/session/${ownB.sessionId}`)).status).toBe(404);
    // A key with another tenant's webcode is refused.
    expect((await raw(started.sandbox, 'GET', '/payment/sessions', { key: b.keys.test, webcode: a.webcode })).status).toBe(403);
    const controlB = await control('GET', 'test/sessions', { key: b.keys.test });
    expect(controlB.body.data.total).toBe(1);
    expectFailure(await control('GET', `test/sessions/${encodeURIComponent(ownA.sessionId)}`, { key: b.keys.test }), 404, 19404);
  });

  it('the same Idempotency-Key in two tenants makes two records', async () => {
    const [a, b] = [await makeTenant(), await makeTenant()] as [Made, Made];
    const ids: string[] = [];
    for (const tenant of [a, b]) {
      const options = { key: tenant.keys.test, webcode: tenant.webcode, body: sessionParams, idempotencyKey: 'order-42-create' };
      const first = await raw(started.sandbox, 'POST', '/payment/session', options);
      const again = await raw(started.sandbox, 'POST', '/payment/session', options);
      expect(again.body.data.sessionId).toBe(first.body.data.sessionId);
      ids.push(first.body.data.sessionId);
    }
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids[0]?.startsWith(`${a.webcode}-`)).toBe(true);
    expect(ids[1]?.startsWith(`${b.webcode}-`)).toBe(true);
  });

  it('advancing one tenant’s clock moves nobody else’s expiries; its session is paid on the hosted page', async () => {
    const [a, b] = [await makeTenant(), await makeTenant()] as [Made, Made];
    const sessionA = await clientOf(a).sessions.create(sessionParams);
    const sessionB = await clientOf(b).sessions.create(sessionParams);
    // Opening each page starts its 300 s countdown, in its own tenant.
    expect((await openPage(sessionA.paymentUrl)).status).toBe(200);
    expect((await openPage(sessionB.paymentUrl)).status).toBe(200);
    const advanced = await control('POST', 'clock/advance', { key: a.keys.test, body: { duration: '10m' } });
    expect(advanced.body.data.offsetMs).toBe(600_000);
    expect((await control('GET', 'clock', { key: b.keys.test })).body.data.offsetMs).toBe(0);
    expect((await control('GET', 'clock')).body.data.offsetMs).toBe(0);
    expect((await clientOf(a).sessions.retrieve(sessionA.sessionId)).status).toBe('expired');
    expect((await clientOf(b).sessions.retrieve(sessionB.sessionId)).status).toBe('pending');

    const paid = await submitForm(sessionB.paymentUrl);
    expect(paid.target?.startsWith(URL_OK)).toBe(true);
    expect((await clientOf(b).sessions.retrieve(sessionB.sessionId)).status).toBe('completed');
  });

  it('a tenant’s fault rules strike only its own calls', async () => {
    const [a, b] = [await makeTenant(), await makeTenant()];
    const rule = { route: 'POST /payment/session', effect: { type: 'error', status: 503, when: 'before' } };
    expect((await control('POST', 'faults', { key: a.keys.test, body: rule })).status).toBe(200);
    expect((await control('GET', 'faults', { key: b.keys.test })).body.data).toEqual([]);
    await expect(clientOf(a).sessions.create(sessionParams)).rejects.toMatchObject({ status: 503 });
    await expect(clientOf(b).sessions.create(sessionParams)).resolves.toMatchObject({ status: 'pending' });
    await expect(
      new PaymentClient({
        apiKey: started.sandbox.keys.test,
        webcode: started.sandbox.webcode,
        baseUrl: started.baseUrl,
        environment: 'test',
        maxRetries: 0,
      }).sessions.create(sessionParams),
    ).resolves.toMatchObject({ status: 'pending' });
  });
});

describe('webhooks', () => {
  let receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    receivers = [];
  });

  it('a tenant’s webhooks go only to its URLs', async () => {
    const [a, b] = [await makeTenant(), await makeTenant()] as [Made, Made];
    receivers = [await startReceiver(), await startReceiver()];
    const [toA, toB] = receivers as [Receiver, Receiver];
    for (const [tenant, receiver] of [
      [a, toA],
      [b, toB],
    ] as const) {
      expect((await control('POST', 'webhook-urls', { key: tenant.keys.test, body: { url: receiver.url } })).body.data.urls).toEqual([
        receiver.url,
      ]);
    }
    expect((await control('GET', 'webhook-urls')).body.data.urls).toEqual([]);
    const session = await clientOf(a).sessions.create(sessionParams);
    const paid = await control('POST', `test/sessions/${encodeURIComponent(session.sessionId)}/pay`, { key: a.keys.test });
    expect(paid.body.data.status).toBe('completed');
    const [delivered] = await toA.waitFor(1);
    expect(delivered?.json).toMatchObject({ event_code: 'AUTHORISATION', data: { paymentReference: paid.body.data.paymentReference } });
    expect(paid.body.data.paymentReference).toMatch(new RegExp(`^${a.webcode}-PXTT-`));
    expect(toB.received).toEqual([]);
  });
});

describe('scale', () => {
  it('100 tenants run the same scenario at once and none sees another’s record', async () => {
    const tenants = await Promise.all(Array.from({ length: 100 }, () => makeTenant()));
    const seen = await Promise.all(
      tenants.map(async (tenant) => {
        const client = clientOf(tenant);
        const session = await client.sessions.create(sessionParams);
        const paid = await control('POST', `test/sessions/${encodeURIComponent(session.sessionId)}/pay`, { key: tenant.keys.test });
        expect(paid.status).toBe(200);
        const listed = await raw(started.sandbox, 'GET', '/payment/sessions', { key: tenant.keys.test, webcode: tenant.webcode });
        return {
          own: session.sessionId,
          listed: listed.body.data.payments.map((item: { sessionId: string }) => item.sessionId),
          total: listed.body.data.meta.total,
        };
      }),
    );
    for (const result of seen) {
      expect(result.listed).toEqual([result.own]);
      expect(result.total).toBe(1);
    }
    expect(new Set(seen.map((result) => result.own)).size).toBe(100);
  }, 20_000);
});
