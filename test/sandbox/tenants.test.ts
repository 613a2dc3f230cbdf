/**
 * Tenants over real HTTP on 127.0.0.1: made, listed and removed through `/_sandbox/tenants` with
 * the owner's key; each one's records, totals, idempotency entries, clock and webhooks its own; its
 * sessions paid through the hosted page, whose token names its tenant; 100 tenants running one
 * scenario at once; made tenants kept in the data folder and reopened by the next sandbox.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../../src/index.js';
import { createSandbox, manualClock, type Sandbox, SandboxStoreError } from '../../src/sandbox/index.js';
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

describe('identifiers across tenants', () => {
  it('no two tenants share a token, even two given the same seed; each page opens its own tenant’s session', async () => {
    // Seed 207006 hands made tenants 64 and 88 the same seed: their first 32 hex digits are the same.
    const { sandbox, baseUrl } = await startSandbox({ seed: 207_006 });
    try {
      const made = Array.from({ length: 100 }, () => sandbox.createTenant());
      const sessions = await Promise.all(
        made.map(async (tenant) => {
          const client = new PaymentClient({ apiKey: tenant.keys.test, webcode: tenant.webcode, baseUrl, environment: 'test' });
          return { client, session: await client.sessions.create(sessionParams) };
        }),
      );
      const tokens = sessions.map(({ session }) => new URL(session.paymentUrl).pathname.split('/').pop());
      expect(new Set(tokens).size).toBe(100);
      for (const { client, session } of sessions) {
        expect((await submitForm(session.paymentUrl)).target?.startsWith(URL_OK)).toBe(true);
        expect((await client.sessions.retrieve(session.sessionId)).status).toBe('completed');
      }
      // A token whose prefix names no tenant opens nothing.
      const [first] = tokens;
      expect((await openPage(`${baseUrl}/pay-external-test/TNOBODY-${first?.split('-')[1]}`)).status).toBe(404);
    } finally {
      await sandbox.close();
    }
  }, 20_000);

  it('two tenants given the same seed still draw different PSP references', async () => {
    const { sandbox, baseUrl } = await startSandbox({ seed: 207_006 });
    try {
      const made = Array.from({ length: 100 }, () => sandbox.createTenant());
      const twins = [made[64], made[88]].map((tenant) => tenant as (typeof made)[number]);
      const references = await Promise.all(
        twins.map(async (tenant) => {
          const client = new PaymentClient({ apiKey: tenant.keys.test, webcode: tenant.webcode, baseUrl, environment: 'test' });
          const payment = await client.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 1_000, currency: 'EUR' } });
          return payment.pspReference;
        }),
      );
      expect(references[0]).toMatch(/^TEST\d{16}$/);
      expect(references[1]).not.toBe(references[0]);
    } finally {
      await sandbox.close();
    }
  });
});

describe('made tenants in the data folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-tenants-'));
  const open: Sandbox[] = [];
  afterAll(async () => {
    await Promise.all(open.map((sandbox) => sandbox.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function startOn(dataDir: string): Promise<{ sandbox: Sandbox; baseUrl: string }> {
    const sandbox = createSandbox({ dataDir, posDelayMs: 0, modificationResolveMs: 60_000 });
    open.push(sandbox);
    return { sandbox, baseUrl: (await sandbox.listen()).baseUrl };
  }

  async function tenantControl(baseUrl: string, key: string, method: 'GET' | 'POST', path: string, body?: unknown) {
    const response = await fetch(`${baseUrl}/_sandbox/${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()).data;
  }

  it('reopens them on restart: the same keys, records, clock offset, and scheduled work resumed; DELETE removes their files', async () => {
    const dataDir = join(dir, 'restart');
    const first = await startOn(dataDir);
    const tenant = first.sandbox.createTenant({ webcode: 'WORKER_1', name: 'worker 1' });
    const client = new PaymentClient({ apiKey: tenant.keys.test, webcode: tenant.webcode, baseUrl: first.baseUrl, environment: 'test' });
    const session = await client.sessions.create(sessionParams);
    const paid = await tenantControl(first.baseUrl, tenant.keys.test, 'POST', `test/sessions/${session.sessionId}/pay`);
    const advanced = await tenantControl(first.baseUrl, tenant.keys.test, 'POST', 'clock/advance', { duration: '1h' });
    expect(advanced.offsetMs).toBe(3_600_000);
    // Resolves 60 s of the tenant's clock after the request: scheduled work the restart must keep.
    const refund = await client.modifications.refund({ paymentReference: paid.paymentReference });
    const list = join(dataDir, 'tenants', 'tenants.json');
    expect(existsSync(join(dataDir, 'tenants', 'WORKER_1', 'sandbox.db'))).toBe(true);
    // It holds keys and client secrets: its owner's only.
    expect(statSync(list).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'tenants')).mode & 0o777).toBe(0o700);
    await first.sandbox.close();

    const second = await startOn(dataDir);
    expect(second.sandbox.tenants()).toEqual([tenant]);
    const again = new PaymentClient({ apiKey: tenant.keys.test, webcode: tenant.webcode, baseUrl: second.baseUrl, environment: 'test' });
    expect(await again.sessions.retrieve(session.sessionId)).toMatchObject({
      status: 'completed',
      paymentReference: paid.paymentReference,
    });
    expect((await again.sessions.list().pages().next()).value?.total).toBe(1);
    // Its records stay its own: the sandbox's keys do not see them.
    expect(second.sandbox.records.sessions()).toEqual([]);
    const clock = await tenantControl(second.baseUrl, tenant.keys.test, 'GET', 'clock');
    expect(clock.offsetMs).toBe(3_600_000);
    // The refund's resolution was stored: it falls due on the tenant's clock after the restart.
    const [pending] = await again.modifications
      .list({ type: 'refund' })
      .pages()
      .next()
      .then((page) => page.value?.items ?? []);
    expect(pending).toMatchObject({ operationReference: refund.refundReference, status: 'pending' });
    await tenantControl(second.baseUrl, tenant.keys.test, 'POST', 'clock/advance', { duration: '61s' });
    const [resolved] = await again.modifications
      .list({ type: 'refund' })
      .pages()
      .next()
      .then((page) => page.value?.items ?? []);
    expect(resolved?.status).toBe('success');
    // A payment link of before the restart finds the tenant's session: paid, it sends the customer to urlOk.
    expect((await openPage(session.paymentUrl.replace(first.baseUrl, second.baseUrl))).target?.startsWith(URL_OK)).toBe(true);

    await second.sandbox.removeTenant('WORKER_1');
    expect(existsSync(join(dataDir, 'tenants', 'WORKER_1'))).toBe(false);
    expect(JSON.parse(readFileSync(list, 'utf8'))).toEqual({ tenants: [] });
    await second.sandbox.close();
    const third = await startOn(dataDir);
    expect(third.sandbox.tenants()).toEqual([]);
    // The webcode is free again, and a tenant made with it starts empty.
    const reborn = third.sandbox.createTenant({ webcode: 'WORKER_1' });
    expect(reborn.keys.test).not.toBe(tenant.keys.test);
    const fresh = new PaymentClient({ apiKey: reborn.keys.test, webcode: 'WORKER_1', baseUrl: third.baseUrl, environment: 'test' });
    expect((await fresh.sessions.list().pages().next()).value?.total).toBe(0);
  }, 20_000);

  it("keeps each tenant's folder 0700 and its database, -wal and -shm 0600, also those an earlier version made", async () => {
    const dataDir = join(dir, 'modes');
    const folder = join(dataDir, 'tenants', 'PRIVATE_1');
    const files = ['sandbox.db', 'sandbox.db-wal', 'sandbox.db-shm'].map((name) => join(folder, name));
    const modes = () => [folder, ...files].map((path) => (statSync(path).mode & 0o777).toString(8));
    const first = await startOn(dataDir);
    const tenant = first.sandbox.createTenant({ webcode: 'PRIVATE_1' });
    // A write, so that the write-ahead log holds something while the store is open.
    const client = new PaymentClient({ apiKey: tenant.keys.test, webcode: tenant.webcode, baseUrl: first.baseUrl, environment: 'test' });
    await client.sessions.create(sessionParams);
    expect(modes()).toEqual(['700', '600', '600', '600']);
    await first.sandbox.close();

    // The modes an earlier version gave them: opened again, they are made the owner's only.
    chmodSync(folder, 0o755);
    // The -wal and -shm files go when the last connection closes: made again as a crash leaves them.
    for (const file of files) {
      if (existsSync(file)) chmodSync(file, 0o644);
      else writeFileSync(file, '', { mode: 0o644 });
    }
    const second = await startOn(dataDir);
    expect(second.sandbox.tenants().map((made) => made.webcode)).toEqual(['PRIVATE_1']);
    expect(modes()).toEqual(['700', '600', '600', '600']);
    await second.sandbox.close();
  });

  it('deletes the folder of a tenant whose removal was cut short; refuses a damaged list by name', async () => {
    const dataDir = join(dir, 'damaged');
    const first = await startOn(dataDir);
    first.sandbox.createTenant({ webcode: 'KEPT' });
    first.sandbox.createTenant({ webcode: 'GONE' });
    await first.sandbox.close();
    // A crash after GONE left the list, before its files were deleted.
    const list = join(dataDir, 'tenants', 'tenants.json');
    const kept = JSON.parse(readFileSync(list, 'utf8'));
    writeFileSync(list, JSON.stringify({ tenants: kept.tenants.filter((made: { webcode: string }) => made.webcode === 'KEPT') }));
    const second = await startOn(dataDir);
    expect(second.sandbox.tenants().map((made) => made.webcode)).toEqual(['KEPT']);
    expect(existsSync(join(dataDir, 'tenants', 'GONE'))).toBe(false);
    await second.sandbox.close();

    writeFileSync(list, '{ "tenants": [ { "webcode": "KEPT" ');
    const refusal = (() => {
      try {
        createSandbox({ dataDir });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refusal).toBeInstanceOf(SandboxStoreError);
    expect((refusal as SandboxStoreError).path).toBe(list);
    expect((refusal as Error).message).toContain(`mv ${list} ${list}.broken`);
  });
});
