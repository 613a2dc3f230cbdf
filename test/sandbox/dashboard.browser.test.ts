/**
 * The dashboard in Debian's headless Chromium: axe-core finds no violation of impact serious or
 * critical on any page at 1280×800 or 390×844 (screenshots of each go to the test artefacts), every
 * control works from the keyboard alone (a terminal's processing time too), the page refreshes itself when a payment arrives, reading
 * works with JavaScript off, and the browser never calls any address but the sandbox's own.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PaymentClient } from '../../src/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { payTestSession } from '../../src/testing/index.js';
import { describeInBrowser, launchChromium, preloadAxe, runAxe, screenshot, seriousViolations } from '../support/browser.js';
import { type Receiver, sessionParams, startReceiver } from './support.js';

const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

describeInBrowser('sandbox dashboard in a real browser', () => {
  let browser: Browser;
  let sandbox: Sandbox;
  let client: PaymentClient;
  let hook: Receiver;

  beforeAll(async () => {
    hook = await startReceiver({ failFirst: 1 });
    browser = await launchChromium();
    sandbox = createSandbox({
      posDelayMs: 0,
      webhookUrls: [hook.url],
      webhookRetry: { attempts: 1 },
      posTimeoutResolveMs: 600_000,
      modificationResolveMs: 0,
    });
    await sandbox.listen();
    client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl: sandbox.baseUrl, maxRetries: 0 });
  }, 20_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all([sandbox?.close(), hook?.close()]);
  });

  /** A context that records every request the page makes (bypassing the CSP only for axe's injected script). */
  async function open(options: { javaScriptEnabled?: boolean; width?: number; height?: number; axe?: boolean } = {}) {
    const context: BrowserContext = await browser.newContext({
      viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
      javaScriptEnabled: options.javaScriptEnabled ?? true,
      bypassCSP: true,
    });
    // Only where axe runs: every page of such a context parses its 500 kB source.
    if (options.axe) await preloadAxe(context);
    const requests: string[] = [];
    context.on('request', (request) => requests.push(request.url()));
    const page = await context.newPage();
    return { context, page, requests };
  }

  it('has no serious or critical axe violation on any page, at 1280×800 and 390×844, with screenshots', async () => {
    const paid = await client.sessions.create({ ...sessionParams, customReference: 'axe-paid' });
    await payTestSession(paid.paymentUrl);
    const { paymentReference } = await client.sessions.retrieve(paid.sessionId);
    const refund = await client.modifications.refund({ paymentReference: paymentReference ?? '', amount: { value: 100, currency: 'EUR' } });
    const pending = await client.sessions.create({ ...sessionParams, customReference: 'axe-pending' });
    const pos = await client.pos.createPayment(
      { poiId: 'V400m-TEST-000001', amount: { value: 1099, currency: 'EUR' } },
      { recover: false },
    );
    await sandbox.webhooksSettled();
    const [delivery] = sandbox.records.deliveries();
    const pages: [string, string][] = [
      ['overview', '/'],
      ['overview-live', '/live'],
      ['sessions', '/test/sessions'],
      ['session-paid', `/test/sessions/${paid.sessionId}`],
      ['session-pending', `/test/sessions/${pending.sessionId}`],
      ['pos-payments', '/test/pos-payments'],
      ['pos-payment-timeout', `/test/pos-payments/${pos.posPaymentId}`],
      ['modifications', '/test/modifications'],
      ['modification', `/test/modifications/${refund.refundReference}`],
      ['deliveries', '/test/deliveries'],
      ['delivery', `/test/deliveries/${delivery?.id}`],
      ['reference', '/reference'],
      ['not-found', '/test/sessions/NOPE'],
      ['notice', `/test/sessions/${paid.sessionId}?notice=Done.`],
      ['problem', `/test/sessions/${paid.sessionId}?problem=Something+went+wrong.`],
    ];
    // The two sizes at once, each in its own context: the pages only read.
    await Promise.all(
      SIZES.map(async (size) => {
        const { context, page } = await open({ ...size, axe: true });
        try {
          for (const [name, path] of pages) {
            await page.goto(`${sandbox.baseUrl}${path}`);
            await screenshot(page, 'dashboard', `${name}-${size.width}x${size.height}.jpg`);
            expect(seriousViolations(await runAxe(page)), `${name} at ${size.width}×${size.height}`).toEqual([]);
            // Nothing wider than the screen but the tables, which scroll inside their own region.
            const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
            expect(overflow, `${name} at ${size.width}×${size.height} scrolls sideways`).toBeLessThanOrEqual(0);
          }
        } finally {
          await context.close();
        }
      }),
    );
  }, 120_000);

  it('renders the API reference page axe-clean at 390×844, nothing wider than the screen, no request elsewhere', async () => {
    for (const size of SIZES.filter(({ name }) => name === 'phone')) {
      const { context, page, requests } = await open({ ...size, axe: true });
      await page.goto(`${sandbox.baseUrl}/api-reference`);
      await screenshot(page, 'dashboard', `api-reference-${size.width}x${size.height}.jpg`);
      expect(await page.locator('h3').count()).toBe(13 + 2); // the endpoints and the two webhooks
      expect(seriousViolations(await runAxe(page)), `api-reference at ${size.width}×${size.height}`).toEqual([]);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `api-reference at ${size.width}×${size.height} scrolls sideways`).toBeLessThanOrEqual(0);
      expect(requests.filter((url) => !url.startsWith(sandbox.baseUrl) && !url.startsWith('data:'))).toEqual([]);
      await context.close();
    }
  }, 60_000);

  it('on a 390 px screen folds the clock away, shows list ids whole on one line and colours outcomes apart, axe passing', async () => {
    const completed = await client.sessions.create({ ...sessionParams, customReference: 'phone-completed' });
    await payTestSession(completed.paymentUrl);
    const failed = await client.sessions.create({ ...sessionParams, customReference: 'phone-failed' });
    await sandbox.paySession('test', failed.sessionId, { holderName: 'DECLINED' });
    await client.sessions.create({ ...sessionParams, customReference: 'phone-pending' });

    const phone = await open({ width: 390, height: 844 });
    await phone.page.goto(`${sandbox.baseUrl}/test/sessions`);
    const clock = phone.page.locator('#clock');
    expect(await clock.evaluate((element) => (element as HTMLDetailsElement).open)).toBe(false);
    expect((await clock.boundingBox())?.height).toBeLessThan(80);
    // Each session id on one line, and the id and status columns inside the screen.
    const cells = await phone.page.$$eval('tbody tr', (rows) =>
      rows.map((row) => {
        const link = row.querySelector('td.id a') as HTMLElement;
        const badge = row.querySelector('.status') as HTMLElement;
        return {
          lines: link.getClientRects().length,
          height: link.getBoundingClientRect().height,
          lineHeight: Number.parseFloat(getComputedStyle(link).lineHeight),
          right: Math.max(link.getBoundingClientRect().right, badge.getBoundingClientRect().right),
        };
      }),
    );
    expect(cells.length).toBeGreaterThanOrEqual(3);
    for (const cell of cells) {
      expect(cell.lines).toBe(1);
      expect(cell.height).toBeLessThanOrEqual(cell.lineHeight);
      expect(cell.right).toBeLessThanOrEqual(390);
    }
    const background = (text: string) =>
      phone.page
        .locator('tbody .status', { hasText: new RegExp(`^${text}$`) })
        .first()
        .evaluate((badge) => getComputedStyle(badge).backgroundColor);
    const colours = { completed: await background('completed'), failed: await background('failed'), pending: await background('pending') };
    expect(new Set(Object.values(colours)).size, JSON.stringify(colours)).toBe(3);
    expect(seriousViolations(await runAxe(phone.page))).toEqual([]);
    // Opened, the clock works as on a wide screen.
    await phone.page.locator('#clock summary').click();
    await expect(phone.page.locator('#advance-by').isVisible()).resolves.toBe(true);
    await phone.context.close();

    const desktop = await open();
    await desktop.page.goto(`${sandbox.baseUrl}/test/sessions`);
    expect(await desktop.page.locator('#clock').evaluate((element) => (element as HTMLDetailsElement).open)).toBe(true);
    await desktop.context.close();
  }, 60_000);

  it('runs every control from the keyboard alone: pay, expire, resolve, resend, advance the clock', async () => {
    const { context, page, requests } = await open();
    const toPay = await client.sessions.create({ ...sessionParams, customReference: 'keys-pay' });
    const toExpire = await client.sessions.create({ ...sessionParams, customReference: 'keys-expire' });
    const timedOut = await client.pos.createPayment(
      { poiId: 'S1F2-TEST-000002', amount: { value: 2099, currency: 'EUR' } },
      { recover: false },
    );

    /** Tabs to the control whose accessible name is `name` and presses `key` on it. */
    async function press(name: string, key = 'Enter') {
      for (let index = 0; index < 80; index++) {
        await page.keyboard.press('Tab');
        const focused = await page.evaluate(() => {
          const element = document.activeElement as HTMLElement | null;
          return element ? (element.getAttribute('aria-label') ?? element.textContent ?? '').trim() : '';
        });
        if (focused === name) {
          await Promise.all([page.waitForLoadState('load'), page.keyboard.press(key)]);
          return;
        }
      }
      throw new Error(`No control named "${name}" reachable with Tab`);
    }

    // Pay as a declining holder: choose in the select with the arrow keys, then Pay.
    await page.goto(`${sandbox.baseUrl}/test/sessions/${toPay.sessionId}`);
    for (let index = 0; index < 80; index++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(() => document.activeElement?.id === 'holder')) break;
    }
    await page.keyboard.press('ArrowDown');
    expect(await page.locator('#holder').inputValue()).toBe('DECLINED');
    await press('Pay');
    await page.waitForURL(/notice=/);
    await expect(page.getByRole('status').first().textContent()).resolves.toContain('is now failed');
    expect(sandbox.records.session(toPay.sessionId)?.attempts[0]?.reason).toBe('declined, generic');

    await page.goto(`${sandbox.baseUrl}/test/sessions/${toExpire.sessionId}`);
    await press('Expire now');
    await page.waitForURL(/notice=/);
    expect(sandbox.records.session(toExpire.sessionId)?.status).toBe('expired');

    await page.goto(`${sandbox.baseUrl}/test/pos-payments/${timedOut.posPaymentId}`);
    await press('Resolve as failed', 'Space');
    await page.waitForURL(/notice=/);
    expect(sandbox.records.posPayment(timedOut.posPaymentId)?.status).toBe('failed');

    // The receiver failed the first delivery of this suite; resend one that failed.
    const failed = sandbox.records.deliveries().find((delivery) => !delivery.delivered);
    expect(failed).toBeDefined();
    await page.goto(`${sandbox.baseUrl}/test/deliveries/${failed?.id}`);
    await press('Resend');
    await page.waitForURL(/notice=/);
    expect(await page.getByRole('status').first().textContent()).toMatch(/Resent as delivery #\d+: HTTP 200/);

    // The clock: type a duration in its field and submit with Enter.
    const before = sandbox.control.clock().offsetMs;
    await page.goto(`${sandbox.baseUrl}/`);
    for (let index = 0; index < 40; index++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(() => document.activeElement?.id === 'advance-by')) break;
    }
    await page.keyboard.press('Control+A');
    await page.keyboard.type('90s');
    await Promise.all([page.waitForURL(/notice=/), page.keyboard.press('Enter')]);
    expect(sandbox.control.clock().offsetMs - before).toBe(90_000);

    // Only the sandbox's own address was ever asked for.
    const origin = new URL(sandbox.baseUrl).origin;
    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual([]);
    await context.close();
  }, 60_000);

  it('refreshes a list by itself when the app makes a payment (live region), without a reload', async () => {
    const { context, page, requests } = await open();
    await page.goto(`${sandbox.baseUrl}/test/sessions`);
    const marker = await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = Math.random();
      return (window as unknown as { marker: number }).marker;
    });
    const session = await client.sessions.create({ ...sessionParams, customReference: 'live-arrival' });
    await page.getByRole('link', { name: session.sessionId }).waitFor({ timeout: 5_000 });
    // The same document: the region was refreshed, the page was not reloaded.
    expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(marker);
    await expect(page.locator('#live-status').textContent()).resolves.toMatch(/^Updated /);
    const origin = new URL(sandbox.baseUrl).origin;
    expect(requests.every((url) => url.startsWith(`${origin}/`) || url.startsWith('data:'))).toBe(true);
    await context.close();
  }, 30_000);

  it('reads and acts with JavaScript off', async () => {
    const { context, page } = await open({ javaScriptEnabled: false });
    const session = await client.sessions.create({ ...sessionParams, customReference: 'no-js' });
    await page.goto(`${sandbox.baseUrl}/test/sessions?status=pending`);
    await page.getByRole('link', { name: session.sessionId }).click();
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL(/notice=/);
    expect(await page.getByRole('status').first().textContent()).toContain('is now completed');
    expect(sandbox.records.session(session.sessionId)?.status).toBe('completed');
    await context.close();
  }, 30_000);

  it('adds a fault rule through the form (a refused one says why), counts its strike, removes it, switches tenant; axe passing', async () => {
    const worker = sandbox.createTenant({ webcode: 'BROWSER_WORKER', name: 'browser worker' });
    const { context, page } = await open();
    await page.goto(`${sandbox.baseUrl}/faults`);
    await page.getByLabel('Call or event').selectOption('route:POST /payment/session');
    await page.getByLabel('Effect').selectOption('duplicate');
    await page.getByLabel('Times').fill('1');
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Add rule' }).click()]);
    // Refused as the control API refuses it, with the form as it was.
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'Fault rule refused: effect.copies must be a whole number from 2 to 10000',
    );
    expect(await page.getByLabel('Times').inputValue()).toBe('1');
    await page.getByLabel('Effect').selectOption('error');
    await page.getByLabel('Status').selectOption('503');
    await page.getByLabel('When').selectOption('before');
    await Promise.all([page.waitForURL(/notice=/), page.getByRole('button', { name: 'Add rule' }).click()]);
    const row = page.getByRole('row', { name: /fault_\d+/ });
    await expect(row.textContent()).resolves.toMatch(/error 503 before it ran\s*0/);
    await expect(client.sessions.create({ ...sessionParams, customReference: 'struck' })).rejects.toThrow();
    await page.reload();
    await expect(row.textContent()).resolves.toMatch(/next 1 \(0 left\)error 503 before it ran\s*1/);
    await screenshot(page, 'dashboard', 'faults-1280x800.jpg');
    // One axe run covers the rules table, the form and the tenant chooser; the frame is checked above.
    expect(seriousViolations(await runAxe(page)), 'faults page').toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 800 });
    await Promise.all([page.waitForURL(/notice=/), row.getByRole('button', { name: /^Remove fault_\d+$/ }).click()]);
    expect(sandbox.faults.list()).toEqual([]);

    // Another tenant: its own (empty) rules, and every page of it names it.
    await page.getByLabel('Tenant').selectOption(worker.webcode);
    await Promise.all([page.waitForURL(/tenant=BROWSER_WORKER/), page.getByRole('button', { name: 'Show' }).click()]);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Fault rules of BROWSER_WORKER');
    await page.getByRole('link', { name: 'Sessions' }).click();
    await expect(page.getByRole('region', { name: 'Environment' }).textContent()).resolves.toContain(
      'browser worker (webcode BROWSER_WORKER)',
    );
    expect(new URL(page.url()).searchParams.get('tenant')).toBe(worker.webcode);
    await context.close();
    await sandbox.removeTenant(worker.webcode);
  }, 30_000);

  it("sets a terminal's processing time from the keyboard on the overview, then back to the default; axe passing", async () => {
    const { context, page } = await open({ axe: true });
    await page.goto(`${sandbox.baseUrl}/`);
    const field = page.getByLabel('Processing time of V400m-TEST-000001, in ms');
    await field.focus();
    await page.keyboard.type('35000');
    await Promise.all([page.waitForURL(/notice=/), page.keyboard.press('Enter')]);
    await expect(page.getByRole('status').first().textContent()).resolves.toBe(
      'Terminal V400m-TEST-000001 now takes 35000 ms per payment.',
    );
    expect(sandbox.terminals('test')[0]?.processingMs).toBe(35_000);
    const row = page.getByRole('region', { name: 'Terminals, Test' }).getByRole('row', { name: /V400m-TEST-000001/ });
    await expect(row.textContent()).resolves.toContain('35000 ms');
    // One axe run covers the Terminals section and its forms; the rest of the overview is checked above.
    expect(seriousViolations(await runAxe(page)), 'overview with a terminal set').toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await field.fill('');
    await Promise.all([page.waitForURL(/default%20time|default\+time/), row.getByRole('button', { name: 'Set' }).click()]);
    expect(sandbox.terminals('test')[0]?.processingMs).toBeNull();
    await context.close();
  }, 30_000);

  it('runs under its own Content-Security-Policy with no violation (no axe injection here)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    // The live stream is held until the session exists: the change falls between the page's render
    // and the stream's opening, which the live script (nonce'd) catches up on when the stream opens.
    let releaseStream = () => {};
    const streamHeld = new Promise<void>((resolve) => {
      releaseStream = resolve;
    });
    await page.route('**/_dashboard/events*', async (route) => {
      await streamHeld;
      await route.continue();
    });
    await page.goto(`${sandbox.baseUrl}/test/sessions`);
    const session = await client.sessions.create({ ...sessionParams, customReference: 'csp-live' });
    releaseStream();
    await page.getByRole('link', { name: session.sessionId }).waitFor({ timeout: 5_000 });
    expect(violations).toEqual([]);
    await context.close();
  }, 30_000);
});
