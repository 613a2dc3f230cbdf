import { writeFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRedirectData, PaymentClient } from '../../src/index.js';
import { createSandbox, manualClock, type Sandbox } from '../../src/sandbox/index.js';
import { TEST_CARDHOLDER_NAMES, TEST_CARDS, TEST_SUCCESS_CARDHOLDER } from '../../src/testing/index.js';
import {
  artifactPath,
  type CspWatch,
  describeInBrowser,
  expectSecurityHeaders,
  launchChromium,
  preloadAxe,
  runAxe,
  type ShopReceiver,
  screenshot,
  seriousViolations,
  startShop,
  watchCsp,
} from '../support/browser.js';

/**
 * The hosted payment page against the standards of issue 16 (item 3), in Debian's headless
 * Chromium: axe-core finds no violation of impact serious or critical in any state of the page, in
 * English and Spanish, at 1280×800 and 390×844 (screenshots and axe reports of each go to the test
 * artefacts, `$ARTIFACTS_DIR/hosted-page/`); at 390 px the buttons keep to one line and the card
 * keeps a margin; every control works from the keyboard alone; Pay is disabled while the form is
 * sent; a one-digit month pays; the page speaks the session's `shopperLocale`; every HTML answer
 * carries the security headers and the page works under its own CSP, with no violation reported.
 */

const WAIT_MS = 10_000;
const AMOUNT = { value: 2599, currency: 'EUR' } as const;
const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;
const LANGUAGES = { en: 'en-GB', es: 'es-ES' } as const;
type Language = keyof typeof LANGUAGES;
const STATES = ['form', 'form-errors', 'declined', 'error', 'expired', 'cancelled', 'not-found'] as const;
type State = (typeof STATES)[number];

/**
 * Waits until `check` holds (at most 5 s). `expect.poll` cannot be used here: it needs the current
 * test, which tests running concurrently do not give it.
 */
async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describeInBrowser('hosted payment page: accessibility, layout, keyboard, languages and security headers', () => {
  let browser: Browser;
  let shop: ShopReceiver;
  let sandbox: Sandbox;
  let client: PaymentClient;
  let counter = 0;
  const extraSandboxes: Sandbox[] = [];

  beforeAll(async () => {
    [browser, shop] = await Promise.all([launchChromium(), startShop()]);
    sandbox = createSandbox({ posDelayMs: 0 });
    await sandbox.listen();
    client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl: sandbox.baseUrl, maxRetries: 0 });
  }, 20_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all([shop?.close(), sandbox?.close(), ...extraSandboxes.map((extra) => extra.close())]);
  });

  interface Checkout {
    sessionId: string;
    paymentUrl: string;
    urlOk: string;
    urlKo: string;
    okPath: string;
    koPath: string;
  }

  /** A session whose return URLs point at the shop; `shopperLocale` as given (none: the service's default, es-ES). */
  async function checkout(shopperLocale: string | undefined, payments: PaymentClient = client): Promise<Checkout> {
    const tag = `std-${++counter}`;
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
      ...(shopperLocale === undefined ? {} : { shopperLocale }),
    });
    return { sessionId: session.sessionId, paymentUrl: session.paymentUrl, urlOk, urlKo, okPath, koPath };
  }

  /** A sandbox of its own on a manual clock, for the 300 s expiry (closed after the suite). */
  async function timedSandbox(): Promise<{ payments: PaymentClient; advance(ms: number): Promise<void> }> {
    const clock = manualClock(Date.now());
    const timed = createSandbox({ posDelayMs: 0, clock });
    extraSandboxes.push(timed);
    await timed.listen();
    return {
      payments: new PaymentClient({ apiKey: timed.keys.test, webcode: timed.webcode, baseUrl: timed.baseUrl, maxRetries: 0 }),
      advance: (ms) => clock.advance(ms),
    };
  }

  interface ContextOptions {
    viewport?: { width: number; height: number };
    /** For axe's injected script only: the page's CSP is checked everywhere else. */
    bypassCSP?: boolean;
    javaScriptEnabled?: boolean;
    /** The browser's language (Accept-Language), for the page that has no session. */
    locale?: string;
    /** The shop answers 204, so the browser stays on an outcome page whatever its script does. */
    stayOnPage?: boolean;
  }

  /**
   * Runs `visit` in a fresh browser context, closed afterwards. Unless the CSP is bypassed, every
   * CSP violation is recorded, and there must be none.
   */
  async function inBrowser(options: ContextOptions, visit: (page: Page, context: BrowserContext, csp: CspWatch) => Promise<void>) {
    const context = await browser.newContext({
      viewport: options.viewport ?? { width: 1280, height: 800 },
      bypassCSP: options.bypassCSP ?? false,
      javaScriptEnabled: options.javaScriptEnabled ?? true,
      locale: options.locale ?? 'en-GB',
    });
    try {
      if (options.bypassCSP) await preloadAxe(context);
      const csp = await watchCsp(context);
      if (options.stayOnPage) await context.route(`${shop.baseUrl}/**`, (route) => route.fulfill({ status: 204 }));
      const page = await context.newPage();
      page.setDefaultTimeout(WAIT_MS);
      page.setDefaultNavigationTimeout(WAIT_MS);
      await visit(page, context, csp);
      if (!options.bypassCSP) expect(csp.violations).toEqual([]);
    } finally {
      await context.close();
    }
  }

  /** Fills the card form by the fields' ids (the same in every language). */
  async function fillById(page: Page, holderName: string, override: Partial<Record<'number' | 'month' | 'year' | 'cvc', string>> = {}) {
    const card = TEST_CARDS.visa;
    await page.locator('#cardNumber').fill(override.number ?? card.number);
    await page.locator('#expiryMonth').fill(override.month ?? card.expiryMonth);
    await page.locator('#expiryYear').fill(override.year ?? card.expiryYear);
    await page.locator('#cvc').fill(override.cvc ?? card.cvc);
    await page.locator('#holderName').fill(holderName);
  }

  const pay = (page: Page) => page.locator('button[value="pay"]');

  /** Waits until the browser is on `target` (origin and path). */
  async function arrivesAt(page: Page, target: string): Promise<URL> {
    const wanted = new URL(target);
    await page.waitForURL((url) => url.origin === wanted.origin && url.pathname === wanted.pathname, { timeout: WAIT_MS });
    return new URL(page.url());
  }

  /** The element that has the focus: its id, or `data-return` for the shop link. */
  const focused = (page: Page) =>
    page.evaluate(() => {
      const element = document.activeElement;
      if (!element || element === document.body) return 'body';
      if (element.hasAttribute('data-return')) return 'return';
      return element.id || (element as HTMLButtonElement).value || element.tagName;
    });

  /** Takes the page to `state`, in `language`. */
  async function reach(page: Page, state: State, language: Language): Promise<void> {
    const locale = LANGUAGES[language];
    if (state === 'not-found') {
      await page.goto(`${sandbox.baseUrl}/pay-external-test/no-such-payment`);
      return;
    }
    if (state === 'expired') {
      const timed = await timedSandbox();
      const order = await checkout(locale, timed.payments);
      await page.goto(order.paymentUrl);
      await timed.advance(300_000);
      await page.reload();
      await page.locator('[data-return]').waitFor();
      return;
    }
    const order = await checkout(locale);
    if (state === 'cancelled') {
      // Cancelled earlier (a 303 to urlKo); the customer opens the payment link again.
      const cancelled = await fetch(order.paymentUrl, {
        method: 'POST',
        body: new URLSearchParams({ action: 'cancel' }),
        redirect: 'manual',
      });
      expect(cancelled.status).toBe(303);
      await page.goto(order.paymentUrl);
      await page.locator('[data-return]').waitFor();
      return;
    }
    await page.goto(order.paymentUrl);
    if (state === 'form') return;
    if (state === 'form-errors') {
      await fillById(page, 'Jo', { number: '4111111111111112', month: '13' });
      await pay(page).click();
      await page.getByRole('alert').waitFor();
      return;
    }
    await fillById(page, state === 'error' ? 'ERROR' : 'DECLINED');
    await pay(page).click();
    await page.locator('[data-return]').waitFor();
  }

  /**
   * The layout at the context's width: the card (main) keeps a margin from both edges, nothing
   * scrolls sideways, and every button (and the link styled as one) is a single line high.
   */
  async function checkLayout(page: Page, width: number): Promise<void> {
    const layout = await page.evaluate(() => {
      const main = document.querySelector('main')?.getBoundingClientRect();
      const buttons = [...document.querySelectorAll<HTMLElement>('button, a.button')]
        .filter((node) => node.offsetParent !== null)
        .map((node) => {
          const style = getComputedStyle(node);
          const box = node.getBoundingClientRect();
          const content =
            box.height -
            Number.parseFloat(style.paddingTop) -
            Number.parseFloat(style.paddingBottom) -
            Number.parseFloat(style.borderTopWidth) -
            Number.parseFloat(style.borderBottomWidth);
          return { text: node.textContent ?? '', content, lineHeight: Number.parseFloat(style.lineHeight), whiteSpace: style.whiteSpace };
        });
      return {
        left: main?.left ?? -1,
        right: main?.right ?? Number.POSITIVE_INFINITY,
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
        buttons,
      };
    });
    expect(layout.left).toBeGreaterThanOrEqual(8);
    expect(width - layout.right).toBeGreaterThanOrEqual(8);
    expect(layout.scrollWidth).toBeLessThanOrEqual(layout.clientWidth);
    for (const button of layout.buttons) {
      expect(button.lineHeight, button.text).toBeGreaterThan(0);
      // One line: the content box is the line height (a wrapped label would be two).
      expect(
        Math.abs(button.content - button.lineHeight),
        `${button.text}: ${button.content}px of content for a ${button.lineHeight}px line`,
      ).toBeLessThan(2);
      expect(button.whiteSpace).toBe('nowrap');
    }
  }

  describe('axe-core, screenshots and layout in every state', { concurrent: true, timeout: 40_000 }, () => {
    const cases = STATES.flatMap((state) => (Object.keys(LANGUAGES) as Language[]).map((language) => ({ state, language })));

    // One state reached once per language, then looked at in each size (axe runs again after the resize).
    it.each(cases)(
      '$state ($language) at 1280×800 and 390×844: no serious or critical axe violation, one-line buttons, a margin',
      async ({ state, language }) => {
        await inBrowser({ viewport: SIZES[0], bypassCSP: true, locale: LANGUAGES[language], stayOnPage: true }, async (page) => {
          await reach(page, state, language);
          // With a session, its shopperLocale; without (not-found), the browser's Accept-Language.
          expect(await page.locator('html').getAttribute('lang')).toBe(LANGUAGES[language]);
          expect(await page.locator('meta[http-equiv]').count()).toBe(0);
          for (const { width, height } of SIZES) {
            await page.setViewportSize({ width, height });
            const name = `${state}-${language}-${width}x${height}`;
            await screenshot(page, 'hosted-page', `${name}.jpg`);
            const report = await runAxe(page);
            writeFileSync(artifactPath('hosted-page', `axe-${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
            expect(seriousViolations(report), name).toEqual([]);
            expect(report.passes).toBeGreaterThan(10);
            await checkLayout(page, width);
          }
        });
      },
    );
  });

  describe('as a customer', { concurrent: true, timeout: 40_000 }, () => {
    it('at 390 px the Pay button is one line high and the card keeps a margin, in English and Spanish', async () => {
      for (const language of Object.keys(LANGUAGES) as Language[]) {
        await inBrowser({ viewport: { width: 390, height: 844 } }, async (page) => {
          await reach(page, 'form', language);
          const box = await pay(page).boundingBox();
          const lineHeight = await pay(page).evaluate((node) => Number.parseFloat(getComputedStyle(node).lineHeight));
          const padding = await pay(page).evaluate((node) => {
            const style = getComputedStyle(node);
            return Number.parseFloat(style.paddingTop) + Number.parseFloat(style.paddingBottom);
          });
          expect(box).not.toBeNull();
          expect(Math.abs((box?.height ?? 0) - padding - lineHeight)).toBeLessThan(2);
          const main = await page.locator('main').boundingBox();
          expect(main?.x ?? 0).toBeGreaterThan(0);
          expect(390 - ((main?.x ?? 0) + (main?.width ?? 390))).toBeGreaterThan(0);
        });
      }
    });

    it('pays with the keyboard alone: Tab through every field in order, Enter on Pay, lands on urlOk with data', async () => {
      const order = await checkout('en-GB');
      await inBrowser({}, async (page) => {
        await page.goto(order.paymentUrl);
        const card = TEST_CARDS.visa;
        const typed: [string, string][] = [
          ['cardNumber', card.number],
          ['expiryMonth', card.expiryMonth],
          ['expiryYear', card.expiryYear],
          ['cvc', card.cvc],
          ['holderName', TEST_SUCCESS_CARDHOLDER],
        ];
        for (const [id, text] of typed) {
          await page.keyboard.press('Tab');
          expect(await focused(page)).toBe(id);
          await page.keyboard.type(text);
        }
        await page.keyboard.press('Tab');
        expect(await focused(page)).toBe('pay');
        expect(await pay(page).evaluate((node) => node.matches(':focus-visible'))).toBe(true);
        await page.keyboard.press('Tab');
        expect(await focused(page)).toBe('cancel');
        await page.keyboard.press('Shift+Tab');
        expect(await focused(page)).toBe('pay');
        await page.keyboard.press('Enter');
        const landed = await arrivesAt(page, order.urlOk);
        const data = await decodeRedirectData(landed.searchParams.get('data') ?? '', sandbox.clientSecrets.test);
        expect(data.sessionId).toBe(order.sessionId);
      });
      expect((await client.sessions.retrieve(order.sessionId)).status).toBe('completed');
    });

    it('cancels with the keyboard alone: Space on "Cancel payment" lands on urlKo', async () => {
      const order = await checkout('en-GB');
      await inBrowser({}, async (page) => {
        await page.goto(order.paymentUrl);
        for (let index = 0; index < 7; index++) await page.keyboard.press('Tab');
        expect(await focused(page)).toBe('cancel');
        await page.keyboard.press('Space');
        const landed = await arrivesAt(page, order.urlKo);
        expect(landed.searchParams.has('data')).toBe(false);
      });
      expect((await client.sessions.retrieve(order.sessionId)).status).toBe('cancelled');
    });

    it('an outcome page by keyboard: "Return to the shop" has the focus, Space on "Stay on this page" stops the return, Enter goes back', async () => {
      const order = await checkout('en-GB');
      await inBrowser({}, async (page) => {
        // The page's timers on a paused clock that only the test moves: the 5 s return cannot fire
        // while the keys are pressed, however slow the machine, and is passed without waiting 5 s.
        await page.clock.install();
        await page.clock.pauseAt(Date.now() + 1_000);
        await page.goto(order.paymentUrl);
        await fillById(page, 'DECLINED');
        await pay(page).press('Enter');
        const back = page.getByRole('link', { name: 'Return to the shop' });
        await back.waitFor();
        expect(await focused(page)).toBe('return');
        expect(await back.evaluate((node) => node.matches(':focus-visible'))).toBe(true);
        // The link announces what happened and when the page moves on.
        expect(await back.getAttribute('aria-describedby')).toBe('outcome-message return-notice');
        expect(await page.getByRole('status').textContent()).toBe('You will be taken back to the shop in 5 seconds.');
        await page.keyboard.press('Tab');
        expect(await focused(page)).toBe('stay');
        await page.keyboard.press('Space');
        expect(await focused(page)).toBe('return');
        expect(await page.getByRole('status').textContent()).toMatch(/automatic return stopped/i);
        expect(await page.getByRole('button', { name: 'Stay on this page' }).isVisible()).toBe(false);
        // Past the 5 s, the customer is still here: the return's timer was cleared.
        await page.clock.runFor(6_000);
        expect(await page.evaluate(() => location.href)).toBe(order.paymentUrl);
        expect(shop.hitsOn(order.koPath)).toHaveLength(0);
        await page.keyboard.press('Enter');
        await arrivesAt(page, order.urlKo);
        // Once: by Enter, not also by a timed return that was only late.
        expect(shop.hitsOn(order.koPath)).toHaveLength(1);
      });
    });

    it('an outcome page by keyboard: Space on "Return to the shop" goes back too', async () => {
      const order = await checkout('en-GB');
      await inBrowser({}, async (page) => {
        await page.goto(order.paymentUrl);
        await fillById(page, 'ERROR');
        await pay(page).press('Enter');
        await page.locator('[data-return]').waitFor();
        expect(await focused(page)).toBe('return');
        await page.keyboard.press('Space');
        await arrivesAt(page, order.urlKo);
      });
    });

    it('the error summary by keyboard: it has the focus, Tab reaches its links, Enter on one moves to the field', async () => {
      const order = await checkout('en-GB');
      await inBrowser({}, async (page) => {
        await page.goto(order.paymentUrl);
        await fillById(page, 'Jo');
        await pay(page).press('Enter');
        await page.getByRole('alert').waitFor();
        expect(await focused(page)).toBe('summary');
        await page.keyboard.press('Tab');
        expect(await page.evaluate(() => document.activeElement?.getAttribute('href'))).toBe('#holderName');
        await page.keyboard.press('Enter');
        await waitUntil('the cardholder name has the focus', async () => (await focused(page)) === 'holderName');
        await page.keyboard.press('ControlOrMeta+A');
        await page.keyboard.type(TEST_SUCCESS_CARDHOLDER);
        await page.keyboard.press('Shift+Tab');
        expect(await focused(page)).toBe('cvc');
        await page.keyboard.type(TEST_CARDS.visa.cvc);
        await page.keyboard.press('Tab');
        await page.keyboard.press('Tab');
        expect(await focused(page)).toBe('pay');
        await page.keyboard.press('Enter');
        await arrivesAt(page, order.urlOk);
      });
    });

    it('Pay is disabled while the form is sent, a second submit is not sent, and the payment completes once', async () => {
      const order = await checkout('en-GB');
      await inBrowser({}, async (page) => {
        // The POST is held until the page's state has been read. While a navigation is pending
        // Playwright cannot evaluate in the page, so the page reports its state itself.
        let release: () => void = () => undefined;
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        let posts = 0;
        await page.route(order.paymentUrl, async (route) => {
          if (route.request().method() === 'POST') {
            posts++;
            await held;
          }
          await route.continue();
        });
        const reports: Record<string, unknown>[] = [];
        await page.exposeBinding('reportSending', (_source, report: Record<string, unknown>) => {
          reports.push(report);
        });
        await page.goto(order.paymentUrl);
        await fillById(page, TEST_SUCCESS_CARDHOLDER);
        expect(await pay(page).isEnabled()).toBe(true);
        await page.evaluate(() => {
          const form = document.getElementById('card-form') as HTMLFormElement;
          const button = (value: string) => form.querySelector(`button[value="${value}"]`) as HTMLButtonElement;
          const report = (window as unknown as { reportSending(report: Record<string, unknown>): void }).reportSending;
          let submits = 0;
          form.addEventListener('submit', (event) => {
            submits++;
            if (submits > 1) {
              report({ submit: submits, prevented: event.defaultPrevented });
              return;
            }
            setTimeout(() => {
              report({
                pay: button('pay').disabled,
                cancel: button('cancel').disabled,
                busy: form.getAttribute('aria-busy'),
                status: document.getElementById('progress')?.textContent,
              });
              // A second click, and another submit (Enter in a field, say), while the first is sent.
              button('pay').click();
              form.requestSubmit();
            }, 50);
          });
        });
        // The mouse, not locator.click(): that would wait for the held navigation to commit.
        const box = await pay(page).boundingBox();
        await page.mouse.click((box?.x ?? 0) + (box?.width ?? 0) / 2, (box?.y ?? 0) + (box?.height ?? 0) / 2);
        await waitUntil('the page reported its state twice', () => reports.length >= 2);
        expect(reports).toEqual([
          { pay: true, cancel: true, busy: 'true', status: 'Processing the payment…' },
          // The disabled button's click submitted nothing; the page cancelled the other submit.
          { submit: 2, prevented: true },
        ]);
        release();
        await arrivesAt(page, order.urlOk);
        expect(posts).toBe(1);
      });
      const session = await client.sessions.retrieve(order.sessionId);
      expect(session.status).toBe('completed');
      expect(session.attempts).toHaveLength(1);
    });

    it('works without JavaScript: the form pays (303 to urlOk), and an outcome page keeps its link back', async () => {
      const paid = await checkout('en-GB');
      const declined = await checkout('en-GB');
      await inBrowser({ javaScriptEnabled: false }, async (page) => {
        await page.goto(paid.paymentUrl);
        await fillById(page, TEST_SUCCESS_CARDHOLDER);
        await pay(page).click();
        expect((await arrivesAt(page, paid.urlOk)).searchParams.has('data')).toBe(true);

        await page.goto(declined.paymentUrl);
        await fillById(page, 'DECLINED');
        await pay(page).click();
        const back = page.getByRole('link', { name: 'Return to the shop' });
        await back.waitFor();
        expect(await page.getByRole('status').textContent()).toBe('Use the button to go back to the shop.');
        await back.click();
        await arrivesAt(page, declined.urlKo);
      });
    });

    it('accepts a one-digit month ("3"): the field takes it (maxlength 2, no pattern) and the payment completes', async () => {
      const order = await checkout('en-GB');
      await inBrowser({}, async (page) => {
        await page.goto(order.paymentUrl);
        const month = page.locator('#expiryMonth');
        expect(await month.getAttribute('maxlength')).toBe('2');
        expect(await month.getAttribute('pattern')).toBeNull();
        await fillById(page, TEST_SUCCESS_CARDHOLDER, { month: '3' });
        await pay(page).click();
        await arrivesAt(page, order.urlOk);
      });
      expect((await client.sessions.retrieve(order.sessionId)).status).toBe('completed');
    });

    it('shows a test-mode hint that lists every cardholder name with its outcome and says any other name pays', async () => {
      for (const [language, heading, pays] of [
        ['en', 'Test mode', /any cardholder name pays/i],
        ['es', 'Modo de prueba', /cualquier nombre de titular paga/i],
      ] as const) {
        await inBrowser({}, async (page) => {
          await reach(page, 'form', language);
          const hint = page.getByRole('region', { name: heading });
          expect(await hint.isVisible()).toBe(true);
          const text = (await hint.textContent()) ?? '';
          expect(text).toMatch(pays);
          for (const name of Object.keys(TEST_CARDHOLDER_NAMES)) expect(text).toContain(name);
          expect(await hint.locator('li').count()).toBe(Object.keys(TEST_CARDHOLDER_NAMES).length);
        });
      }
    });

    it('the processor error is "Payment could not be processed", not a decline; a decline says why without repeating itself', async () => {
      const error = await checkout('en-GB');
      const declined = await checkout('en-GB');
      await inBrowser({ stayOnPage: true }, async (page) => {
        await page.goto(error.paymentUrl);
        await fillById(page, 'ERROR');
        await pay(page).click();
        await page.locator('[data-return]').waitFor();
        expect(await page.title()).toBe('Payment could not be processed');
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Payment could not be processed');
        const errorText = (await page.locator('main').textContent()) ?? '';
        expect(errorText).not.toMatch(/declin/i);
        expect(errorText).toMatch(/technical error/i);

        await page.goto(declined.paymentUrl);
        await fillById(page, 'card_expired');
        await pay(page).click();
        await page.locator('[data-return]').waitFor();
        expect(await page.title()).toBe('Payment declined');
        const text = (await page.locator('main').textContent()) ?? '';
        expect(text).toContain('The card has expired.');
        expect(text.match(/declin/gi)).toHaveLength(1);
        expect(text).not.toContain('(declined');

        // Opened again later, the link shows the same outcome.
        await page.goto(declined.paymentUrl);
        expect(await page.title()).toBe('Payment declined');
        expect(await page.locator('main').textContent()).toContain('The card has expired.');
      });
    });

    it('speaks Spanish for an es-ES session: lang, labels, buttons, banner, hint, errors and the outcome page', async () => {
      const order = await checkout('es-ES');
      await inBrowser({ stayOnPage: true }, async (page) => {
        await page.goto(order.paymentUrl);
        expect(await page.locator('html').getAttribute('lang')).toBe('es-ES');
        expect(await page.title()).toBe('Pagar 25,99 EUR');
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Pagar 25,99 EUR');
        const expiry = page.getByRole('group', { name: 'Fecha de caducidad' });
        for (const field of [
          page.getByLabel('Número de tarjeta'),
          expiry.getByLabel('Mes (MM)'),
          expiry.getByLabel('Año (AA)'),
          page.getByLabel('Código de seguridad (CVC)'),
          page.getByLabel('Nombre del titular'),
        ]) {
          expect(await field.count()).toBe(1);
        }
        expect(await page.getByRole('button', { name: 'Pagar 25,99 EUR' }).isEnabled()).toBe(true);
        expect(await page.getByRole('button', { name: 'Cancelar el pago' }).isEnabled()).toBe(true);
        expect(await page.getByRole('note').textContent()).toMatch(/^Página de pago del sandbox/);
        expect(await page.getByText('Tiempo para pagar:').isVisible()).toBe(true);
        const formText = (await page.locator('main').innerText()) ?? '';
        for (const english of [
          'Card number',
          'Expiry',
          'Pay ',
          'Cancel payment',
          'Time left',
          'Test mode',
          'Sandbox payment page',
          'any cardholder',
        ]) {
          expect(formText).not.toContain(english);
        }

        await fillById(page, 'Jo', { cvc: '12' });
        await page.getByRole('button', { name: 'Pagar 25,99 EUR' }).click();
        const summary = (await page.getByRole('alert').textContent()) ?? '';
        expect(summary).toContain('Corrija estos 2 campos:');
        expect(summary).toContain('Introduzca el código de seguridad de 3 cifras.');
        expect(summary).toContain('Introduzca el nombre del titular (al menos 3 caracteres).');

        await fillById(page, 'DECLINED');
        await page.getByRole('button', { name: 'Pagar 25,99 EUR' }).click();
        const back = page.getByRole('link', { name: 'Volver a la tienda' });
        await back.waitFor();
        expect(await page.locator('html').getAttribute('lang')).toBe('es-ES');
        expect(await page.title()).toBe('Pago denegado');
        expect(await page.getByRole('status').textContent()).toBe('Volverá a la tienda dentro de 5 segundos.');
        const outcome = (await page.locator('main').innerText()) ?? '';
        expect(outcome).toContain('El emisor de la tarjeta no autorizó el pago. No se ha cobrado nada.');
        expect(outcome).toContain('Quedarme en esta página');
        for (const english of ['Return to the shop', 'Payment', 'declined', 'No money']) expect(outcome).not.toContain(english);
      });
    });

    it('speaks English for an en-GB session, and for a language it does not have (fr-FR, lang="en")', async () => {
      for (const [shopperLocale, lang] of [
        ['en-GB', 'en-GB'],
        ['fr-FR', 'en'],
      ] as const) {
        const order = await checkout(shopperLocale);
        await inBrowser({}, async (page) => {
          await page.goto(order.paymentUrl);
          expect(await page.locator('html').getAttribute('lang')).toBe(lang);
          expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Pay 25.99 EUR');
          expect(await page.getByLabel('Card number').count()).toBe(1);
          expect(await page.getByRole('button', { name: 'Cancel payment' }).count()).toBe(1);
        });
      }
    });

    it('refuses to be framed (frame-ancestors none, X-Frame-Options DENY)', async () => {
      const order = await checkout('en-GB');
      await inBrowser({}, async (page, _context, csp) => {
        await page.goto(shop.url('/frame'));
        await page.evaluate((src) => {
          const frame = document.createElement('iframe');
          frame.src = src;
          document.body.append(frame);
        }, order.paymentUrl);
        await waitUntil('frame-ancestors is reported', () => csp.violations.some((text) => /frame-ancestors/.test(text)));
        const child = page.frames().find((frame) => frame !== page.mainFrame());
        expect(await child?.locator('form').count()).toBe(0);
        csp.violations.length = 0;
      });
    });

    it('lists the shop in form-action: without it Chromium refuses the 303 that follows the form (why the origins are listed)', async () => {
      const order = await checkout('en-GB');
      await inBrowser({}, async (page, _context, csp) => {
        await page.route(order.paymentUrl, async (route) => {
          if (route.request().method() !== 'GET') return route.continue();
          const response = await route.fetch();
          const headers = response.headers();
          expect(headers['content-security-policy']).toContain(`form-action 'self' ${shop.baseUrl}`);
          headers['content-security-policy'] = (headers['content-security-policy'] ?? '').replace(
            /form-action [^;]*/,
            "form-action 'self'",
          );
          await route.fulfill({ response, headers });
        });
        await page.goto(order.paymentUrl);
        await fillById(page, TEST_SUCCESS_CARDHOLDER);
        await pay(page).click();
        await waitUntil('form-action is reported', () => csp.violations.some((text) => /form-action/.test(text)));
        expect(shop.hitsOn(order.okPath)).toHaveLength(0);
        csp.violations.length = 0;
      });
    });

    it('runs under its own CSP: the nonce’d style and scripts work (countdown, focus, return), with no violation', async () => {
      const order = await checkout('en-GB');
      await inBrowser({}, async (page) => {
        const answer = await page.goto(order.paymentUrl);
        const directives = expectSecurityHeaders(answer?.headers() ?? {}, await answer?.text());
        expect(directives.get('form-action')).toBe(`'self' ${shop.baseUrl}`);
        expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(244, 245, 247)');
        const start = await page.getByRole('timer').textContent();
        await waitUntil('the countdown ticks', async () => (await page.getByRole('timer').textContent()) !== start);
        await fillById(page, 'NOT_ENOUGH_BALANCE');
        await pay(page).click();
        await page.locator('[data-return]').waitFor();
        expect(await focused(page)).toBe('return');
        expect(await page.getByRole('button', { name: 'Stay on this page' }).isVisible()).toBe(true);
        await arrivesAt(page, order.urlKo);
      });
    });
  });

  describe('HTML answers over HTTP', () => {
    const get = (url: string, init: RequestInit = {}) => fetch(url, { redirect: 'manual', ...init });
    const post = (url: string, fields: Record<string, string>) =>
      get(url, { method: 'POST', body: new URLSearchParams({ action: 'pay', ...fields }) });
    const card = {
      cardNumber: TEST_CARDS.visa.number,
      expiryMonth: TEST_CARDS.visa.expiryMonth,
      expiryYear: TEST_CARDS.visa.expiryYear,
      cvc: TEST_CARDS.visa.cvc,
    };

    async function expectHtml(response: Response, status: number): Promise<Map<string, string>> {
      expect(response.status).toBe(status);
      return expectSecurityHeaders(response.headers, await response.text());
    }

    function expectSeeOther(response: Response, target: RegExp): void {
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toMatch(target);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('refresh')).toBeNull();
    }

    it('every HTML answer carries the CSP (fresh nonce), X-Frame-Options, Referrer-Policy, nosniff and no-store; no Refresh', async () => {
      const form = await checkout('en-GB');
      const first = await expectHtml(await get(form.paymentUrl), 200);
      const second = await expectHtml(await get(form.paymentUrl), 200);
      expect(first.get('script-src')).not.toBe(second.get('script-src'));
      // The form's POST may lead to the shop (the 303), and nowhere else.
      expect(first.get('form-action')).toBe(`'self' ${shop.baseUrl}`);

      await expectHtml(await post(form.paymentUrl, { ...card, holderName: 'Jo' }), 422);
      const declined = await expectHtml(await post(form.paymentUrl, { ...card, holderName: 'DECLINED' }), 200);
      expect(declined.get('form-action')).toBe("'self'");
      await expectHtml(await get(form.paymentUrl), 200); // the finished page, opened again

      const error = await checkout('en-GB');
      await expectHtml(await post(error.paymentUrl, { ...card, holderName: 'ERROR' }), 200);

      const cancelled = await checkout('en-GB');
      expectSeeOther(await post(cancelled.paymentUrl, { action: 'cancel' }), new RegExp(`^${cancelled.urlKo}$`));
      await expectHtml(await get(cancelled.paymentUrl), 200);

      const timed = await timedSandbox();
      const expired = await checkout('en-GB', timed.payments);
      await get(expired.paymentUrl);
      await timed.advance(300_000);
      await expectHtml(await get(expired.paymentUrl), 200);
      await expectHtml(await post(expired.paymentUrl, { ...card, holderName: TEST_SUCCESS_CARDHOLDER }), 200);

      await expectHtml(await get(`${sandbox.baseUrl}/pay-external-test/no-such-payment`), 404);
      await expectHtml(await get(`${sandbox.baseUrl}/pay-external/no-such-payment`), 404);
      const wrongMethod = await get(form.paymentUrl, { method: 'PUT', body: 'x' });
      expect(wrongMethod.headers.get('allow')).toBe('GET, POST');
      await expectHtml(wrongMethod, 405);

      const paid = await checkout('en-GB');
      expectSeeOther(await post(paid.paymentUrl, { ...card, holderName: TEST_SUCCESS_CARDHOLDER }), new RegExp(`^${paid.urlOk}\\?data=`));
      // Opened again: a 303 with fresh data.
      expectSeeOther(await get(paid.paymentUrl), new RegExp(`^${paid.urlOk}\\?data=`));
    });

    it('no page has a meta refresh; outcome pages link back to urlKo with data-return and return by script after 5 s', async () => {
      const order = await checkout('en-GB');
      const response = await post(order.paymentUrl, { ...card, holderName: 'FRAUD' });
      const html = await response.text();
      expect(html).not.toMatch(/http-equiv/i);
      expect(html).toMatch(new RegExp(`<a [^>]*data-return[^>]* href="${order.urlKo}"`));
      expect(html).toMatch(/data-seconds="5"/);
      expect(html).toMatch(/location\.replace/);
    });

    it('checks a one-digit month like a two-digit one: 3 and 03 pay, 0, 13 and 003 are refused', async () => {
      for (const [month, status] of [
        ['3', 303],
        ['03', 303],
        ['0', 422],
        ['13', 422],
        ['003', 422],
      ] as const) {
        const order = await checkout('en-GB');
        const response = await post(order.paymentUrl, { ...card, expiryMonth: month, holderName: TEST_SUCCESS_CARDHOLDER });
        expect(response.status, month).toBe(status);
        if (status === 422) expect(await response.text()).toContain('Enter the expiry month, 1 to 12.');
      }
    });

    it('follows shopperLocale: Spanish for es and es-*, with the tag as lang; English otherwise; the service default (es-ES) is Spanish', async () => {
      const cases: [string | undefined, string, RegExp][] = [
        [undefined, 'es-ES', /Pagar 25,99 EUR/],
        ['es-ES', 'es-ES', /Pagar 25,99 EUR/],
        ['es-MX', 'es-MX', /Pagar 25,99 EUR/],
        ['es', 'es', /Pagar 25,99 EUR/],
        ['en-GB', 'en-GB', /Pay 25\.99 EUR/],
        ['en-US', 'en-US', /Pay 25\.99 EUR/],
        ['fr-FR', 'en', /Pay 25\.99 EUR/],
        ['de-DE', 'en', /Pay 25\.99 EUR/],
      ];
      for (const [shopperLocale, lang, heading] of cases) {
        const order = await checkout(shopperLocale);
        const html = await (await get(order.paymentUrl)).text();
        expect(html, String(shopperLocale)).toContain(`<html lang="${lang}">`);
        expect(html).toMatch(heading);
      }
      // The page without a session speaks the browser's language.
      const spanish = await (
        await get(`${sandbox.baseUrl}/pay-external-test/nothing`, { headers: { 'accept-language': 'es-ES,es;q=0.9' } })
      ).text();
      expect(spanish).toContain('Pago no encontrado');
      const english = await (await get(`${sandbox.baseUrl}/pay-external-test/nothing`, { headers: { 'accept-language': 'fr' } })).text();
      expect(english).toContain('Payment not found');
    });
  });
});
