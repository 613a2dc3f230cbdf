/**
 * The dashboard's request log in Debian's headless Chromium: the Requests page, an entry's page and
 * a record's requests have no serious or critical axe violation at 1280×800 and 390×844
 * (screenshots in the artefacts), break the CSP nowhere, show no key or client secret whole, work
 * from the keyboard alone, and the Requests page takes in new requests by itself.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { describeInBrowser, launchChromium, preloadAxe, runAxe, screenshot, seriousViolations, watchCsp } from '../support/browser.js';
import { clientFor, paidSession, raw, sessionParams } from './support.js';

const KEY = 'sk_test_SENTINELbrowser31415926';
const SECRET = 'cs_test_SENTINELbrowser27182818';

describeInBrowser('the request log in the dashboard', () => {
  let browser: Browser;
  let sandbox: Sandbox;

  beforeAll(async () => {
    browser = await launchChromium();
    sandbox = createSandbox({ posDelayMs: 0, modificationResolveMs: 0, keys: { test: KEY }, clientSecrets: { test: SECRET } });
    await sandbox.listen();
  }, 20_000);

  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
  });

  async function open(options: { width?: number; height?: number; axe?: boolean } = {}) {
    const context: BrowserContext = await browser.newContext({
      viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
      bypassCSP: options.axe ?? false,
    });
    if (options.axe) await preloadAxe(context);
    const csp = await watchCsp(context);
    const page = await context.newPage();
    return { context, page, csp };
  }

  it("shows the Requests page, an entry and a record's requests axe-clean at both sizes, no secret whole, the CSP kept", async () => {
    const paid = await paidSession(clientFor(sandbox, 'test'));
    const refund = await raw(sandbox, 'POST', '/payment/refund', {
      body: { paymentReference: paid.paymentReference, amount: { value: 100, currency: 'EUR' } },
      idempotencyKey: 'refund-browser',
    });
    await raw(sandbox, 'POST', '/payment/session', {
      body: { ...sessionParams, amount: { value: 0, currency: 'EUR' }, description: SECRET },
    });
    const rule = sandbox.faults.add({ route: 'GET /payment/sessions', times: 1, effect: { type: 'error', status: 503, when: 'before' } });
    await raw(sandbox, 'GET', '/payment/sessions');
    const refused = (await sandbox.requests.list({ status: 400 })).items[0];
    const refundEntry = (await sandbox.requests.list({ operation: 'refund' })).items[0];
    const faulted = (await sandbox.requests.list({ status: 503 })).items[0];
    const pages: [string, string][] = [
      ['requests', '/test/requests'],
      ['requests-4xx', '/test/requests?status=4xx'],
      ['requests-bad-filter', '/test/requests?status=teapot'],
      ['request-refused', `/test/requests/${refused?.id}`],
      ['request-refund', `/test/requests/${refundEntry?.id}`],
      ['request-fault', `/test/requests/${faulted?.id}`],
      ['session-requests', `/test/sessions/${paid.sessionId}`],
      ['modification-requests', `/test/modifications/${refund.body.data.refundReference}`],
    ];
    for (const size of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      const { context, page } = await open({ ...size, axe: true });
      for (const [name, path] of pages) {
        const response = await page.goto(`${sandbox.baseUrl}${path}`);
        expect(response?.status(), name).toBe(name === 'requests-bad-filter' ? 400 : 200);
        await screenshot(page, 'request-log', `${name}-${size.width}x${size.height}.jpg`);
        expect(seriousViolations(await runAxe(page)), `${name} at ${size.width}×${size.height}`).toEqual([]);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${name} at ${size.width}×${size.height} scrolls sideways`).toBeLessThanOrEqual(0);
        const text = await page.content();
        expect(text.includes(KEY) || text.includes(SECRET), `${name} shows a secret`).toBe(false);
      }
      await context.close();
    }

    // The entry's page: both bodies laid out, the records and the rule linked; the record's page lists the request.
    const { context, page, csp } = await open();
    await page.goto(`${sandbox.baseUrl}/test/requests/${refundEntry?.id}`);
    const bodies = await page.locator('pre').allTextContents();
    expect(bodies[0]).toContain('\n  "paymentReference": ');
    expect(bodies[1]).toContain('\n  "success": true');
    await page.getByRole('link', { name: refund.body.data.refundReference }).click();
    await expect(page.locator('h1').textContent()).resolves.toContain(refund.body.data.refundReference);
    await page.goto(`${sandbox.baseUrl}/test/requests/${faulted?.id}`);
    await page.getByRole('link', { name: rule.id }).click();
    expect(new URL(page.url()).hash).toBe(`#rule-${rule.id}`);
    await page.goto(`${sandbox.baseUrl}/test/sessions/${paid.sessionId}`);
    expect(
      await page
        .getByRole('region', { name: /Requests that made or touched this record/ })
        .locator('tbody tr')
        .count(),
    ).toBeGreaterThanOrEqual(3);
    await page.goto(`${sandbox.baseUrl}/test/requests/${refused?.id}`);
    await expect(page.getByText('amount.value must be a positive integer number of cents').first().isVisible()).resolves.toBe(true);
    expect(csp.violations).toEqual([]);
    await context.close();
  }, 180_000);

  it('filters from the keyboard alone and opens an entry with Enter', async () => {
    await raw(sandbox, 'GET', '/payment/nothing');
    const { context, page } = await open();
    await page.goto(`${sandbox.baseUrl}/test/requests`);
    const focusName = () =>
      page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        return element?.id || (element?.textContent ?? '').trim();
      });
    const tabTo = async (name: string | RegExp) => {
      for (let index = 0; index < 80; index++) {
        await page.keyboard.press('Tab');
        const focused = await focusName();
        if (typeof name === 'string' ? focused === name : name.test(focused)) return;
      }
      throw new Error(`Nothing named ${name} reachable with Tab`);
    };
    await tabTo('filter-status');
    await page.keyboard.type('404');
    await tabTo('Apply');
    await Promise.all([page.waitForURL(/status=404/), page.keyboard.press('Enter')]);
    const rows = page.locator('#live tbody tr');
    expect(await rows.count()).toBe(1);
    await tabTo(/^\d{4}-\d{2}-\d{2} /);
    await Promise.all([page.waitForURL(/\/test\/requests\/SANDBOX-REQ-/), page.keyboard.press('Enter')]);
    await expect(page.locator('h1').textContent()).resolves.toBe('GET /external/v1/test/payment/nothing');
    await context.close();
  }, 60_000);

  it('takes in a new request by itself, without a reload', async () => {
    const { context, page } = await open();
    await page.goto(`${sandbox.baseUrl}/test/requests?operation=listTerminals`);
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 42;
    });
    expect(await page.locator('#live tbody tr').count()).toBe(0);
    await raw(sandbox, 'GET', '/pos/terminals');
    await page.locator('#live tbody tr').first().waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);
    await context.close();
  }, 30_000);
});
