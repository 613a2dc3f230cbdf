/**
 * The dashboard over real HTTP on 127.0.0.1, without a browser: every page answers HTML with the
 * security headers and links only to the sandbox itself; the forms work without JavaScript (303
 * back with a message) and refuse a post without the page's token; Test and Live stay apart; the
 * live stream sends `change` after a change. Chromium, axe and the keyboard: dashboard.browser.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { manualClock, type Sandbox } from '../../src/sandbox/index.js';
import { expectSecurityHeaders } from '../support/browser.js';
import { clientFor, openPage, paidSession, raw, sessionParams, submitForm, useSandboxes } from './support.js';

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
      const deadline = Date.now() + 20_000;
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

/** The control API with `key` (a tenant's, or the sandbox's own Test key). */
async function controlApi(sandbox: Sandbox, path: string, key = sandbox.keys.test, body?: unknown): Promise<any> {
  const response = await fetch(`${sandbox.baseUrl}/_sandbox/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return response.json();
}

const textOf = (location: string | null) => decodeURIComponent(location ?? '').replaceAll('+', ' ');

describe('dashboard fault rules page', () => {
  it('adds a rule through the form, lists it with its count as calls strike, removes one and clears all', async () => {
    const { sandbox } = await start();
    expect((await page(sandbox, '/faults')).html).toContain('No rule: the sandbox answers as the service does.');
    const added = await submitPageForm(sandbox, '/faults', 'add-fault', {
      target: 'route:POST /payment/session',
      environment: 'test',
      times: '2',
      effect: 'error',
      status: '503',
      when: 'before',
      retryAfter: '',
      // Fields of other effects are shown on the form too; they are not part of an error rule.
      copies: '3',
    });
    expect(added.status).toBe(303);
    expect(textOf(added.headers.get('location'))).toMatch(/^\/faults\?notice=Rule fault_1 added\./);
    expect(sandbox.faults.list()).toEqual([
      {
        environment: 'test',
        route: 'POST /payment/session',
        times: 2,
        effect: { type: 'error', status: 503, when: 'before' },
        id: 'fault_1',
        injected: 0,
      },
    ]);
    const struck = await raw(sandbox, 'POST', '/payment/session', { body: { ...sessionParams } });
    expect([struck.status, struck.headers.get('x-sandbox-fault')]).toEqual([503, 'fault_1']);
    const listed = (await page(sandbox, '/faults')).html;
    expect(listed).toMatch(
      /<td class="id"><span id="rule-fault_1">fault_1<\/span><\/td><td><code>POST \/payment\/session<\/code><br><span class="muted">Test only<\/span><\/td>/,
    );
    expect(listed).toContain('<td class="extra">next 2 (1 left)</td><td>error 503 before it ran</td><td class="nowrap">1</td>');

    const ranged = await submitPageForm(sandbox, '/faults', 'add-fault', {
      target: 'route:GET /pos/payments',
      effect: 'latency',
      ms: '5-10',
      probability: '0.5',
    });
    expect(ranged.status).toBe(303);
    expect(sandbox.faults.list()[1]).toMatchObject({
      route: 'GET /pos/payments',
      probability: 0.5,
      effect: { type: 'latency', ms: [5, 10] },
    });
    expect((await page(sandbox, '/faults')).html).toContain('<td class="extra">50 % of matches</td><td>latency of 5 to 10 ms</td>');

    const removed = await submitPageForm(sandbox, '/faults', 'remove-fault');
    expect(textOf(removed.headers.get('location'))).toContain('Rule fault_1 removed; it struck 1 time.');
    expect(sandbox.faults.list().map((rule) => rule.id)).toEqual(['fault_2']);
    const cleared = await submitPageForm(sandbox, '/faults', 'clear-faults');
    expect(textOf(cleared.headers.get('location'))).toContain('Every fault rule was removed.');
    expect(sandbox.faults.list()).toEqual([]);
  });

  it('refuses a rule as the control API does: 400, its message in an alert, the form filled in as posted, nothing added', async () => {
    const { sandbox } = await start();
    const refused = await submitPageForm(sandbox, '/faults', 'add-fault', {
      target: 'route:POST /payment/session',
      effect: 'duplicate',
      copies: '2',
      times: 'twice',
    });
    expect(refused.status).toBe(400);
    const html = await refused.text();
    const api = await fetch(`${sandbox.baseUrl}/_sandbox/faults`, {
      method: 'POST',
      headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json' },
      body: JSON.stringify({ route: 'POST /payment/session', times: 'twice', effect: { type: 'duplicate', copies: 2 } }),
    });
    const message = ((await api.json()) as { error: { message: string } }).error.message;
    expect(api.status).toBe(400);
    expect(html).toContain(`<p class="problem" role="alert">${message.replaceAll('"', '&#34;')}</p>`);
    expect(html).toContain('<option value="duplicate" selected>');
    expect(html).toContain('<option value="route:POST /payment/session" selected>');
    expect(html).toContain('name="times" value="twice"');
    expect(sandbox.faults.list()).toEqual([]);
    // An effect that cannot apply: named by the same check.
    const webhookOnRoute = await submitPageForm(sandbox, '/faults', 'add-fault', { target: 'event:REFUND', effect: 'truncate' });
    expect(await webhookOnRoute.text()).toContain('Fault rule refused: a truncate effect applies to API calls: give a route and no event');
  });

  it('shows strikes on the record timeline and the delivery log: the rule, the call or event, the effect, the deliveries', async () => {
    const hook = await receiver();
    const { sandbox } = await start({ webhookUrls: [hook.url] });
    const lost = sandbox.faults.add({
      route: 'POST /payment/session',
      times: 1,
      effect: { type: 'error', status: 500, when: 'after-commit' },
    });
    const copies = sandbox.faults.add({ event: 'AUTHORISATION', times: 1, effect: { type: 'duplicate', copies: 2 } });
    expect((await raw(sandbox, 'POST', '/payment/session', { body: { ...sessionParams } })).status).toBe(500);
    const [session] = sandbox.records.sessions();
    await sandbox.paySession('test', session?.sessionId ?? '');
    const [first, second] = sandbox.records.deliveries();
    const timeline = (await page(sandbox, `/test/sessions/${session?.sessionId}`)).html;
    expect(timeline).toContain(
      `<span class="status bad">fault</span> rule ${lost.id} struck <code>POST /payment/session</code>: error 500 after it committed</li>`,
    );
    expect(timeline).toContain(
      `rule ${copies.id} struck the AUTHORISATION webhook: 2 copies sent at once (deliveries <a href="/test/deliveries/${first?.id}">#${first?.id}</a>, <a href="/test/deliveries/${second?.id}">#${second?.id}</a>)`,
    );
    expect((await page(sandbox, `/test/deliveries/${second?.id}`)).html).toContain(
      `<dt>Fault</dt><dd>rule ${copies.id}: 2 copies sent at once</dd>`,
    );
    expect((await page(sandbox, '/test/deliveries')).html).toContain(`<td class="nowrap extra">${copies.id}</td>`);
  });
});

describe('dashboard tenants', () => {
  it('switches to a tenant by ?tenant=: its records only, every link and form keeping it; an unknown one is a 404 page', async () => {
    const { sandbox, test } = await start();
    expect((await page(sandbox, '/')).html).not.toContain('id="tenant-choice"');
    const own = await test.sessions.create({ ...sessionParams, customReference: 'own' });
    const worker = sandbox.createTenant({ webcode: 'WORKER_1', name: 'worker 1' });
    const workerClient = clientFor(sandbox, 'test', { apiKey: worker.keys.test, webcode: worker.webcode });
    const theirs = await workerClient.sessions.create({ ...sessionParams, customReference: 'theirs' });
    const chooser = (await page(sandbox, '/')).html;
    expect(chooser).toContain(`<option value="${sandbox.webcode}" selected>Sandbox&#39;s own (${sandbox.webcode})</option>`);
    expect(chooser).toContain('<option value="WORKER_1">worker 1 (WORKER_1)</option>');

    const overview = await page(sandbox, '/?tenant=WORKER_1');
    expect(overview.html).toContain('Test data of worker 1 (webcode WORKER_1)');
    expect(overview.html).toContain(theirs.sessionId);
    expect(overview.html).not.toContain(own.sessionId);
    for (const path of [
      '/?tenant=WORKER_1',
      '/test/sessions?tenant=WORKER_1',
      `/test/sessions/${theirs.sessionId}?tenant=WORKER_1`,
      '/faults?tenant=WORKER_1',
    ]) {
      const answer = await page(sandbox, path);
      expect(answer.status, path).toBe(200);
      for (const [, target] of answer.html.matchAll(/\bhref="(\/[^"]*)"/g))
        expect(target, `${path} links to ${target}`).toContain('tenant=WORKER_1');
      const forms = [...answer.html.matchAll(/<form[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/g)];
      expect(forms.length).toBeGreaterThan(0);
      for (const [, form] of forms) expect(form).toContain('<input type="hidden" name="tenant" value="WORKER_1">');
    }
    expect((await page(sandbox, `/test/sessions/${own.sessionId}?tenant=WORKER_1`)).status).toBe(404);
    expect((await page(sandbox, `/test/sessions/${theirs.sessionId}`)).status).toBe(404);

    for (const path of [
      '/?tenant=NOPE',
      `/test/sessions/${theirs.sessionId}?tenant=NOPE`,
      '/faults?tenant=NOPE',
      '/_dashboard/events?tenant=NOPE',
    ]) {
      const missing = await page(sandbox, path);
      expect(missing.status, path).toBe(404);
      expectSecurityHeaders(missing.headers, missing.html);
      expect(missing.html).toContain('No tenant with webcode NOPE');
    }
    await sandbox.removeTenant('WORKER_1');
    expect((await page(sandbox, '/?tenant=WORKER_1')).status).toBe(404);
  });

  it("acts on the chosen tenant only: expire, advance, webhook URLs, fault rules and reset never touch another's", async () => {
    const { sandbox, test } = await start();
    const own = await test.sessions.create({ ...sessionParams, customReference: 'own' });
    const worker = sandbox.createTenant({ webcode: 'WORKER_2' });
    const workerClient = clientFor(sandbox, 'test', { apiKey: worker.keys.test, webcode: worker.webcode });
    const theirs = await workerClient.sessions.create({ ...sessionParams, customReference: 'theirs' });
    const home = '/?tenant=WORKER_2';

    // A session of the sandbox's own tenant is not the worker's to expire.
    const wrong = await post(sandbox, 'expire', { environment: 'test', id: own.sessionId, tenant: 'WORKER_2', returnTo: '/' });
    expect(textOf(wrong.headers.get('location'))).toMatch(/^\/\?tenant=WORKER_2&problem=/);
    expect((await test.sessions.retrieve(own.sessionId)).status).toBe('pending');
    const expired = await submitPageForm(sandbox, `/test/sessions/${theirs.sessionId}?tenant=WORKER_2`, 'expire');
    expect(expired.headers.get('location')).toMatch(new RegExp(`^/test/sessions/${theirs.sessionId}\\?tenant=WORKER_2&notice=`));
    expect((await workerClient.sessions.retrieve(theirs.sessionId)).status).toBe('expired');

    await submitPageForm(sandbox, home, 'advance', { duration: '1h' });
    await submitPageForm(sandbox, home, 'add-webhook-url', { url: 'http://127.0.0.1:9/worker' });
    await submitPageForm(sandbox, '/faults?tenant=WORKER_2', 'add-fault', {
      target: 'route:POST /payment/session',
      effect: 'reset',
      when: 'before',
    });
    expect((await controlApi(sandbox, 'clock', worker.keys.test)).data.offsetMs).toBe(3_600_000);
    expect(sandbox.control.clock().offsetMs).toBe(0);
    expect((await controlApi(sandbox, 'webhook-urls', worker.keys.test)).data.urls).toEqual(['http://127.0.0.1:9/worker']);
    expect(sandbox.webhookUrls).toEqual([]);
    expect((await controlApi(sandbox, 'faults', worker.keys.test)).data).toHaveLength(1);
    expect(sandbox.faults.list()).toEqual([]);

    await submitPageForm(sandbox, home, 'reset');
    expect((await controlApi(sandbox, 'test/sessions', worker.keys.test)).data.total).toBe(0);
    expect(sandbox.records.sessions().map((session) => session.sessionId)).toEqual([own.sessionId]);
    // A form naming a tenant that is gone acts on nothing.
    await sandbox.removeTenant('WORKER_2');
    const gone = await post(sandbox, 'reset', { tenant: 'WORKER_2', returnTo: '/' });
    expect(gone.status).toBe(404);
    expect(sandbox.records.sessions()).toHaveLength(1);
  });
});
