/**
 * The request log end to end, over HTTP on 127.0.0.1: what each request to the service API sent and
 * got back (refused ones with why), through `sandbox.requests`, the control API and its document;
 * secrets masked; bounded per tenant; kept across restarts with a data folder; tenants apart.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../src/openapi/endpoints.js';
import { API_ROUTES } from '../../src/sandbox/api/routes.js';
import { createSandbox, type RequestLogEntry, type Sandbox } from '../../src/sandbox/index.js';
import { maskSecret } from '../../src/sandbox/request-log/secrets.js';
import { RequestLog, TRIM_EVERY } from '../../src/sandbox/request-log/store.js';
import { SandboxStore } from '../../src/sandbox/store.js';
import { paidSession, raw, sessionParams, useSandboxes } from './support.js';

const sandboxes = useSandboxes();
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'request-log-'));
  folders.push(dir);
  return dir;
}

async function control(sandbox: Sandbox, method: string, path: string, key = sandbox.keys.test): Promise<{ status: number; body: any }> {
  const response = await fetch(`${sandbox.baseUrl}/_sandbox/${path}`, { method, headers: { 'x-api-key': key } });
  return { status: response.status, body: await response.json() };
}

async function newest(sandbox: Sandbox, filter: Parameters<Sandbox['requests']['list']>[0] = {}): Promise<RequestLogEntry> {
  const [entry] = (await sandbox.requests.list({ ...filter, take: 1 })).items;
  if (!entry) throw new Error('no entry in the request log');
  return entry;
}

describe('what a request sent and got back', () => {
  it('records a refund with its route, operation, key, bodies and the records it touched; a replay is marked', async () => {
    const { sandbox, test } = await sandboxes.start();
    const paid = await paidSession(test);
    const refund = { webcode: sandbox.webcode, paymentReference: paid.paymentReference, amount: { value: 500, currency: 'EUR' } };
    const first = await raw(sandbox, 'POST', '/payment/refund', { body: refund, idempotencyKey: 'refund-once' });
    expect(first.status).toBe(202);
    await raw(sandbox, 'POST', '/payment/refund', { body: refund, idempotencyKey: 'refund-once' });

    expect(await sandbox.requests.count({ operation: 'refund', status: 202 })).toBe(2);
    expect(await sandbox.requests.count({ operation: 'refund', idempotencyKey: 'refund-once' })).toBe(2);
    const [replay, original] = (await sandbox.requests.list({ operation: 'refund' })).items;
    expect(original).toMatchObject({
      environment: 'test',
      tenant: sandbox.webcode,
      method: 'POST',
      route: 'POST /payment/refund',
      operation: 'refund',
      path: '/external/v1/test/payment/refund',
      query: {},
      idempotencyKey: 'refund-once',
      replayed: false,
      status: 202,
      requestBodyTruncated: false,
      responseBodyTruncated: false,
      traceId: null,
      faultRule: null,
      issues: [],
    });
    expect(JSON.parse(original?.requestBody ?? '')).toEqual(refund);
    expect(JSON.parse(original?.responseBody ?? '')).toEqual(first.body);
    const refundReference = first.body.data.refundReference as string;
    expect(original?.references).toEqual({
      sessionIds: [],
      paymentReferences: [paid.paymentReference],
      posPaymentIds: [],
      modificationReferences: [refundReference],
    });
    expect(replay).toMatchObject({ replayed: true, status: 202, idempotencyKey: 'refund-once' });
    expect(original?.id).toMatch(new RegExp(`^${sandbox.webcode}-REQ-\\d+$`));
    expect(Date.parse(original?.at ?? '')).not.toBeNaN();
    expect(original?.durationMs).toBeGreaterThanOrEqual(0);
    expect(await sandbox.requests.get(original?.id ?? '')).toEqual(original);

    // The records it made or named find it: the session's id, its payment, the refund.
    expect(await sandbox.requests.count({ reference: refundReference })).toBe(2);
    expect((await newest(sandbox, { reference: paid.sessionId })).operation).toBe('retrieveSession');
  });

  it("names each endpoint by the Live operation's operationId of /openapi.json, in both environments", async () => {
    for (const route of API_ROUTES) {
      const [method, path] = route.template.split(' ');
      const documented = ENDPOINTS.find((endpoint) => endpoint.method.toUpperCase() === method && endpoint.path === path);
      expect(documented?.operationId, route.template).toBe(route.operationId);
    }
    const { sandbox } = await sandboxes.start();
    await raw(sandbox, 'GET', '/payment/sessions', { env: 'live' });
    expect(await newest(sandbox, { environment: 'live' })).toMatchObject({ operation: 'listSessions', environment: 'live', status: 200 });
    expect(await sandbox.requests.count({ environment: 'test' })).toBe(0);
  });
});

describe('refused requests, with why', () => {
  it('a key the sandbox does not know: 403, X-API-KEY at fault, in the log of the tenant its webcode names', async () => {
    const { sandbox } = await sandboxes.start();
    const made = sandbox.createTenant({ webcode: 'OTHER' });
    await raw(sandbox, 'GET', '/payment/sessions', { key: 'sk_test_not_a_key_1234', webcode: made.webcode });
    expect(await newest(sandbox, { tenant: 'OTHER' })).toMatchObject({
      tenant: 'OTHER',
      status: 403,
      operation: 'listSessions',
      issues: [{ path: 'X-API-KEY', message: 'API key without permission for this resource' }],
    });
    // No tenant named: the sandbox's own log, with no tenant.
    await raw(sandbox, 'GET', '/payment/sessions', { key: null, webcode: 'NOBODY' });
    const entry = await newest(sandbox);
    expect(entry).toMatchObject({ tenant: null, status: 403, issues: [{ path: 'X-API-KEY' }] });
    expect(entry.traceId).toMatch(/^sbx-/);
  });

  it("a key of the other environment, and a webcode that is not the key's: 403 naming what is wrong", async () => {
    const { sandbox } = await sandboxes.start();
    await raw(sandbox, 'GET', '/payment/sessions', { key: sandbox.keys.live });
    expect(await newest(sandbox)).toMatchObject({ status: 403, tenant: sandbox.webcode, issues: [{ path: 'X-API-KEY' }] });
    await raw(sandbox, 'POST', '/payment/session', { webcode: 'ELSEWHERE', body: sessionParams });
    expect(await newest(sandbox)).toMatchObject({
      status: 403,
      operation: 'createSession',
      issues: [{ path: 'webcode', message: 'webcode does not match the API key' }],
    });
  });

  it('bad bodies: not JSON, a field of the wrong value, too large to keep whole', async () => {
    const { sandbox } = await sandboxes.start();
    await raw(sandbox, 'POST', '/payment/session', { rawBody: '{"webcode": ' });
    expect(await newest(sandbox)).toMatchObject({
      status: 400,
      requestBody: '{"webcode": ',
      issues: [{ path: '', message: 'Request body must be valid JSON' }],
    });
    await raw(sandbox, 'POST', '/payment/session', { body: { ...sessionParams, amount: { value: -5, currency: 'EUR' } } });
    expect((await newest(sandbox)).issues).toEqual([
      { path: 'amount.value', message: 'amount.value must be a positive integer number of cents' },
    ]);
    const response = await fetch(`${sandbox.baseUrl}/external/v1/test/payment/session`, {
      method: 'POST',
      headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(response.status).toBe(415);
    expect((await newest(sandbox)).issues).toEqual([{ path: 'Content-Type', message: 'Content-Type must be application/json' }]);

    const long = 'é'.repeat(40_000);
    await raw(sandbox, 'POST', '/payment/session', { body: { ...sessionParams, description: long } });
    const cut = await newest(sandbox);
    expect(cut.status).toBe(400);
    expect(cut.requestBodyTruncated).toBe(true);
    expect(Buffer.byteLength(cut.requestBody ?? '')).toBeLessThanOrEqual(65_536);
    expect(Buffer.byteLength(cut.requestBody ?? '')).toBeGreaterThan(65_000);
    expect(cut.requestBody).not.toContain('\uFFFD');
    expect(cut.responseBodyTruncated).toBe(false);
  });

  it('no endpoint, or another method: route and operation null', async () => {
    const { sandbox } = await sandboxes.start();
    await raw(sandbox, 'GET', '/payment/nothing', { query: { take: '5' } });
    expect(await newest(sandbox)).toMatchObject({
      route: null,
      operation: null,
      status: 404,
      path: '/external/v1/test/payment/nothing',
      query: { webcode: sandbox.webcode, take: '5' },
      issues: [{ path: '', message: 'No endpoint at /external/v1/test/payment/nothing' }],
    });
    await raw(sandbox, 'GET', '/payment/refund');
    expect(await newest(sandbox)).toMatchObject({ route: null, operation: null, status: 405 });
  });

  it('injected faults: the rule that answered, before the operation, after it, and a reset with no answer', async () => {
    const { sandbox } = await sandboxes.start();
    const before = sandbox.faults.add({ route: 'POST /payment/session', times: 1, effect: { type: 'error', status: 503, when: 'before' } });
    await raw(sandbox, 'POST', '/payment/session', { body: sessionParams });
    expect(await newest(sandbox)).toMatchObject({ status: 503, faultRule: before.id, operation: 'createSession', issues: [] });
    const after = sandbox.faults.add({
      route: 'GET /payment/sessions',
      times: 1,
      effect: { type: 'error', status: 500, when: 'after-commit' },
    });
    await raw(sandbox, 'GET', '/payment/sessions');
    expect(await newest(sandbox)).toMatchObject({ status: 500, faultRule: after.id });
    const reset = sandbox.faults.add({ route: 'GET /payment/sessions', times: 1, effect: { type: 'reset', when: 'before' } });
    await expect(
      fetch(`${sandbox.baseUrl}/external/v1/test/payment/sessions?webcode=${sandbox.webcode}`, {
        headers: { 'x-api-key': sandbox.keys.test },
      }),
    ).rejects.toThrow();
    expect(await newest(sandbox)).toMatchObject({ status: 0, faultRule: reset.id, responseBody: null });
    expect(await sandbox.requests.count({ status: '5xx' })).toBe(2);
  });
});

describe('the control API', () => {
  it('lists newest first with filters and paging, gets one entry, and deletes, on the tenant of the key', async () => {
    const { sandbox } = await sandboxes.start();
    for (let index = 0; index < 5; index++) await raw(sandbox, 'GET', '/payment/sessions');
    await raw(sandbox, 'GET', '/payment/nothing');
    const all = await control(sandbox, 'GET', 'test/requests?take=2');
    expect(all.status).toBe(200);
    expect(all.body.data).toMatchObject({ hasMore: true, total: 6 });
    expect(all.body.data.items.map((entry: RequestLogEntry) => entry.status)).toEqual([404, 200]);
    const next = await control(sandbox, 'GET', `test/requests?take=2&cursor=${all.body.data.cursor}`);
    const ids = [...all.body.data.items, ...next.body.data.items].map((entry: RequestLogEntry) => Number(entry.id.split('-').pop()));
    expect(ids).toEqual([6, 5, 4, 3]);
    expect((await control(sandbox, 'GET', 'test/requests?status=4xx')).body.data.total).toBe(1);
    expect((await control(sandbox, 'GET', 'test/requests?status=200&operation=listSessions&method=get')).body.data.total).toBe(5);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await control(sandbox, 'GET', `test/requests?since=${future}`)).body.data.total).toBe(0);
    expect((await control(sandbox, 'GET', `test/requests?until=${future}`)).body.data.total).toBe(6);

    const id = all.body.data.items[0].id as string;
    expect((await control(sandbox, 'GET', `test/requests/${id}`)).body.data.id).toBe(id);
    expect((await control(sandbox, 'GET', `live/requests/${id}`, sandbox.keys.live)).status).toBe(404);
    expect((await control(sandbox, 'GET', 'test/requests/nothing')).status).toBe(404);

    const bad = await control(sandbox, 'GET', 'test/requests?status=teapot');
    expect([bad.status, bad.body.error.message]).toEqual([400, 'status must be a status code (202) or a class (4xx, 5xx)']);
    expect((await control(sandbox, 'GET', 'test/requests?since=yesterday')).status).toBe(400);
    expect((await control(sandbox, 'GET', 'test/requests?take=500')).status).toBe(400);

    expect((await control(sandbox, 'DELETE', 'test/requests?status=4xx')).body.data).toEqual({ deleted: 1 });
    expect((await control(sandbox, 'DELETE', 'test/requests')).body.data).toEqual({ deleted: 5 });
    expect(await sandbox.requests.count()).toBe(0);
    // The listings themselves are control requests: not in the log.
    await expect(sandbox.requests.clear()).resolves.toBe(0);
  });

  it('describes the three routes in the control document', async () => {
    const { sandbox } = await sandboxes.start();
    const document = await (await fetch(`${sandbox.baseUrl}/_sandbox/openapi.json`)).json();
    expect(Object.keys(document.paths.get ? {} : document.paths)).toEqual(
      expect.arrayContaining(['/_sandbox/test/requests', '/_sandbox/live/requests/{requestId}']),
    );
    expect(document.paths['/_sandbox/test/requests'].get.operationId).toBe('testListRequests');
    expect(document.paths['/_sandbox/test/requests'].delete.operationId).toBe('testClearRequests');
    expect(document.components.schemas.RequestLogEntry.required).toEqual(expect.arrayContaining(['id', 'issues', 'references']));
  });
});

describe('tenants apart', () => {
  it("two tenants never see each other's entries, through the control API or sandbox.requests", async () => {
    const { sandbox } = await sandboxes.start();
    const one = sandbox.createTenant({ webcode: 'ONE' });
    const two = sandbox.createTenant({ webcode: 'TWO' });
    await raw(sandbox, 'GET', '/payment/sessions', { key: one.keys.test, webcode: 'ONE' });
    for (let index = 0; index < 2; index++) await raw(sandbox, 'GET', '/payment/sessions', { key: two.keys.test, webcode: 'TWO' });
    const seen = async (key: string) =>
      ((await control(sandbox, 'GET', 'test/requests', key)).body.data.items as RequestLogEntry[]).map((entry) => entry.tenant);
    expect(await seen(one.keys.test)).toEqual(['ONE']);
    expect(await seen(two.keys.test)).toEqual(['TWO', 'TWO']);
    expect(await seen(sandbox.keys.test)).toEqual([]);
    expect(await sandbox.requests.count({ tenant: 'ONE' })).toBe(1);
    expect(await sandbox.requests.count({ tenant: 'TWO' })).toBe(2);
    const [entryOfTwo] = (await sandbox.requests.list({ tenant: 'TWO' })).items;
    expect((await control(sandbox, 'GET', `test/requests/${entryOfTwo?.id}`, one.keys.test)).status).toBe(404);
    await expect(sandbox.requests.count({ tenant: 'NOBODY' })).rejects.toThrow('no tenant with webcode NOBODY');
  });
});

describe('secrets', () => {
  const KEY = 'sk_test_SENTINELkey4815162342';
  const SECRET = 'cs_test_SENTINELsecret1123581321';

  it('never keeps an API key or a client secret whole: not in an entry, nor in a file of the data folder', async () => {
    const dataDir = tempDir();
    const sandbox = sandboxes.adopt(createSandbox({ dataDir, posDelayMs: 0, keys: { test: KEY }, clientSecrets: { test: SECRET } }));
    await sandbox.listen();
    // The key where it belongs, and where an app should never put it or the secret (a request refused,
    // so that no record keeps them: what an app stores in a record's fields is its own doing).
    const leaky = { ...sessionParams, amount: { value: -1, currency: 'EUR' }, description: `key ${KEY} secret ${SECRET}` };
    await raw(sandbox, 'POST', '/payment/session', { body: leaky });
    await fetch(`${sandbox.baseUrl}/external/v1/test/payment/sessions?webcode=${sandbox.webcode}&token=${KEY}`, {
      headers: { 'x-api-key': KEY, authorization: `Bearer ${SECRET}`, 'x-client-secret': SECRET },
    });
    // A key the sandbox does not know is masked too.
    await raw(sandbox, 'GET', '/payment/sessions', { key: 'sk_live_SENTINELunknown99887766' });
    const page = await control(sandbox, 'GET', 'test/requests', KEY);
    const text = JSON.stringify(page.body);
    expect(page.body.data.total).toBe(3);
    for (const secret of [KEY, SECRET, 'sk_live_SENTINELunknown99887766']) expect(text).not.toContain(secret);
    const [unknown, listing, created] = page.body.data.items as RequestLogEntry[];
    expect(listing?.requestHeaders['x-api-key']).toBe(maskSecret(KEY));
    expect(maskSecret(KEY)).toBe('sk_test_…2342');
    expect(listing?.requestHeaders.authorization).toBe('…1321');
    expect(listing?.query.token).toBe(maskSecret(KEY));
    expect(created?.requestBody).toContain(`key ${maskSecret(KEY)} secret ${maskSecret(SECRET)}`);
    expect(unknown?.requestHeaders['x-api-key']).toBe('sk_live_…7766');
    await sandbox.close();
    for (const file of filesUnder(dataDir)) {
      const bytes = readFileSync(file).toString('latin1');
      for (const secret of [KEY, SECRET]) expect(bytes.includes(secret), `${secret} in ${file}`).toBe(false);
    }
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('bounded, kept, or off', () => {
  it('keeps the last N entries of each tenant over HTTP, numbered on', async () => {
    const { sandbox } = await sandboxes.start({ requestLogSize: 30 });
    for (let index = 0; index < 100; index++) await raw(sandbox, 'GET', '/payment/sessions', { query: { take: String((index % 90) + 1) } });
    const page = await sandbox.requests.list({ take: 100 });
    expect(page.total).toBe(30);
    expect(page.items.map((entry) => Number(entry.id.split('-').pop()))).toEqual(Array.from({ length: 30 }, (_, index) => 100 - index));
  });

  it('holds its bound under 100 000 requests, trimming the rows past it as it goes', () => {
    const store = new SandboxStore();
    const log = new RequestLog(store, { webcode: 'BULK', size: 10_000 });
    const entry = {
      at: new Date(0).toISOString(),
      environment: 'test' as const,
      tenant: 'BULK',
      method: 'GET',
      route: 'GET /payment/sessions',
      operation: 'listSessions',
      path: '/external/v1/test/payment/sessions',
      query: {},
      requestHeaders: {},
      requestBody: null,
      requestBodyTruncated: false,
      idempotencyKey: null,
      replayed: false,
      status: 200,
      responseBody: '{"success":true}',
      responseBodyTruncated: false,
      traceId: null,
      durationMs: 1,
      faultRule: null,
      references: { sessionIds: [], paymentReferences: [], posPaymentIds: [], modificationReferences: [] },
      issues: [],
    };
    const rows = () => store.statement('SELECT count(*) AS n FROM request_log').get()?.n as number;
    let most = 0;
    for (let index = 0; index < 100_000; index++) {
      log.add(entry, index);
      if (index % 997 === 0) most = Math.max(most, rows());
    }
    expect(log.count('test')).toBe(10_000);
    expect(rows()).toBeLessThanOrEqual(10_000 + TRIM_EVERY);
    expect(most).toBeLessThanOrEqual(10_000 + TRIM_EVERY);
    expect(log.list('test', { take: 1 }).items[0]?.id).toBe('BULK-REQ-100000');
    expect(log.get('BULK-REQ-90000')).toBeUndefined();
    expect(log.get('BULK-REQ-90001')?.id).toBe('BULK-REQ-90001');
    store.close();
  });

  it('makes an entry after the turn of its answer, or at once when 4 wait (a caller that never leaves the turn)', async () => {
    const store = new SandboxStore();
    const log = new RequestLog(store, { webcode: 'TURN', size: 100 });
    const made: number[] = [];
    const later = (index: number) =>
      log.later(() => {
        made.push(index);
        return undefined;
      }, index);
    later(0);
    expect(made).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(made).toEqual([0]);
    for (let index = 1; index <= 42; index++) later(index);
    // Written four at a time: 1 to 40; 41 and 42 wait for the turn to end (or a read).
    expect(made).toHaveLength(41);
    log.flush();
    expect(made).toHaveLength(43);
    store.close();
  });

  it('keeps its entries across a restart with a data folder, and never gives a number twice', async () => {
    const dataDir = tempDir();
    const first = createSandbox({ dataDir });
    await first.listen();
    await raw(first, 'GET', '/payment/sessions');
    const before = await newest(first);
    await first.requests.clear();
    await raw(first, 'GET', '/payment/sessions');
    const kept = await newest(first);
    await first.close();
    const second = sandboxes.adopt(createSandbox({ dataDir }));
    await second.listen();
    expect(await second.requests.get(kept.id)).toEqual(kept);
    await raw(second, 'GET', '/payment/sessions');
    const numbers = [before, kept, await newest(second)].map((entry) => Number(entry.id.split('-').pop()));
    expect(numbers).toEqual([1, 2, 3]);
  });

  it('writes a waiting entry to the data folder within 200 ms, with no read to move it there', async () => {
    const dataDir = tempDir();
    const sandbox = sandboxes.adopt(createSandbox({ dataDir }));
    await sandbox.listen();
    const rows = () => {
      // Another connection to the file, as after a crash: it sees only what was committed there.
      const db = new DatabaseSync(join(dataDir, 'sandbox.db'), { readOnly: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM request_log').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    await raw(sandbox, 'GET', '/payment/sessions');
    expect(rows()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(rows()).toBe(1);
  });

  it('reads the entries an earlier data folder kept, with their bodies inside the entry (before migration 8)', async () => {
    const dataDir = tempDir();
    const first = createSandbox({ dataDir });
    await first.listen();
    const created = await raw(first, 'POST', '/payment/session', { body: { ...sessionParams }, idempotencyKey: 'old-row' });
    expect(created.status).toBe(201);
    const entry = await newest(first);
    await first.close();
    // The row as version 7 wrote it: no body columns, the bodies in the entry's JSON.
    const db = new DatabaseSync(join(dataDir, 'sandbox.db'));
    const number = Number(entry.id.split('-').pop());
    const { id: _id, ...stored } = entry;
    db.prepare('UPDATE request_log SET record = ? WHERE seq = ?').run(JSON.stringify(stored), number);
    db.exec(
      'ALTER TABLE request_log DROP COLUMN request_headers; ALTER TABLE request_log DROP COLUMN request_body; ALTER TABLE request_log DROP COLUMN response_body; PRAGMA user_version = 7',
    );
    db.close();

    const second = sandboxes.adopt(createSandbox({ dataDir }));
    await second.listen();
    const read = await second.requests.get(entry.id);
    expect(read).toEqual(entry);
    expect(read?.requestBody).toContain('"webcode"');
    expect(read?.responseBody).toContain('"sessionId"');
    // New rows have the columns; both read back alike.
    await raw(second, 'POST', '/payment/session', { body: { ...sessionParams }, idempotencyKey: 'new-row' });
    const fresh = await newest(second);
    expect(Object.keys(fresh)).toEqual(Object.keys(entry));
    expect(JSON.parse(fresh.requestBody ?? '')).toEqual(JSON.parse(entry.requestBody ?? ''));
  });

  it('records nothing with a size of 0, and refuses a size that is not a whole number', async () => {
    const { sandbox } = await sandboxes.start({ requestLogSize: 0 });
    await raw(sandbox, 'GET', '/payment/sessions');
    expect(await sandbox.requests.count()).toBe(0);
    expect(() => createSandbox({ requestLogSize: -1 })).toThrow('requestLogSize must be a whole number');
  });

  it('starts empty again on reset', async () => {
    const { sandbox } = await sandboxes.start();
    await raw(sandbox, 'GET', '/payment/sessions');
    await sandbox.reset();
    expect(await sandbox.requests.count()).toBe(0);
  });
});

describe('headers as received, entries once answered', () => {
  it('keeps headers as Node received them over HTTP and as a Request holds them in process: names in lower case, a repeated one joined', async () => {
    const { sandbox } = await sandboxes.start();
    const { port } = new URL(sandbox.baseUrl);
    const path = `/external/v1/test/payment/sessions?webcode=${sandbox.webcode}`;
    const status = await new Promise<number>((resolve, reject) => {
      const sent = httpRequest(
        { host: '127.0.0.1', port, path, headers: { 'X-API-KEY': sandbox.keys.test, 'X-Trail': ['one', 'two'] } },
        (answer) => {
          answer.resume();
          resolve(answer.statusCode ?? 0);
        },
      );
      sent.on('error', reject).end();
    });
    expect(status).toBe(200);
    const overHttp = await newest(sandbox);
    expect(overHttp.requestHeaders).toMatchObject({ 'x-trail': 'one, two', 'x-api-key': maskSecret(sandbox.keys.test) });
    expect(overHttp.requestHeaders.host).toBe(`127.0.0.1:${port}`);

    const headers = new Headers({ 'X-API-KEY': sandbox.keys.test });
    headers.append('X-Trail', 'one');
    headers.append('X-Trail', 'two');
    expect((await sandbox.handle(new Request(`${sandbox.baseUrl}${path}`, { headers }))).status).toBe(200);
    const inProcess = await newest(sandbox);
    expect(inProcess.id).not.toBe(overHttp.id);
    expect(inProcess.requestHeaders).toEqual({ 'x-trail': 'one, two', 'x-api-key': maskSecret(sandbox.keys.test) });
  });

  it('in process, the entry of an answer is read at once, deleted by a reset that follows, and kept by a close that follows', async () => {
    const dataDir = tempDir();
    const sandbox = sandboxes.adopt(createSandbox({ dataDir }));
    await sandbox.listen();
    const list = () =>
      sandbox.handle(
        new Request(`${sandbox.baseUrl}/external/v1/test/payment/sessions?webcode=${sandbox.webcode}`, {
          headers: { 'x-api-key': sandbox.keys.test },
        }),
      );
    expect((await list()).status).toBe(200);
    expect(await sandbox.requests.count({ operation: 'listSessions' })).toBe(1);
    expect((await list()).status).toBe(200);
    await sandbox.reset();
    expect(await sandbox.requests.count()).toBe(0);
    expect((await list()).status).toBe(200);
    await sandbox.close();
    const reopened = sandboxes.adopt(createSandbox({ dataDir }));
    expect(await reopened.requests.count({ operation: 'listSessions' })).toBe(1);
  });
});

describe('bodies that name no record', () => {
  it('records a body whose fields are named like the prototype of an object', async () => {
    const errors: unknown[] = [];
    const sandbox = sandboxes.adopt(createSandbox({ onError: (error) => errors.push(error) }));
    await sandbox.listen();
    await raw(sandbox, 'POST', '/payment/refund', {
      rawBody: `{"webcode":"SANDBOX","constructor":"x","__proto__":{"a":1},"toString":"y"}`,
    });
    expect(await newest(sandbox)).toMatchObject({ status: 400, operation: 'refund' });
    expect(errors).toEqual([]);
  });
});
