/**
 * A terminal that takes long, over real HTTP on 127.0.0.1: `PUT /_sandbox/{environment}/terminals/{poiId}`
 * gives a simulated terminal its own processing time, and its POS payments are then in flight that
 * long exactly as the sandbox holds any: listed `pending`, a resend with the same key waiting and
 * replaying the one answer, a new key refused 409 / 13005; once answered, resends and listings come
 * back at once. The sandbox clock governs it; the setting is per tenant and environment, survives a
 * restart with a data folder and a reset; refusals name the field or the terminal; the typed methods
 * and the dashboard's form do the same. Waits are bounds, not measurements (a loaded 2-core machine).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { useSandboxes } from './support.js';

const { start } = useSandboxes();
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const TERMINAL = 'V400m-TEST-000001';
const OTHER = 'S1F2-TEST-000002';
/** Long enough to act while it runs on a loaded machine, short enough for a quick test. */
const PROCESSING_MS = 1_500;

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function control(sandbox: Sandbox, method: string, path: string, body?: unknown, key = sandbox.keys.test): Promise<Answer> {
  const response = await fetch(`${sandbox.baseUrl}/_sandbox/${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** A Test POS payment sent as the SDK would, with `key` as its `Idempotency-Key`; `signal` may cut it short. */
async function pay(sandbox: Sandbox, key: string, options: { signal?: AbortSignal; poiId?: string } = {}): Promise<Answer> {
  const response = await fetch(`${sandbox.baseUrl}/external/v1/test/pos/payment`, {
    method: 'POST',
    headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ webcode: sandbox.webcode, poiId: options.poiId ?? TERMINAL, amount: { value: 1500, currency: 'EUR' } }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

async function listed(sandbox: Sandbox, status?: string): Promise<any[]> {
  const query = new URLSearchParams({ webcode: sandbox.webcode, ...(status ? { status } : {}) });
  const response = await fetch(`${sandbox.baseUrl}/external/v1/test/pos/payments?${query}`, {
    headers: { 'x-api-key': sandbox.keys.test },
  });
  return (await response.json()).data.posPayments;
}

/** `work`'s result and how long it took, in ms. */
async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const began = performance.now();
  const result = await work();
  return [result, performance.now() - began];
}

/** Polls until `check` holds, up to 10 s (a bound). */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('not reached within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a terminal with its own processing time', () => {
  it('holds its payment in flight that long: pending, a resend waits and replays, a new key is busy; then all at once', async () => {
    const { sandbox } = await start({ posDelayMs: 0 });
    const set = await control(sandbox, 'PUT', `test/terminals/${TERMINAL}`, { processingMs: PROCESSING_MS });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ poiId: TERMINAL, processingMs: PROCESSING_MS, online: true });

    const sentAt = performance.now();
    // The client gives up early, as a short check would: the payment goes on at the terminal.
    await expect(pay(sandbox, 'slow-1', { signal: AbortSignal.timeout(100) })).rejects.toThrow();
    const pending = await listed(sandbox, 'pending');
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ poiId: TERMINAL, status: 'pending' });
    const busy = await pay(sandbox, 'slow-2');
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ code: 13005 });
    // Another terminal takes the default (0 ms here) meanwhile.
    expect((await pay(sandbox, 'other-1', { poiId: OTHER })).body.data.status).toBe('success');

    const resend = await pay(sandbox, 'slow-1');
    const answeredAfter = performance.now() - sentAt;
    expect(resend.status).toBe(200);
    expect(resend.body.data).toMatchObject({ posPaymentId: pending[0].posPaymentId, status: 'success' });
    // It waited for the terminal: not answered before the processing time (timers never fire early).
    expect(answeredAfter).toBeGreaterThanOrEqual(PROCESSING_MS - 50);

    // Done: a resend and the listings answer at once, well under the processing time.
    const [replay, replayMs] = await timed(() => pay(sandbox, 'slow-1'));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.posPaymentId).toBe(pending[0].posPaymentId);
    const [all, listMs] = await timed(() => listed(sandbox));
    expect(all.find((payment) => payment.posPaymentId === pending[0].posPaymentId)?.status).toBe('success');
    expect(replayMs).toBeLessThan(PROCESSING_MS / 2);
    expect(listMs).toBeLessThan(PROCESSING_MS / 2);
    // And the terminal takes the next payment, with the same processing time.
    expect((await listed(sandbox, 'pending')).length).toBe(0);
  });

  it('is due by the sandbox clock: advancing it answers the waiting request', async () => {
    const { sandbox } = await start({ posDelayMs: 0 });
    sandbox.setTerminal('test', TERMINAL, { processingMs: 600_000 });
    const sent = pay(sandbox, 'clock-1');
    await until(async () => (await listed(sandbox, 'pending')).length === 1);
    const [answer, took] = await timed(async () => {
      await control(sandbox, 'POST', 'clock/advance', { ms: 600_000 });
      return sent;
    });
    expect(answer.body.data).toMatchObject({ poiId: TERMINAL, status: 'success' });
    expect(took).toBeLessThan(10_000);
  });

  it('goes back to the default with null; a payment already at the terminal keeps the time it was sent with', async () => {
    const { sandbox } = await start({ posDelayMs: 0 });
    await control(sandbox, 'PUT', `test/terminals/${TERMINAL}`, { processingMs: 600_000 });
    const sent = pay(sandbox, 'back-1');
    await until(async () => (await listed(sandbox, 'pending')).length === 1);
    const reset = await control(sandbox, 'PUT', `test/terminals/${TERMINAL}`, { processingMs: null });
    expect(reset.body.data).toMatchObject({ poiId: TERMINAL, processingMs: null });
    expect((await listed(sandbox, 'pending')).length).toBe(1);
    await sandbox.advanceClock(600_000);
    expect((await sent).body.data.status).toBe('success');
    const [next, took] = await timed(() => pay(sandbox, 'back-2'));
    expect(next.body.data.status).toBe('success');
    expect(took).toBeLessThan(5_000);
  });
});

describe('the setting', () => {
  it('is listed with every simulated terminal, per environment and per tenant', async () => {
    const { sandbox } = await start();
    await control(sandbox, 'PUT', `test/terminals/${OTHER}`, { processingMs: 35_000 });
    const test = await control(sandbox, 'GET', 'test/terminals');
    expect(test.status).toBe(200);
    expect(test.body.data.terminals).toEqual([
      { poiId: TERMINAL, name: 'Terminal Test 1 - Mostrador', model: 'V400m', online: true, processingMs: null },
      { poiId: OTHER, name: 'Terminal Test 2 - Terraza', model: 'S1F2', online: true, processingMs: 35_000 },
      { poiId: 'P400Plus-TEST-000003', name: 'Terminal Test 3 - Almacen', model: 'P400Plus', online: false, processingMs: null },
    ]);
    const live = await control(sandbox, 'GET', 'live/terminals', undefined, sandbox.keys.live);
    expect(live.body.data.terminals.every((terminal: any) => terminal.processingMs === null)).toBe(true);
    expect((await control(sandbox, 'GET', 'live/terminals')).status).toBe(403);
    const tenant = sandbox.createTenant({ name: 'Worker' });
    const theirs = await control(sandbox, 'GET', 'test/terminals', undefined, tenant.keys.test);
    expect(theirs.body.data.terminals.every((terminal: any) => terminal.processingMs === null)).toBe(true);
  });

  it('survives a restart with a data folder, and a reset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-terminals-'));
    dirs.push(dir);
    const first = await start({ dataDir: dir });
    first.sandbox.setTerminal('live', TERMINAL, { processingMs: 1_234 });
    await first.sandbox.close();
    const second = await start({ dataDir: dir });
    await second.sandbox.reset();
    expect(second.sandbox.terminals('live')[0]).toMatchObject({ poiId: TERMINAL, processingMs: 1_234 });
    expect(second.sandbox.terminals('test')[0]).toMatchObject({ poiId: TERMINAL, processingMs: null });
  });

  it('refuses a terminal that is not simulated (404 naming it) and a bad time (400 naming the field), over HTTP and typed alike', async () => {
    const { sandbox } = await start();
    const unknown = await control(sandbox, 'PUT', 'test/terminals/NOPE-1', { processingMs: 10 });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 19404, message: 'Terminal NOPE-1 not found' });
    expect(() => sandbox.setTerminal('test', 'NOPE-1', { processingMs: 10 })).toThrow('Terminal NOPE-1 not found');
    for (const body of [{}, { processingMs: -1 }, { processingMs: 600_001 }, { processingMs: 1.5 }, { processingMs: '100' }]) {
      const answer = await control(sandbox, 'PUT', `test/terminals/${TERMINAL}`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 12001, message: expect.stringContaining('processingMs') });
    }
    expect(() => sandbox.setTerminal('test', TERMINAL, { processingMs: -1 })).toThrow(/processingMs must be an integer from 0 to 600000/);
    expect((await control(sandbox, 'POST', `test/terminals/${TERMINAL}`, { processingMs: 1 })).status).toBe(405);
    expect(sandbox.terminals('test')[0]?.processingMs).toBeNull();
    expect((await control(sandbox, 'PUT', `test/terminals/${TERMINAL}`, { processingMs: 600_000 })).status).toBe(200);
  });
});

describe('a terminal taken offline', () => {
  it('answers its POS payments 502 / 13004, is not listed as connected, and comes back online', async () => {
    const { sandbox } = await start();
    const terminalsListed = async (sync: boolean) => {
      const query = new URLSearchParams({ webcode: sandbox.webcode, syncFromProvider: String(sync) });
      const response = await fetch(`${sandbox.baseUrl}/external/v1/test/pos/terminals?${query}`, {
        headers: { 'x-api-key': sandbox.keys.test },
      });
      return ((await response.json()).data as { poiId: string }[]).map((terminal) => terminal.poiId);
    };
    expect(await terminalsListed(true)).toEqual([TERMINAL, OTHER]);

    const offline = await control(sandbox, 'PUT', `test/terminals/${OTHER}`, { online: false });
    expect(offline.status).toBe(200);
    expect(offline.body.data).toMatchObject({ poiId: OTHER, online: false, processingMs: null });
    const refused = await pay(sandbox, 'offline-1', { poiId: OTHER });
    expect(refused.status).toBe(502);
    expect(refused.body.error).toMatchObject({ code: 13004, message: 'Error in POS payment response: Reject' });
    expect(await terminalsListed(true)).toEqual([TERMINAL]);
    expect(await terminalsListed(false)).toEqual([TERMINAL, OTHER, 'P400Plus-TEST-000003']);
    expect(sandbox.terminals('live').find((terminal) => terminal.poiId === OTHER)?.online).toBe(true);
    expect((await listed(sandbox)).length).toBe(0);

    // The processing time is kept when only the connectivity changes, and the other way round.
    sandbox.setTerminal('test', OTHER, { processingMs: 10 });
    expect(sandbox.setTerminal('test', OTHER, { online: null })).toMatchObject({ online: true, processingMs: 10 });
    expect((await pay(sandbox, 'online-again', { poiId: OTHER })).status).toBe(200);
    // The simulated offline terminal can be brought online.
    expect(sandbox.setTerminal('test', 'P400Plus-TEST-000003', { online: true }).online).toBe(true);
    expect((await pay(sandbox, 'p400-online', { poiId: 'P400Plus-TEST-000003' })).status).toBe(200);
    const bad = await control(sandbox, 'PUT', `test/terminals/${OTHER}`, { online: 'no' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('online');
  });
});

describe('the dashboard', () => {
  async function page(sandbox: Sandbox, path: string): Promise<string> {
    return (await fetch(`${sandbox.baseUrl}${path}`)).text();
  }

  async function post(sandbox: Sandbox, fields: Record<string, string>): Promise<Response> {
    const token = /name="token" value="([^"]+)"/.exec(await page(sandbox, '/'))?.[1] ?? '';
    return fetch(`${sandbox.baseUrl}/_dashboard/actions/set-terminal`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, returnTo: '/', ...fields }).toString(),
      redirect: 'manual',
    });
  }

  it('shows each terminal with its processing time and sets it with a form, back with what happened', async () => {
    const { sandbox } = await start();
    const before = await page(sandbox, '/');
    expect(before).toContain('<h2>Terminals</h2>');
    expect(before).toContain(`for="processing-test-${TERMINAL}"`);
    expect(before).toContain('default (posDelayMs)');

    const set = await post(sandbox, { environment: 'test', id: TERMINAL, processingMs: '35000' });
    expect(set.status).toBe(303);
    const location = set.headers.get('location') ?? '';
    expect(new URL(location, sandbox.baseUrl).searchParams.get('notice')).toBe(`Terminal ${TERMINAL} now takes 35000 ms per payment.`);
    expect(sandbox.terminals('test')[0]?.processingMs).toBe(35_000);
    expect(await page(sandbox, location)).toContain('35000 ms');
    expect(await page(sandbox, '/live')).not.toContain('35000 ms');

    const bad = await post(sandbox, { environment: 'test', id: TERMINAL, processingMs: 'slow' });
    expect(new URL(bad.headers.get('location') ?? '', sandbox.baseUrl).searchParams.get('problem')).toMatch(/processing time in ms/);
    const far = await post(sandbox, { environment: 'test', id: TERMINAL, processingMs: '600001' });
    expect(new URL(far.headers.get('location') ?? '', sandbox.baseUrl).searchParams.get('problem')).toMatch(/processingMs must be/);
    const back = await post(sandbox, { environment: 'test', id: TERMINAL, processingMs: '' });
    expect(new URL(back.headers.get('location') ?? '', sandbox.baseUrl).searchParams.get('notice')).toMatch(/default time again/);
    expect(sandbox.terminals('test')[0]?.processingMs).toBeNull();

    const token = /name="token" value="([^"]+)"/.exec(await page(sandbox, '/'))?.[1] ?? '';
    expect(await page(sandbox, '/')).toContain('Take offline');
    const toggled = await fetch(`${sandbox.baseUrl}/_dashboard/actions/set-terminal-online`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, returnTo: '/', environment: 'test', id: TERMINAL, online: 'false' }).toString(),
      redirect: 'manual',
    });
    expect(new URL(toggled.headers.get('location') ?? '', sandbox.baseUrl).searchParams.get('notice')).toBe(
      `Terminal ${TERMINAL} is now offline.`,
    );
    expect(sandbox.terminals('test')[0]?.online).toBe(false);
    expect(await page(sandbox, '/')).toContain('Bring online');
  });
});
