/**
 * The sandbox's control API (`/_sandbox/...`) over real HTTP on 127.0.0.1, and the same operations
 * as typed methods of the `Sandbox` object: reads with paging and timelines, paying and expiring
 * sessions, resolving POS payments, resending deliveries, emitting events, moving the clock (expiry,
 * POS resolution and webhook retry schedules fire as if the time had passed) and reset.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PosPaymentPendingError, TerminalBusyError } from '../../src/index.js';
import { manualClock, parseDuration, SANDBOX_CODES, type Sandbox } from '../../src/sandbox/index.js';
import { openPage, paidSession, sessionParams, submitForm, useSandboxes } from './support.js';

const { start, receiver } = useSandboxes();
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const EUR = (value: number) => ({ value, currency: 'EUR' as const });

interface ControlAnswer {
  status: number;
  body: any;
}

/** A control API call with the Test key unless `key` is given (`null`: no key). */
async function control(
  sandbox: Sandbox,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  options: { body?: unknown; key?: string | null } = {},
): Promise<ControlAnswer> {
  const headers: Record<string, string> = {};
  const key = options.key === undefined ? sandbox.keys.test : options.key;
  if (key !== null) headers['x-api-key'] = key;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${sandbox.baseUrl}/_sandbox/${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  return { status: response.status, body: await response.json() };
}

function expectFailure(answer: ControlAnswer, status: number, code: number): void {
  expect(answer.status).toBe(status);
  expect(answer.body).toMatchObject({ success: false, error: { code, statusCode: status, message: expect.any(String) } });
}

describe('control API: keys, routes and reads', () => {
  it('follows the key rules of the service: no key or the other environment 403 / 11008, unknown 404, wrong method 405', async () => {
    const { sandbox } = await start();
    expectFailure(await control(sandbox, 'GET', 'test/sessions', { key: null }), 403, 11008);
    expectFailure(await control(sandbox, 'GET', 'test/sessions', { key: sandbox.keys.live }), 403, 11008);
    expectFailure(await control(sandbox, 'GET', 'clock', { key: 'nope' }), 403, 11008);
    expectFailure(await control(sandbox, 'GET', 'test/nothing'), 404, SANDBOX_CODES.notFound);
    expectFailure(await control(sandbox, 'DELETE', 'test/sessions'), 405, SANDBOX_CODES.methodNotAllowed);
    expectFailure(await control(sandbox, 'GET', 'test/sessions/NOPE'), 404, SANDBOX_CODES.notFound);
    expect((await control(sandbox, 'GET', 'live/sessions', { key: sandbox.keys.live })).status).toBe(200);
    expect((await control(sandbox, 'GET', 'clock', { key: sandbox.keys.live })).status).toBe(200);
  });

  it('lists sessions with filters and keyset paging, one environment at a time', async () => {
    const { sandbox, test, live } = await start();
    for (let index = 0; index < 5; index++) await test.sessions.create({ ...sessionParams, customReference: `c-${index}` });
    await paidSession(test);
    await live.sessions.create({ ...sessionParams });
    const first = await control(sandbox, 'GET', 'test/sessions?take=2&order=desc');
    expect(first.body.data).toMatchObject({ total: 6, hasMore: true, cursor: expect.any(String) });
    expect(first.body.data.items).toHaveLength(2);
    expect(first.body.data.items[0].paymentUrl).toMatch(new RegExp(`^${sandbox.baseUrl}/pay-external-test/`));
    const seen = [...first.body.data.items];
    for (let cursor = first.body.data.cursor; cursor; ) {
      const page = await control(sandbox, 'GET', `test/sessions?take=2&order=desc&cursor=${cursor}`);
      seen.push(...page.body.data.items);
      cursor = page.body.data.cursor;
    }
    expect(seen.map((session) => session.customReference).slice(-5)).toEqual(['c-4', 'c-3', 'c-2', 'c-1', 'c-0']);
    expect(new Set(seen.map((session) => session.environment))).toEqual(new Set(['test']));
    const completed = await control(sandbox, 'GET', 'test/sessions?status=completed');
    expect(completed.body.data.items.map((session: { status: string }) => session.status)).toEqual(['completed']);
    expectFailure(await control(sandbox, 'GET', 'test/sessions?take=0'), 400, 12001);
  });

  it('reads a record with its timeline: modifications and the deliveries with every attempt', async () => {
    const hook = await receiver({ failFirst: 1 });
    const { sandbox, test } = await start({ webhookUrls: [hook.url], webhookRetry: { initialDelayMs: 20 }, modificationResolveMs: 0 });
    const paid = await paidSession(test);
    await test.modifications.refund({ paymentReference: paid.paymentReference, amount: EUR(100) });
    await hook.waitFor(2);
    await sandbox.webhooksSettled();
    const { body } = await control(sandbox, 'GET', `test/sessions/${paid.sessionId}`);
    expect(body.data.record).toMatchObject({ sessionId: paid.sessionId, status: 'completed', paymentReference: paid.paymentReference });
    expect(body.data.modifications).toEqual([expect.objectContaining({ operationType: 'refund', status: 'success' })]);
    const authorisation = body.data.deliveries.find((delivery: any) => delivery.event.event_code === 'AUTHORISATION');
    expect(authorisation.attempts).toEqual([
      { at: expect.any(Number), status: 500, error: null, durationMs: expect.any(Number), responseBody: 'failing on purpose' },
      { at: expect.any(Number), status: 200, error: null, durationMs: expect.any(Number), responseBody: 'ok' },
    ]);
    const delivery = await control(sandbox, 'GET', `test/deliveries/${authorisation.id}`);
    expect(delivery.body.data).toEqual(authorisation);
    const deliveries = await control(sandbox, 'GET', 'test/deliveries?status=delivered');
    expect(deliveries.body.data.total).toBe(2);
    const refund = body.data.modifications[0];
    const modification = await control(sandbox, 'GET', `test/modifications/${refund.operationReference}`);
    expect(modification.body.data.deliveries.map((item: any) => item.event.event_code)).toEqual(['REFUND']);
    expectFailure(await control(sandbox, 'GET', 'test/deliveries/abc'), 404, SANDBOX_CODES.notFound);
  });
});

describe('control API: actions', () => {
  it('pays a pending session as a holder name, with the outcomes of the page, and refuses a session that is not pending', async () => {
    const hook = await receiver();
    const { sandbox, test } = await start({ webhookUrls: [hook.url] });
    const session = await test.sessions.create({ ...sessionParams });
    const paid = await control(sandbox, 'POST', `test/sessions/${session.sessionId}/pay`);
    expect(paid.body.data).toMatchObject({ status: 'completed', paymentReference: expect.stringMatching(/-PXTT-/) });
    // Resolved after the webhook's first attempt.
    expect(hook.accepted().map((item) => item.json.data.paymentReference)).toEqual([paid.body.data.paymentReference]);
    expect((await test.sessions.retrieve(session.sessionId)).status).toBe('completed');

    const declined = await test.sessions.create({ ...sessionParams });
    const answer = await control(sandbox, 'POST', `test/sessions/${declined.sessionId}/pay`, { body: { holderName: 'card_expired' } });
    expect(answer.body.data).toMatchObject({ status: 'failed', attempts: [{ status: 'refused', reason: 'declined, expired card' }] });
    const error = await test.sessions.create({ ...sessionParams });
    const failed = await sandbox.paySession('test', error.sessionId, { holderName: 'ERROR' });
    expect(failed.attempts[0]).toMatchObject({ status: 'error' });

    expectFailure(await control(sandbox, 'POST', `test/sessions/${session.sessionId}/pay`), 409, SANDBOX_CODES.actionNotAllowed);
    expectFailure(await control(sandbox, 'POST', `test/sessions/${session.sessionId}/pay`, { body: { holderName: 'x' } }), 400, 12001);
    expect(hook.received).toHaveLength(1);
  });

  it('expires a pending session now: the API and the page show it expired', async () => {
    const { sandbox, test } = await start();
    const session = await test.sessions.create({ ...sessionParams });
    const expired = await control(sandbox, 'POST', `test/sessions/${session.sessionId}/expire`);
    expect(expired.body.data.status).toBe('expired');
    expect((await test.sessions.retrieve(session.sessionId)).status).toBe('expired');
    const page = await openPage(session.paymentUrl);
    expect(page.html).not.toContain('name="cardNumber"');
    expectFailure(await control(sandbox, 'POST', `test/sessions/${session.sessionId}/expire`), 409, SANDBOX_CODES.actionNotAllowed);
  });

  it('resolves a pending POS payment now: the waiting request gets that answer, once', async () => {
    const { sandbox, test } = await start({ posDelayMs: 60_000 });
    const charge = test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1077) }, { recover: false });
    let pending: string | undefined;
    for (let index = 0; index < 3_000 && !pending; index++) {
      await new Promise((done) => setTimeout(done, 10));
      pending = sandbox.records.posPayments({ status: 'pending' })[0]?.posPaymentId;
    }
    // 1077 would fail at the terminal; resolved as a success instead.
    const resolved = await control(sandbox, 'POST', `test/pos-payments/${pending}/resolve`, { body: { outcome: 'success' } });
    expect(resolved.body.data).toMatchObject({ status: 'success', pspReference: expect.stringMatching(/^TEST\d{16}$/) });
    expect(await charge).toMatchObject({ posPaymentId: pending, status: 'success' });
    expect(sandbox.records.posPayments()).toHaveLength(1);
    expectFailure(await control(sandbox, 'POST', `test/pos-payments/${pending}/resolve`, { body: { outcome: 'failed' } }), 409, 19411);
    expectFailure(await control(sandbox, 'POST', `test/pos-payments/${pending}/resolve`, { body: { outcome: 'maybe' } }), 400, 12001);
  });

  it('resolves a POS timeout now as failed: the record and its AUTHORISATION (REFUSED) webhook; busy stays busy', async () => {
    const hook = await receiver();
    const { sandbox, test } = await start({ webhookUrls: [hook.url], posTimeoutResolveMs: 600_000 });
    const timedOut = await test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1099) }, { recover: false });
    expect(timedOut.status).toBe('timeout');
    const failed = await sandbox.resolvePosPayment('test', timedOut.posPaymentId, 'failed');
    expect(failed).toMatchObject({ status: 'failed' });
    expect(hook.accepted().map((item) => item.json.data)).toEqual([
      expect.objectContaining({ paymentReference: timedOut.posPaymentId, paymentStatus: 'REFUSED' }),
    ]);
    const read = await test.pos.list({ status: 'failed' }).toArray();
    expect(read.map((payment) => payment.posPaymentId)).toEqual([timedOut.posPaymentId]);
    await expect(test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1055) }, { recover: false })).rejects.toBeInstanceOf(
      TerminalBusyError,
    );
    expect(PosPaymentPendingError).toBeDefined();
  });

  it('resends a delivery as a new one to the same URL, recorded with the endpoint answer', async () => {
    const hook = await receiver({ failFirst: 2 });
    const { sandbox, test } = await start({ webhookUrls: [hook.url], webhookRetry: { attempts: 2, initialDelayMs: 10 } });
    await paidSession(test);
    for (let index = 0; index < 3_000 && sandbox.records.deliveries({ status: 'abandoned' }).length === 0; index++)
      await new Promise((done) => setTimeout(done, 10));
    const [abandoned] = sandbox.records.deliveries({ status: 'abandoned' });
    expect(abandoned?.attempts.map((attempt) => attempt.status)).toEqual([500, 500]);
    const resent = await control(sandbox, 'POST', `test/deliveries/${abandoned?.id}/resend`);
    expect(resent.body.data).toMatchObject({
      resendOf: abandoned?.id,
      url: hook.url,
      delivered: true,
      event: abandoned?.event,
      attempts: [{ status: 200, responseBody: 'ok' }],
    });
    expect(hook.accepted()).toHaveLength(1);
    expect(sandbox.records.deliveries()).toHaveLength(2);
  });

  it('emits a documented event for a record: AUTHORISATION of a session or POS payment, REFUND of a refund', async () => {
    const hook = await receiver();
    const { sandbox, test } = await start({ webhookUrls: [hook.url], modificationResolveMs: 0 });
    const paid = await paidSession(test);
    const refund = await test.modifications.refund({ paymentReference: paid.paymentReference, amount: EUR(50) });
    await sandbox.webhooksSettled();
    const before = hook.received.length;
    const bySession = await control(sandbox, 'POST', 'test/events', { body: { eventCode: 'AUTHORISATION', reference: paid.sessionId } });
    expect(bySession.body.data).toEqual([
      expect.objectContaining({ delivered: true, event: expect.objectContaining({ event_code: 'AUTHORISATION' }) }),
    ]);
    const refunded = await sandbox.emitEvent('test', 'REFUND', refund.refundReference);
    expect(refunded[0]?.event.data).toMatchObject({ refundReference: refund.refundReference, amount: 50 });
    expect(hook.received.slice(before).map((item) => item.json.event_code)).toEqual(['AUTHORISATION', 'REFUND']);

    const pending = await test.sessions.create({ ...sessionParams });
    expectFailure(
      await control(sandbox, 'POST', 'test/events', { body: { eventCode: 'AUTHORISATION', reference: pending.sessionId } }),
      409,
      SANDBOX_CODES.actionNotAllowed,
    );
    expectFailure(
      await control(sandbox, 'POST', 'test/events', { body: { eventCode: 'CHARGEBACK', reference: paid.sessionId } }),
      400,
      12001,
    );
    expectFailure(await control(sandbox, 'POST', 'test/events', { body: { eventCode: 'REFUND', reference: 'nope' } }), 404, 19404);
  });

  it('adds and removes webhook URLs; a POST body that is not JSON is 415', async () => {
    const hook = await receiver();
    const { sandbox, test } = await start();
    expect((await control(sandbox, 'POST', 'webhook-urls', { body: { url: hook.url } })).body.data).toEqual({ urls: [hook.url] });
    expect((await control(sandbox, 'POST', 'webhook-urls', { body: { url: hook.url } })).body.data).toEqual({ urls: [hook.url] });
    await paidSession(test);
    await hook.waitFor(1);
    const removed = await control(sandbox, 'DELETE', `webhook-urls?url=${encodeURIComponent(hook.url)}`);
    expect(removed.body.data).toEqual({ urls: [] });
    expectFailure(await control(sandbox, 'POST', 'webhook-urls', { body: { url: 'ftp://x' } }), 400, 12001);
    const response = await fetch(`${sandbox.baseUrl}/_sandbox/reset`, {
      method: 'POST',
      headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'text/plain' },
      body: 'reset please',
    });
    expect(response.status).toBe(415);
  });
});

describe('control API: the clock', () => {
  it('parses durations: ms, units, ISO 8601; refuses the rest', () => {
    expect(parseDuration(1500)).toBe(1500);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('PT5M')).toBe(300_000);
    expect(parseDuration('P1DT2H')).toBe(93_600_000);
    expect(parseDuration('PT0.5S')).toBe(500);
    for (const bad of ['', 'P', 'PT', '5 minutes', '-5m', -1, 1.5, '5x', null]) expect(parseDuration(bad)).toBeUndefined();
  });

  it('advancing past 300 s expires an opened payment page; the clock and the records move together', async () => {
    const { sandbox, test } = await start();
    const before = (await control(sandbox, 'GET', 'clock')).body.data;
    expect(before).toMatchObject({ offsetMs: 0, iso: expect.stringMatching(/Z$/) });
    const session = await test.sessions.create({ ...sessionParams });
    await openPage(session.paymentUrl);
    const halfway = await control(sandbox, 'POST', 'clock/advance', { body: { duration: '4m' } });
    expect(halfway.body.data.offsetMs).toBe(240_000);
    expect((await test.sessions.retrieve(session.sessionId)).status).toBe('pending');
    const after = await control(sandbox, 'POST', 'clock/advance', { body: { ms: 61_000 } });
    expect(after.body.data.epochMs - before.epochMs).toBeGreaterThanOrEqual(301_000);
    expect((await test.sessions.retrieve(session.sessionId)).status).toBe('expired');
    // New records carry the moved time.
    const later = await test.sessions.create({ ...sessionParams });
    expect(sandbox.records.session(later.sessionId)?.createdAt).toBeGreaterThanOrEqual(before.epochMs + 301_000);
    expectFailure(await control(sandbox, 'POST', 'clock/advance', { body: { duration: 'soon' } }), 400, 12001);
    expectFailure(await control(sandbox, 'POST', 'clock/advance', { body: { ms: -5 } }), 400, 12001);
  });

  it('advancing fires POS late completion and modification resolution at their times', async () => {
    const hook = await receiver();
    const { sandbox, test } = await start({ webhookUrls: [hook.url], posTimeoutResolveMs: 10_000, modificationResolveMs: 30_000 });
    const timedOut = await test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: EUR(1099) }, { recover: false });
    await sandbox.advanceClock(9_000);
    expect(sandbox.records.posPayment(timedOut.posPaymentId)?.status).toBe('timeout');
    await sandbox.advanceClock(1_000);
    expect(sandbox.records.posPayment(timedOut.posPaymentId)?.status).toBe('success');
    expect(hook.accepted().map((item) => item.json.data.paymentReference)).toEqual([timedOut.posPaymentId]);
    const refund = await test.modifications.refund({ paymentReference: timedOut.posPaymentId, amount: EUR(99) });
    expect(sandbox.records.modifications()[0]?.status).toBe('pending');
    await sandbox.advanceClock(30_000);
    expect(sandbox.records.modifications()[0]).toMatchObject({ operationReference: refund.refundReference, status: 'success' });
    expect(hook.accepted().map((item) => item.json.event_code)).toEqual(['AUTHORISATION', 'REFUND']);
  });

  it('advancing runs every webhook retry in the window, each at its own sandbox time (1 s, 2 s, 4 s apart)', async () => {
    const hook = await receiver({ failFirst: 100 });
    const { sandbox, test } = await start({ webhookUrls: [hook.url], webhookRetry: { attempts: 4, initialDelayMs: 1_000 } });
    await paidSession(test);
    await sandbox.webhooksSettled();
    const [delivery] = sandbox.records.deliveries();
    expect(delivery?.attempts).toHaveLength(1);
    await control(sandbox, 'POST', 'clock/advance', { body: { duration: 'PT10S' } });
    const [after] = sandbox.records.deliveries();
    const times = after?.attempts.map((attempt) => attempt.at) ?? [];
    expect(times).toHaveLength(4);
    const gaps = times.slice(1).map((time, index) => time - (times[index] ?? 0));
    // Each retry at its due time on the sandbox clock (plus the real milliseconds an attempt takes).
    for (const [index, gap] of gaps.entries()) {
      expect(gap).toBeGreaterThanOrEqual(1_000 * 2 ** index);
      expect(gap).toBeLessThan(1_000 * 2 ** index + 500);
    }
    expect(after).toMatchObject({ abandoned: true, delivered: false });
    expect(hook.received).toHaveLength(4);
  });

  it('keeps the clock offset across a restart with a data folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-control-'));
    dirs.push(dir);
    const first = await start({ dataDir: dir });
    await first.sandbox.advanceClock(3_600_000);
    await first.sandbox.close();
    const second = await start({ dataDir: dir });
    expect(second.sandbox.control.clock().offsetMs).toBe(3_600_000);
  });
});

describe('control API: when a session ended', () => {
  const OPENED = Date.UTC(2026, 0, 1, 12, 8, 1);

  it('an opened page left 20 minutes ends at its deadline, 300 s after it opened, not when the clock stopped', async () => {
    const { sandbox, test } = await start({ clock: manualClock(OPENED) });
    const session = await test.sessions.create({ ...sessionParams });
    await openPage(session.paymentUrl);
    await control(sandbox, 'POST', 'clock/advance', { body: { duration: '20m' } });
    const { body } = await control(sandbox, 'GET', `test/sessions/${session.sessionId}`);
    expect(body.data.record).toMatchObject({ status: 'expired', openedAt: OPENED, endedAt: Date.UTC(2026, 0, 1, 12, 13, 1) });
    const listed = await control(sandbox, 'GET', 'test/sessions');
    expect(listed.body.data.items[0]).toMatchObject({ sessionId: session.sessionId, endedAt: Date.UTC(2026, 0, 1, 12, 13, 1) });
  });

  it('records the moment a session was cancelled, failed, paid or expired now; a pending one has none', async () => {
    const { sandbox, test } = await start({ clock: manualClock(OPENED) });
    const [toCancel, toDecline, toPay, toExpire, pending] = await Promise.all(
      [1, 2, 3, 4, 5].map((index) => test.sessions.create({ ...sessionParams, customReference: `end-${index}` })),
    );
    const ended = async (sessionId: string) => (await control(sandbox, 'GET', `test/sessions/${sessionId}`)).body.data.record;
    await sandbox.advanceClock(7_000);
    await submitForm(toCancel?.paymentUrl ?? '', { action: 'cancel' });
    expect(await ended(toCancel?.sessionId ?? '')).toMatchObject({ status: 'cancelled', endedAt: OPENED + 7_000 });
    await sandbox.advanceClock(5_000);
    await submitForm(toDecline?.paymentUrl ?? '', { holderName: 'DECLINED' });
    expect(await ended(toDecline?.sessionId ?? '')).toMatchObject({
      status: 'failed',
      endedAt: OPENED + 12_000,
      attempts: [{ status: 'refused', createdAt: OPENED + 12_000 }],
    });
    await sandbox.advanceClock(5_000);
    await submitForm(toPay?.paymentUrl ?? '');
    expect(await ended(toPay?.sessionId ?? '')).toMatchObject({
      status: 'completed',
      completedAt: OPENED + 17_000,
      endedAt: OPENED + 17_000,
    });
    await sandbox.advanceClock(5_000);
    await control(sandbox, 'POST', `test/sessions/${toExpire?.sessionId}/expire`);
    expect(await ended(toExpire?.sessionId ?? '')).toMatchObject({ status: 'expired', endedAt: OPENED + 22_000 });
    expect(await ended(pending?.sessionId ?? '')).toMatchObject({ status: 'pending', endedAt: null });
  });

  it('a session paid through the control API records the holder name it paid as, and opens no payment page', async () => {
    const { sandbox, test } = await start({ clock: manualClock(OPENED) });
    const session = await test.sessions.create({ ...sessionParams });
    const paid = await control(sandbox, 'POST', `test/sessions/${session.sessionId}/pay`, { body: { holderName: ' DECLINED ' } });
    expect(paid.body.data).toMatchObject({
      status: 'failed',
      openedAt: null,
      endedAt: OPENED,
      controlPayment: { from: 'control', holderName: 'DECLINED' },
    });
    const onPage = await test.sessions.create({ ...sessionParams });
    await submitForm(onPage.paymentUrl);
    expect(sandbox.records.session(onPage.sessionId)).toMatchObject({ status: 'completed', openedAt: OPENED, controlPayment: null });
  });
});

describe('control API: reset', () => {
  it('deletes every record and sets the clock back; ids are never given out again; keys and URLs stay', async () => {
    const hook = await receiver();
    const { sandbox, test } = await start({ webhookUrls: [hook.url] });
    const paid = await paidSession(test);
    await sandbox.advanceClock(60_000);
    const reset = await control(sandbox, 'POST', 'reset');
    expect(reset.body.data.offsetMs).toBe(0);
    expect(sandbox.records.counts()).toEqual({ sessions: 0, posPayments: 0, modifications: 0, deliveries: 0, idempotency: 0 });
    const again = await paidSession(test);
    expect(again.paymentReference).not.toBe(paid.paymentReference);
    expect(again.sessionId).not.toBe(paid.sessionId);
    expect(sandbox.webhookUrls).toEqual([hook.url]);
  });
});
