import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRedirectData, PaymentClient, RedirectDataError } from '../../src/index.js';
import { createSandbox, type ManualClock, manualClock, type Sandbox } from '../../src/sandbox/index.js';
import {
  TEST_CARDHOLDER_NAMES,
  TEST_CARDS,
  TEST_SUCCESS_CARDHOLDER,
  type TestCard,
  type TestCardholderName,
} from '../../src/testing/index.js';
import {
  artifactPath,
  describeInBrowser,
  expectSecurityHeaders,
  launchChromium,
  type ShopReceiver,
  startShop,
  watchCsp,
} from '../support/browser.js';

/**
 * The sandbox's hosted payment page, driven in Debian's headless Chromium the way a customer would:
 * by the labels and roles a screen reader announces. The browser really goes back to a small shop
 * on 127.0.0.1: at once (a 303) for a payment or a cancel, otherwise from a page that says what
 * happened, by its focused "Return to the shop" link or by its script after 5 seconds. Every page
 * runs under its own Content-Security-Policy, and no test may see a CSP violation.
 */

/** Waits for a page or a redirect: an outcome page returns to the shop after 5 s. */
const WAIT_MS = 10_000;
const AMOUNT = { value: 2599, currency: 'EUR' } as const;
const SCREENSHOT = artifactPath('hosted-page', 'form-en-800x900.png');

describeInBrowser('hosted payment page in a real browser', () => {
  let browser: Browser;
  let shop: ShopReceiver;
  let sandbox: Sandbox;
  let client: PaymentClient;
  let counter = 0;

  beforeAll(async () => {
    [browser, shop] = await Promise.all([launchChromium(), startShop()]);
    sandbox = createSandbox({ posDelayMs: 0 });
    await sandbox.listen();
    client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl: sandbox.baseUrl });
  }, 20_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all([shop?.close(), sandbox?.close()]);
  });

  interface Checkout {
    sessionId: string;
    paymentUrl: string;
    urlOk: string;
    urlKo: string;
    okPath: string;
    koPath: string;
    customReference: string;
  }

  /** The merchant's backend: a session whose return URLs point at the shop, for an English-speaking shopper. */
  async function checkout(payments: PaymentClient = client): Promise<Checkout> {
    const tag = `order-${++counter}`;
    const okPath = `/ok/${tag}`;
    const koPath = `/ko/${tag}`;
    const urlOk = shop.url(okPath);
    const urlKo = shop.url(koPath);
    const session = await payments.sessions.create({
      amount: AMOUNT,
      urlOk,
      urlKo,
      description: `Order ${tag}`,
      customReference: tag,
      shopperLocale: 'en-GB',
    });
    return { sessionId: session.sessionId, paymentUrl: session.paymentUrl, urlOk, urlKo, okPath, koPath, customReference: tag };
  }

  /** A document the browser loaded: its address and visible text, read when its DOM was ready. */
  interface Seen {
    url: string;
    text: string;
  }

  /**
   * Runs `visit` on `url` in a fresh browser context (no shared cookies or history), closed
   * afterwards whatever happens; safe for tests running concurrently. `seen` lists every document
   * the browser loaded, so an outcome page can be checked after the browser has left it. Every HTML
   * answer of the sandbox is checked for the security headers, and no CSP violation may occur.
   */
  async function onPage(url: string, visit: (page: Page, seen: Seen[]) => Promise<void>): Promise<void> {
    const context: BrowserContext = await browser.newContext({ viewport: { width: 800, height: 900 } });
    const seen: Seen[] = [];
    const documents: { url: string; status: number; headers: Record<string, string> }[] = [];
    try {
      const csp = await watchCsp(context);
      context.on('response', (response) => {
        if (response.request().resourceType() === 'document' && new URL(response.url()).origin === new URL(url).origin) {
          documents.push({ url: response.url(), status: response.status(), headers: response.headers() });
        }
      });
      await context.exposeBinding('recordDocument', (source, text: string) => {
        seen.push({ url: source.frame.url(), text });
      });
      await context.addInitScript(() => {
        document.addEventListener('DOMContentLoaded', () => {
          (window as unknown as { recordDocument(text: string): void }).recordDocument(document.body.textContent);
        });
      });
      const page = await context.newPage();
      page.setDefaultTimeout(WAIT_MS);
      page.setDefaultNavigationTimeout(WAIT_MS);
      await page.goto(url);
      await visit(page, seen);
      for (const answer of documents) {
        if (answer.status === 303) expect(answer.headers.location, answer.url).toBeDefined();
        else expectSecurityHeaders(answer.headers);
      }
      expect(documents.length).toBeGreaterThan(0);
      expect(csp.violations).toEqual([]);
    } finally {
      await context.close();
    }
  }

  /** The last outcome page the browser showed before the shop: what happened, and a way back. */
  function outcomePage(seen: Seen[], paymentUrl: string): string {
    const page = seen.findLast((entry) => entry.url.startsWith(paymentUrl) && /return to the shop/i.test(entry.text));
    expect(page, `an outcome page among ${JSON.stringify(seen.map((entry) => entry.url))}`).toBeDefined();
    return page?.text ?? '';
  }

  /** The documents of the payment page the browser loaded: only the form when the answer was a 303 to the shop. */
  function pagesOf(seen: Seen[], paymentUrl: string): Seen[] {
    return seen.filter((entry) => entry.url.startsWith(paymentUrl));
  }

  /** On an outcome page: "Return to the shop" has the focus, and Enter on it goes to urlKo. */
  async function returnsByKeyboard(page: Page): Promise<void> {
    const back = page.getByRole('link', { name: 'Return to the shop' });
    await back.waitFor();
    expect(await back.evaluate((node) => node === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
  }

  /** A sandbox of its own whose time moves only when told, for the 300 s page expiry. */
  async function withManualClock(run: (clock: ManualClock, payments: PaymentClient) => Promise<void>): Promise<void> {
    const clock = manualClock(Date.now());
    const timed = createSandbox({ posDelayMs: 0, clock });
    await timed.listen();
    try {
      await run(clock, new PaymentClient({ apiKey: timed.keys.test, webcode: timed.webcode, baseUrl: timed.baseUrl }));
    } finally {
      await timed.close();
    }
  }

  async function fillCard(page: Page, card: TestCard, holderName: string, override: Partial<TestCard> = {}): Promise<void> {
    const values = { ...card, ...override };
    await page.getByLabel('Card number').fill(values.number);
    const expiry = page.getByRole('group', { name: 'Expiry date' });
    await expiry.getByLabel(/month/i).fill(values.expiryMonth);
    await expiry.getByLabel(/year/i).fill(values.expiryYear);
    await page.getByLabel(/security code|cvc/i).fill(values.cvc);
    await page.getByLabel('Cardholder name').fill(holderName);
  }

  const payButton = (page: Page) => page.getByRole('button', { name: /^Pay\b/ });
  const cancelButton = (page: Page) => page.getByRole('button', { name: /cancel/i });

  /** Waits until the browser is on `target` (origin and path; the query may carry `data`). */
  async function arrivesAt(page: Page, target: string): Promise<URL> {
    const wanted = new URL(target);
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      try {
        await page.waitForURL((url) => url.origin === wanted.origin && url.pathname === wanted.pathname, {
          timeout: Math.max(1, deadline - Date.now()),
        });
        return new URL(page.url());
      } catch (error) {
        // On a loaded machine the outcome page's timed return can start while the customer's own
        // click navigates, and Chromium aborts one of the two: wait on for the one that goes on
        // (the shop's hit count, checked by the callers, still proves it arrived once).
        if (!String(error).includes('ERR_ABORTED') || Date.now() >= deadline) throw error;
      }
    }
  }

  /** After a final result the browser lands on urlKo, with no `data`, exactly once. */
  async function endsOnUrlKo(page: Page, order: Checkout): Promise<void> {
    const landed = await arrivesAt(page, order.urlKo);
    expect(landed.searchParams.has('data')).toBe(false);
    expect(shop.hitsOn(order.koPath)).toHaveLength(1);
    expect(shop.hitsOn(order.okPath)).toHaveLength(0);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your payment was not completed');
  }

  // Some tests wait for the outcome page's 5 s return, so they run side by side: each has its own
  // browser context, session and shop paths (and its own sandbox when it moves the clock).
  describe('as a customer', { concurrent: true, timeout: 30_000 }, () => {
    it('is an accessible card form: labelled inputs with autocomplete tokens, pay and cancel buttons, and a countdown', async () => {
      const order = await checkout();
      expect(new URL(order.paymentUrl).pathname).toMatch(/^\/pay-external-test\/[^/]+$/);
      await onPage(order.paymentUrl, async (page) => {
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('25.99 EUR');
        // Each field is found by its label text, as assistive technology announces it.
        const expiry = page.getByRole('group', { name: 'Expiry date' });
        const fields = {
          'cc-number': page.getByLabel('Card number'),
          'cc-exp-month': expiry.getByLabel(/month/i),
          'cc-exp-year': expiry.getByLabel(/year/i),
          'cc-csc': page.getByLabel(/security code|cvc/i),
          'cc-name': page.getByLabel('Cardholder name'),
        };
        for (const [token, field] of Object.entries(fields)) {
          expect(await field.count(), token).toBe(1);
          expect(await field.getAttribute('autocomplete'), token).toBe(token);
          expect(await field.isEditable(), token).toBe(true);
        }
        // Every input of the form has a <label> with text, and there is no other field.
        const inputs = await page.locator('form input:not([type=hidden])').evaluateAll((nodes) =>
          nodes.map((node) => {
            const input = node as HTMLInputElement;
            return { name: input.name, labels: [...(input.labels ?? [])].map((label) => label.textContent?.trim() ?? '') };
          }),
        );
        expect(inputs.map((input) => input.name).sort()).toEqual(['cardNumber', 'cvc', 'expiryMonth', 'expiryYear', 'holderName']);
        for (const input of inputs) {
          expect(input.labels.length, input.name).toBeGreaterThan(0);
          expect(
            input.labels.every((text) => text.length > 0),
            input.name,
          ).toBe(true);
        }
        expect(await payButton(page).textContent()).toContain('25.99 EUR');
        expect(await payButton(page).isEnabled()).toBe(true);
        expect(await cancelButton(page).isEnabled()).toBe(true);
        // The countdown of the 300 seconds the customer has, exposed as a timer.
        const timer = page.getByRole('timer');
        expect(await timer.isVisible()).toBe(true);
        expect(await timer.textContent()).toMatch(/^(5:00|4:5\d)$/);
        expect(await page.getByText(/time left/i).isVisible()).toBe(true);

        await page.screenshot({ path: SCREENSHOT, fullPage: true });
      });
      expect((await client.sessions.retrieve(order.sessionId)).status).toBe('pending');
    });

    it('a Visa card paid by a customer lands on urlOk with data signed by the Test client secret', async () => {
      const order = await checkout();
      let token = '';
      await onPage(order.paymentUrl, async (page, seen) => {
        await fillCard(page, TEST_CARDS.visa, TEST_SUCCESS_CARDHOLDER);
        await payButton(page).click();
        const landed = await arrivesAt(page, order.urlOk);
        // A 303 straight to the shop: the browser showed no page between the form and urlOk.
        expect(pagesOf(seen, order.paymentUrl)).toHaveLength(1);
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your order');
        token = landed.searchParams.get('data') ?? '';
      });
      expect(token).not.toBe('');
      expect(shop.hitsOn(order.okPath).map((hit) => hit.searchParams.get('data'))).toEqual([token]);
      expect(shop.hitsOn(order.koPath)).toHaveLength(0);

      const session = await client.sessions.retrieve(order.sessionId);
      expect(session.status).toBe('completed');
      expect(session.paymentReference).toMatch(new RegExp(`^${sandbox.webcode}-PXTT-\\d+$`));
      expect(session.paymentStatus).toBe('AUTHORISED');

      const data = await decodeRedirectData(token, sandbox.clientSecrets.test);
      expect(data.paymentReference).toBe(session.paymentReference);
      expect(data.sessionId).toBe(order.sessionId);
      expect(data.amount).toBe(AMOUNT.value);
      expect(data.currency).toBe(AMOUNT.currency);
      expect(data.customReference).toBe(order.customReference);
      // Signed with the Test secret: the Live secret does not verify it.
      await expect(decodeRedirectData(token, sandbox.clientSecrets.live)).rejects.toBeInstanceOf(RedirectDataError);
    });

    // The names are compared case-insensitively: two are typed in lower or mixed case.
    const typed: Record<TestCardholderName, string> = {
      DECLINED: 'declined',
      CARD_EXPIRED: 'Card_Expired',
      INVALID_CARD: 'INVALID_CARD',
      NOT_ENOUGH_BALANCE: 'NOT_ENOUGH_BALANCE',
      CVC_DECLINED: 'CVC_DECLINED',
      FRAUD: 'FRAUD',
      ERROR: 'ERROR',
    };
    const declines = (Object.keys(TEST_CARDHOLDER_NAMES) as TestCardholderName[]).map((name) => ({ name, typed: typed[name] }));

    it.each(declines)(
      'cardholder name $typed fails the payment: an outcome page, then urlKo without data, session failed',
      async ({ name, typed: holderName }) => {
        const order = await checkout();
        await onPage(order.paymentUrl, async (page, seen) => {
          await fillCard(page, TEST_CARDS.visa, holderName);
          await payButton(page).click();
          const title = name === 'ERROR' ? 'Payment could not be processed' : 'Payment declined';
          await page.getByRole('heading', { level: 1, name: title }).waitFor();
          expect(await page.title()).toBe(title);
          await returnsByKeyboard(page);
          await endsOnUrlKo(page, order);
          const text = outcomePage(seen, order.paymentUrl);
          expect(text).toContain(title);
          expect(text).toMatch(/no money was taken/i);
          // "Declined" at most once (the title), never the reference's "declined, ..." wording.
          expect(text.match(/declin/gi)?.length ?? 0).toBeLessThanOrEqual(name === 'ERROR' ? 0 : 1);
          expect(text).not.toContain(TEST_CARDHOLDER_NAMES[name].description);
        });
        const session = await client.sessions.retrieve(order.sessionId);
        expect(session.status).toBe('failed');
        expect(session.paymentReference ?? undefined).toBeUndefined();
      },
    );

    const invalidForms = [
      {
        problem: 'a card number failing the Luhn check',
        card: TEST_CARDS.visa,
        override: { number: '4111111111111112' },
        name: TEST_SUCCESS_CARDHOLDER,
        field: 'Card number',
        message: /not valid/i,
        marked: 1,
      },
      {
        problem: 'a 3-digit CVC on an Amex card',
        card: TEST_CARDS.amex,
        override: { cvc: '123' },
        name: TEST_SUCCESS_CARDHOLDER,
        field: /security code|cvc/i,
        message: /4-digit/i,
        marked: 1,
      },
      {
        problem: 'an expired date',
        card: TEST_CARDS.mastercard,
        override: { expiryMonth: '01', expiryYear: '20' },
        name: TEST_SUCCESS_CARDHOLDER,
        field: /month/i,
        message: /expired/i,
        marked: 2,
      },
      {
        problem: 'a 2-letter cardholder name',
        card: TEST_CARDS.visa,
        override: {},
        name: 'Jo',
        field: 'Cardholder name',
        message: /at least 3/i,
        marked: 1,
      },
    ];

    it.each(invalidForms)(
      '$problem keeps the customer on the page with the error shown',
      async ({ card, override, name, field, message, marked }) => {
        const order = await checkout();
        await onPage(order.paymentUrl, async (page) => {
          await fillCard(page, card, name, override);
          await payButton(page).click();

          // The form comes back with an error summary (role=alert, focused) and the field's own message.
          const summary = page.getByRole('alert');
          expect(await summary.textContent()).toMatch(message);
          expect(await summary.evaluate((node) => node === document.activeElement)).toBe(true);
          expect(new URL(page.url()).pathname).toBe(new URL(order.paymentUrl).pathname);

          const input = page.getByLabel(field);
          expect(await input.getAttribute('aria-invalid')).toBe('true');
          const describedBy = await input.getAttribute('aria-describedby');
          expect(describedBy).toBeTruthy();
          expect(await page.locator(`[id="${describedBy}"]`).textContent()).toMatch(message);
          // Only the wrong field is marked (month and year together for the expiry date).
          expect(await page.locator('[aria-invalid="true"]').count()).toBe(marked);

          // What the customer typed is kept, except the security code.
          expect(await page.getByLabel('Card number').inputValue()).toBe(override.number ?? card.number);
          expect(await page.getByLabel('Cardholder name').inputValue()).toBe(name);
          expect(await page.getByLabel(/security code|cvc/i).inputValue()).toBe('');
        });
        expect((await client.sessions.retrieve(order.sessionId)).status).toBe('pending');
        expect(shop.hitsOn(order.okPath)).toHaveLength(0);
        expect(shop.hitsOn(order.koPath)).toHaveLength(0);
      },
    );

    it('after validation errors the customer corrects the fields and pays with an Amex card (4-digit CVC)', async () => {
      const order = await checkout();
      let token = '';
      await onPage(order.paymentUrl, async (page) => {
        await fillCard(page, TEST_CARDS.amex, 'Jo', { cvc: '123' });
        await payButton(page).click();
        const summary = await page.getByRole('alert').textContent();
        expect(summary).toMatch(/these 2 fields/i);
        expect(summary).toMatch(/at least 3/i);
        expect(summary).toMatch(/4-digit/i);
        await page.getByLabel('Cardholder name').fill(TEST_SUCCESS_CARDHOLDER);
        await page.getByLabel(/security code|cvc/i).fill(TEST_CARDS.amex.cvc);
        await payButton(page).click();
        token = (await arrivesAt(page, order.urlOk)).searchParams.get('data') ?? '';
      });
      const session = await client.sessions.retrieve(order.sessionId);
      expect(session.status).toBe('completed');
      expect((await decodeRedirectData(token, sandbox.clientSecrets.test)).paymentReference).toBe(session.paymentReference);
    });

    it('cancel sends the customer to urlKo without data (a 303) and cancels the session', async () => {
      const order = await checkout();
      await onPage(order.paymentUrl, async (page, seen) => {
        await cancelButton(page).click();
        await endsOnUrlKo(page, order);
        expect(pagesOf(seen, order.paymentUrl)).toHaveLength(1);
      });
      expect((await client.sessions.retrieve(order.sessionId)).status).toBe('cancelled');
    });

    it('the Live page /pay-external/<token> takes a payment and signs data with the Live client secret', async () => {
      const live = new PaymentClient({
        apiKey: sandbox.keys.live,
        webcode: sandbox.webcode,
        baseUrl: sandbox.baseUrl,
        environment: 'live',
      });
      const order = await checkout(live);
      expect(new URL(order.paymentUrl).pathname).toMatch(/^\/pay-external\/[^/]+$/);
      let token = '';
      await onPage(order.paymentUrl, async (page) => {
        await fillCard(page, TEST_CARDS.mastercard, TEST_SUCCESS_CARDHOLDER);
        await payButton(page).click();
        token = (await arrivesAt(page, order.urlOk)).searchParams.get('data') ?? '';
      });
      const session = await live.sessions.retrieve(order.sessionId);
      expect(session.status).toBe('completed');
      const data = await decodeRedirectData(token, sandbox.clientSecrets.live);
      expect(data.paymentReference).toBe(session.paymentReference);
      expect(data.amount).toBe(AMOUNT.value);
      await expect(decodeRedirectData(token, sandbox.clientSecrets.test)).rejects.toBeInstanceOf(RedirectDataError);
    });

    it('expiry: the countdown follows the sandbox clock, and a submit after 300 s says so, then lands on urlKo with the session expired', async () => {
      await withManualClock(async (clock, payments) => {
        const order = await checkout(payments);
        await onPage(order.paymentUrl, async (page, seen) => {
          expect(await page.getByRole('timer').textContent()).toMatch(/^(5:00|4:5\d)$/);

          await clock.advance(120_000);
          await page.reload();
          expect(await page.getByRole('timer').textContent()).toMatch(/^(3:00|2:5\d)$/);
          expect((await payments.sessions.retrieve(order.sessionId)).status).toBe('pending');

          await clock.advance(180_000);
          await fillCard(page, TEST_CARDS.visa, TEST_SUCCESS_CARDHOLDER);
          await payButton(page).click();
          await page.getByRole('heading', { level: 1, name: 'Time is up' }).waitFor();
          await returnsByKeyboard(page);
          await endsOnUrlKo(page, order);
          expect(outcomePage(seen, order.paymentUrl)).toMatch(/5 minutes to pay have passed/);
        });
        const session = await payments.sessions.retrieve(order.sessionId);
        expect(session.status).toBe('expired');
        expect(session.paymentReference ?? undefined).toBeUndefined();
      });
    });

    it('expiry: reloading the page after 300 s shows "Time is up", whose script returns to urlKo by itself after 5 s; a session whose page was never opened does not expire', async () => {
      await withManualClock(async (clock, payments) => {
        const opened = await checkout(payments);
        const untouched = await checkout(payments);
        await onPage(opened.paymentUrl, async (page, seen) => {
          expect(await page.getByRole('timer').isVisible()).toBe(true);
          await clock.advance(300_000);
          // The page's timers on a paused clock that only the test moves: the 5 s return is checked
          // not to fire early however slow the machine is, and is passed without waiting 5 s.
          await page.clock.install();
          await page.clock.pauseAt(Date.now() + 1_000);
          await page.reload();
          await page.getByRole('heading', { level: 1, name: 'Time is up' }).waitFor();
          expect(await page.getByRole('status').textContent()).toBe('You will be taken back to the shop in 5 seconds.');
          await page.clock.runFor(4_000);
          expect(await page.evaluate(() => location.href)).toBe(opened.paymentUrl);
          expect(shop.hitsOn(opened.koPath)).toHaveLength(0);
          // No key pressed: the page's own (nonce'd) script goes back to the shop.
          await page.clock.runFor(1_500);
          await endsOnUrlKo(page, opened);
          expect(outcomePage(seen, opened.paymentUrl)).toMatch(/time is up/i);
        });
        expect((await payments.sessions.retrieve(opened.sessionId)).status).toBe('expired');
        expect((await payments.sessions.retrieve(untouched.sessionId)).status).toBe('pending');
      });
    });
  });
});
