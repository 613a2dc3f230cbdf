/**
 * The dashboard over real HTTP on 127.0.0.1, without a browser: every page answers HTML with the
 * security headers and links only to the sandbox itself; the forms work without JavaScript (303
 * back with a message) and refuse a post without the page's token; Test and Live stay apart; the
 * live stream sends `change` after a change. Chromium, axe and the keyboard: dashboard.browser.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { manualClock, type Sandbox } from '../../src/sandbox/index.js';
import { expectSecurityHeaders } from '../support/browser.js';
import { openPage, paidSession, sessionParams, submitForm, useSandboxes } from './support.js';

const { start, receiver } = useSandboxes();

async function page(sandbox: Sandbox, path: string): Promise<{ status: number; headers: Headers; html: string }> {
  const response = await fetch(`${sandbox.baseUrl}${path}`, { redirect: 'manual' });
  return { status: response.status, headers: response.headers, html: await response.text() };
}

/** Posts a dashboard form as a browser without JavaScript would, with the token of the page `from`. */
async function post(sandbox: Sandbox, action: string, fields: Record<string, string>, from = '/'): Promise<Response> {
  const token = /name="token" value="([^"]+)"/.exec((await page(sandbox, from)).html)?.[1] ?? '';
  return fetch(`${sandbox.baseUrl}/_dashboard/actions/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, ...fields }).toString(),
    redirect: 'manual',
  });
}

describe('dashboard pages', () => {
  it('serves every page with the security headers, linking only to the sandbox itself', async () => {
    const hook = await receiver();
    const { sandbox, test } = await start({ webhookUrls: [hook.url], modificationResolveMs: 0 });
    const paid = await paidSession(test);
    const refund = await test.modifications.refund({ paymentReference: paid.paymentReference, amount: { value: 100, currency: 'EUR' } });
    const pos = await test.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: 1500, currency: 'EUR' } });
    await sandbox.webhooksSettled();
    const [delivery] = sandbox.records.deliveries();
    const paths = [
      '/',
      '/live',
      '/reference',
      '/test/sessions',
      '/test/sessions?status=completed&order=asc',
      `/test/sessions/${paid.sessionId}`,
      '/test/pos-payments',
      `/test/pos-payments/${pos.posPaymentId}`,
      '/test/modifications?type=refund',
      `/test/modifications/${refund.refundReference}`,
      '/test/deliveries',
      `/test/deliveries/${delivery?.id}`,
      '/live/sessions',
    ];
    for (const path of paths) {
      const answer = await page(sandbox, path);
      expect(answer.status, path).toBe(200);
      expectSecurityHeaders(answer.headers, answer.html);
      for (const [, target] of answer.html.matchAll(/\b(?:href|src|action)="([^"]*)"/g)) {
        const absolute = new URL(target ?? '', sandbox.baseUrl);
        expect(absolute.origin === new URL(sandbox.baseUrl).origin || absolute.protocol === 'data:', `${path} links to ${target}`).toBe(
          true,
        );
      }
    }
    const session = await page(sandbox, `/test/sessions/${paid.sessionId}`);
    expect(session.html).toContain(paid.paymentReference);
    expect(session.html).toContain(refund.refundReference);
    expect(session.html).toContain(`/test/deliveries/${delivery?.id}`);
    const deliveryPage = await page(sandbox, `/test/deliveries/${delivery?.id}`);
    expect(deliveryPage.html).toContain('HTTP 200');
    expect(deliveryPage.html).toContain('<pre>ok</pre>');
  });

  it('answers 404 pages with the same headers for unknown records, and leaves other paths to the service', async () => {
    const { sandbox } = await start();
    for (const path of ['/test/sessions/NOPE', '/live/deliveries/12', '/test/deliveries/abc', '/test/sessions/%E0%A4%A']) {
      const answer = await page(sandbox, path);
      expect(answer.status, path).toBe(404);
      expectSecurityHeaders(answer.headers, answer.html);
    }
    const other = await page(sandbox, '/nothing-here');
    expect(other.status).toBe(404);
    expect(JSON.parse(other.html)).toMatchObject({ success: false, error: { code: 19404 } });
    expect((await fetch(`${sandbox.baseUrl}/test/sessions`, { method: 'POST' })).status).toBe(405);
  });

  it('keeps Test and Live apart: each list shows its own environment, under its own banner', async () => {
    const { sandbox, test, live } = await start();
    const inTest = await test.sessions.create({ ...sessionParams, customReference: 'only-test' });
    const inLive = await live.sessions.create({ ...sessionParams, customReference: 'only-live' });
    const testList = (await page(sandbox, '/test/sessions')).html;
    const liveList = (await page(sandbox, '/live/sessions')).html;
    expect(testList).toContain(inTest.sessionId);
    expect(testList).not.toContain(inLive.sessionId);
    expect(liveList).toContain(inLive.sessionId);
    expect(liveList).not.toContain(inTest.sessionId);
    expect(testList).toMatch(/class="env test"[^>]*>Test data/);
    expect(liveList).toMatch(/class="env live"[^>]*>Live data/);
    expect((await page(sandbox, `/test/sessions/${inLive.sessionId}`)).status).toBe(404);
  });

  it('pages a long list 25 at a time with a next-page link', async () => {
    const { sandbox, test } = await start();
    for (let index = 0; index < 27; index++) await test.sessions.create({ ...sessionParams, customReference: `n-${index}` });
    const first = (await page(sandbox, '/test/sessions')).html;
    expect(first.match(/\/test\/sessions\/[^"]+"/g)).toHaveLength(25);
    const next = /href="(\/test\/sessions\?[^"]*cursor=[^"]+)">Next page/.exec(first)?.[1]?.replaceAll('&amp;', '&');
    const second = (await page(sandbox, next ?? '')).html;
    expect(second.match(/\/test\/sessions\/[^"]+"/g)).toHaveLength(2);
    expect(second).toContain('>n-0<');
    expect(second).toContain('First page');
  });
});

describe('dashboard actions without JavaScript', () => {
  it('expires, pays, resolves, resends, emits and advances, each sending the browser back with what happened', async () => {
    const hook = await receiver({ failFirst: 1 });
    const { sandbox, test } = await start({ webhookUrls: [hook.url], webhookRetry: { attempts: 1 }, posTimeoutResolveMs: 600_000 });
    const toExpire = await test.sessions.create({ ...sessionParams });
    const here = `/test/sessions/${toExpire.sessionId}`;
    const expired = await post(sandbox, 'expire', { environment: 'test', id: toExpire.sessionId, returnTo: here }, here);
    expect(expired.status).toBe(303);
    const location = expired.headers.get('location') ?? '';
    expect(location.startsWith(`${here}?notice=`)).toBe(true);
    expect((await test.sessions.retrieve(toExpire.sessionId)).status).toBe('expired');
    expect((await page(sandbox, location)).html).toContain(`Session ${toExpire.sessionId} expired.`);

    const toPay = await test.sessions.create({ ...sessionParams });
    const paid = await post(sandbox, 'pay', { environment: 'test', id: toPay.sessionId, holderName: 'Jane Tester', returnTo: '/' });
    expect(decodeURIComponent(paid.headers.get('location') ?? '').replaceAll('+', ' ')).toContain('is now completed');
    // The first delivery failed (the receiver fails its first) and was not retried: resend it.
    const [failed] = sandbox.records.deliveries();
    expect(failed?.attempts.map((attempt) => attempt.status)).toEqual([500]);
    const resent = await post(sandbox, 'resend', { environment: 'test', id: String(failed?.id), returnTo: '/' });
    expect(decodeURIComponent(resent.headers.get('location') ?? '').replaceAll('+', ' ')).toContain('Resent as delivery #2: HTTP 200');
    const emitted = await post(sandbox, 'emit', {
      environment: 'test',
      eventCode: 'AUTHORISATION',
      reference: toPay.sessionId,
      returnTo: '/',
    });
    expect(decodeURIComponent(emitted.headers.get('location') ?? '').replaceAll('+', ' ')).toContain('Sent: #3 HTTP 200');

    const timedOut = await test.pos.createPayment(
      { poiId: 'V400m-TEST-000001', amount: { value: 1099, currency: 'EUR' } },
      { recover: false },
    );
    await post(sandbox, 'resolve', { environment: 'test', id: timedOut.posPaymentId, outcome: 'success', returnTo: '/' });
    expect(sandbox.records.posPayment(timedOut.posPaymentId)?.status).toBe('success');

    const advanced = await post(sandbox, 'advance', { duration: '1h30m' });
    expect(sandbox.control.clock().offsetMs).toBe(5_400_000);
    expect(decodeURIComponent(advanced.headers.get('location') ?? '').replaceAll('+', ' ')).toContain('moved ahead by 1 h 30 min');
    const bad = await post(sandbox, 'advance', { duration: 'soon' });
    expect(bad.headers.get('location')).toMatch(/^\/\?problem=/);

    const problem = await post(sandbox, 'pay', { environment: 'test', id: toPay.sessionId, returnTo: here });
    expect(decodeURIComponent(problem.headers.get('location') ?? '').replaceAll('+', ' ')).toContain('only a pending session can be paid');
    const shown = await page(sandbox, problem.headers.get('location') ?? '');
    expect(shown.html).toMatch(/class="problem" role="alert">[^<]*only a pending session can be paid/);

    await post(sandbox, 'reset', { returnTo: 'https://elsewhere.example/' }).then((answer) =>
      expect(answer.headers.get('location')).toMatch(/^\/\?notice=/),
    );
    expect(sandbox.records.counts().sessions).toBe(0);
  });

  it('refuses a form posted without the page token (a page elsewhere cannot act here), changing nothing', async () => {
    const { sandbox, test } = await start();
    const session = await test.sessions.create({ ...sessionParams });
    const forged = await fetch(`${sandbox.baseUrl}/_dashboard/actions/expire`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'guess', environment: 'test', id: session.sessionId }).toString(),
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    expect((await test.sessions.retrieve(session.sessionId)).status).toBe('pending');
    expect((await fetch(`${sandbox.baseUrl}/_dashboard/actions/expire`)).status).toBe(405);
  });

  it.each([
    '/.//evil.example/',
    '/%2e//evil.example/',
    '/%2E//evil.example/x?y=1',
    '/x/..//evil.example/',
    '/x/%2e%2e//evil.example/',
    '//evil.example/',
    '/\\evil.example/',
    '/\\/evil.example/',
    '/./\\evil.example/',
    'https://evil.example/',
    'http://127.0.0.1:1/',
    '\\\\evil.example/',
    'evil.example',
  ])('sends returnTo %s back to / (never off-site)', async (returnTo) => {
    const { sandbox } = await start();
    const answer = await post(sandbox, 'advance', { duration: '1s', returnTo });
    expect(answer.status).toBe(303);
    const location = answer.headers.get('location') ?? '';
    expect(location).toMatch(/^\/\?notice=/);
    expect(new URL(location, sandbox.baseUrl).origin).toBe(new URL(sandbox.baseUrl).origin);
  });

  it('follows a returnTo on the sandbox, normalised: dot segments resolved, query kept', async () => {
    const { sandbox } = await start();
    for (const [returnTo, path] of [
      ['/test/sessions?status=pending', '/test/sessions?status=pending&notice='],
      ['/test/x/../sessions', '/test/sessions?notice='],
      ['/test/./pos-payments?notice=old', '/test/pos-payments?notice='],
    ] as const) {
      const answer = await post(sandbox, 'advance', { duration: '1s', returnTo });
      expect(answer.headers.get('location')?.startsWith(path), `${returnTo} gave ${answer.headers.get('location')}`).toBe(true);
    }
  });

  it('adds and removes a webhook URL from the overview', async () => {
    const { sandbox } = await start();
    await post(sandbox, 'add-webhook-url', { url: 'http://127.0.0.1:3000/webhooks', returnTo: '/' });
    expect(sandbox.webhookUrls).toEqual(['http://127.0.0.1:3000/webhooks']);
    expect((await page(sandbox, '/')).html).toContain('http://127.0.0.1:3000/webhooks');
    await post(sandbox, 'remove-webhook-url', { url: 'http://127.0.0.1:3000/webhooks', returnTo: '/' });
    expect(sandbox.webhookUrls).toEqual([]);
  });
});

/** Posts the form of `action` on the page at `path` with the fields the page put in it, and `extra`. */
async function submitPageForm(sandbox: Sandbox, path: string, action: string, extra: Record<string, string> = {}): Promise<Response> {
  const html = (await page(sandbox, path)).html;
  const form = new RegExp(`<form[^>]*action="/_dashboard/actions/${action}">([\\s\\S]*?)</form>`).exec(html)?.[1] ?? '';
  const fields = Object.fromEntries(
    [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(([, name, value]) => [
      name ?? '',
      (value ?? '').replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code))).replaceAll('&amp;', '&'),
    ]),
  );
  return fetch(`${sandbox.baseUrl}/_dashboard/actions/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, ...extra }).toString(),
    redirect: 'manual',
  });
}

describe('dashboard: Advance comes back to the page it was pressed on', () => {
  it('from a record page, a filtered list and the overview', async () => {
    const { sandbox, test } = await start();
    const session = await test.sessions.create({ ...sessionParams });
    const here = `/test/sessions/${session.sessionId}`;
    const fromRecord = await submitPageForm(sandbox, here, 'advance', { duration: '90s' });
    expect(fromRecord.status).toBe(303);
    const location = fromRecord.headers.get('location') ?? '';
    expect(location.startsWith(`${here}?notice=`), location).toBe(true);
    expect((await page(sandbox, location)).html).toContain('The clock moved ahead by 1 min 30 s');
    // Pressed again on the page it came back to: the earlier notice is not carried along.
    const again = new URL(
      (await submitPageForm(sandbox, location, 'advance', { duration: '1s' })).headers.get('location') ?? '',
      'http://x',
    );
    expect([again.pathname, again.searchParams.getAll('notice').length]).toEqual([here, 1]);

    const list = '/test/sessions?status=pending&order=asc';
    const fromList = new URL(
      (await submitPageForm(sandbox, list, 'advance', { duration: '1s' })).headers.get('location') ?? '',
      'http://x',
    );
    expect([fromList.pathname, fromList.searchParams.get('status'), fromList.searchParams.get('order')]).toEqual([
      '/test/sessions',
      'pending',
      'asc',
    ]);
    const fromLive = await submitPageForm(sandbox, '/live', 'advance', { duration: '1s' });
    expect(fromLive.headers.get('location')).toMatch(/^\/live\?notice=/);
  });
});

describe('dashboard: a session timeline says when and how it ended', () => {
  const OPENED = Date.UTC(2026, 0, 1, 12, 8, 1);

  it('shows an expired session ending at its deadline (12:13:01), not at the time the page was opened', async () => {
    const { sandbox, test } = await start({ clock: manualClock(OPENED) });
    const session = await test.sessions.create({ ...sessionParams });
    await openPage(session.paymentUrl);
    await sandbox.advanceClock(20 * 60_000);
    const html = (await page(sandbox, `/test/sessions/${session.sessionId}`)).html;
    expect(html).toContain('<li><time>2026-01-01 12:08:01 UTC</time>: payment page opened</li>');
    expect(html).toContain('<li><time>2026-01-01 12:13:01 UTC</time>: expired</li>');
    expect(html).not.toContain('12:08:01 UTC</time>: expired');
  });

  it('shows when a session was cancelled or failed', async () => {
    const { sandbox, test } = await start({ clock: manualClock(OPENED) });
    const cancelled = await test.sessions.create({ ...sessionParams });
    const failed = await test.sessions.create({ ...sessionParams });
    await openPage(cancelled.paymentUrl);
    await sandbox.advanceClock(42_000);
    await submitForm(cancelled.paymentUrl, { action: 'cancel' });
    await sandbox.advanceClock(60_000);
    await submitForm(failed.paymentUrl, { holderName: 'DECLINED' });
    expect((await page(sandbox, `/test/sessions/${cancelled.sessionId}`)).html).toContain(
      '<li><time>2026-01-01 12:08:43 UTC</time>: cancelled</li>',
    );
    expect((await page(sandbox, `/test/sessions/${failed.sessionId}`)).html).toContain(
      '<li><time>2026-01-01 12:09:43 UTC</time>: failed</li>',
    );
  });

  it('says a session paid from the dashboard was paid there, as which holder, instead of "payment page opened"', async () => {
    const { sandbox, test } = await start({ clock: manualClock(OPENED) });
    const paid = await test.sessions.create({ ...sessionParams });
    const declined = await test.sessions.create({ ...sessionParams });
    const here = `/test/sessions/${paid.sessionId}`;
    expect((await submitPageForm(sandbox, here, 'pay', { holderName: 'Jane Tester' })).status).toBe(303);
    await submitPageForm(sandbox, `/test/sessions/${declined.sessionId}`, 'pay', { holderName: 'DECLINED' });
    const html = (await page(sandbox, here)).html;
    expect(html).toContain('<li><time>2026-01-01 12:08:01 UTC</time>: paid from the dashboard as Jane Tester</li>');
    expect(html).not.toContain('payment page opened');
    const refused = (await page(sandbox, `/test/sessions/${declined.sessionId}`)).html;
    expect(refused).toMatch(/paid from the dashboard as DECLINED<\/li><li><time>[^<]+<\/time>: payment attempt [^<]+: refused/);
    expect(sandbox.records.session(paid.sessionId)?.controlPayment).toEqual({ from: 'dashboard', holderName: 'Jane Tester' });
  });
});

describe('dashboard live stream', () => {
  it('sends a change event after the state changes, and stops when the client leaves', async () => {
    const { sandbox, test } = await start();
    const aborter = new AbortController();
    const response = await fetch(`${sandbox.baseUrl}/_dashboard/events`, { signal: aborter.signal });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    const until = async (pattern: RegExp) => {
      const deadline = Date.now() + 3_000;
      while (!pattern.test(text) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    };
    await until(/retry: 2000/);
    await test.sessions.create({ ...sessionParams });
    await until(/event: change/);
    expect(text).toMatch(/event: change\ndata: \d+\n\n/);
    aborter.abort();
    await reader.cancel().catch(() => undefined);
  });
});

describe('dashboard access token (dashboardToken)', () => {
  it('answers 401 without the token, sets an HttpOnly SameSite=Strict cookie from ?token= and serves the cookie', async () => {
    const { sandbox, test } = await start({ dashboardToken: 'tok-123' });
    const session = await test.sessions.create({ ...sessionParams });
    for (const path of [
      '/',
      '/test/sessions',
      `/test/sessions/${session.sessionId}`,
      '/_dashboard/events',
      '/?token=tok-12',
      '/?token=tok-1234',
    ]) {
      const answer = await page(sandbox, path);
      expect(answer.status, path).toBe(401);
      expect(answer.html).not.toMatch(/name="token"/);
      expect(answer.html).not.toContain(session.sessionId);
    }
    const forged = await fetch(`${sandbox.baseUrl}/_dashboard/actions/reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=x',
      redirect: 'manual',
    });
    expect(forged.status).toBe(401);
    expect(sandbox.records.counts().sessions).toBe(1);

    const entry = await page(sandbox, `/test/sessions?token=tok-123&status=pending`);
    expect(entry.status).toBe(303);
    expect(entry.headers.get('location')).toBe('/test/sessions?status=pending');
    expect(entry.headers.get('set-cookie')).toBe('sandbox_dashboard=tok-123; Path=/; HttpOnly; SameSite=Strict');
    const withCookie = await fetch(`${sandbox.baseUrl}/test/sessions/${session.sessionId}`, {
      headers: { cookie: 'other=1; sandbox_dashboard=tok-123' },
    });
    expect(withCookie.status).toBe(200);
    expect(await withCookie.text()).toContain(session.sessionId);
    // The payment page is the shopper's, not the dashboard's: no token needed.
    expect((await fetch(session.paymentUrl)).status).toBe(200);
  });
});
