import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import axe from 'axe-core';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

/**
 * Real-browser helpers: Debian's Chromium (never a downloaded one) driven by playwright-core, and a
 * tiny "shop" on 127.0.0.1 that the payment page redirects the browser to.
 */

/** Debian's Chromium; `CHROMIUM_PATH` may point elsewhere (for example to check the skip path). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function flag(name: string): boolean {
  const value = process.env[name];
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

/**
 * `describe` for a suite that needs Chromium. Without `/usr/bin/chromium` the suite is skipped with a
 * warning, unless `CI` or `REQUIRE_BROWSER` is set: then it fails loudly.
 */
export function describeInBrowser(name: string, suite: () => void): void {
  if (existsSync(CHROMIUM_PATH)) {
    describe(name, suite);
    return;
  }
  const message = `${CHROMIUM_PATH} not found: the browser tests of "${name}" need Debian's Chromium (apt-get install chromium)`;
  if (flag('CI') || flag('REQUIRE_BROWSER')) {
    describe(name, () => {
      it('has Chromium to run in', () => {
        throw new Error(`${message}. CI or REQUIRE_BROWSER is set, so the suite may not be skipped.`);
      });
    });
    return;
  }
  console.warn(`[browser tests skipped] ${message}.`);
  describe.skipIf(true)(name, suite);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, timeout: 15_000 });
}

/** The merchant's shop: records every URL it is sent to and answers a small HTML page. */
export interface ShopReceiver {
  /** `http://127.0.0.1:<port>`. */
  readonly baseUrl: string;
  /** Absolute URLs of the requests received, in order (favicon requests left out). */
  readonly hits: URL[];
  /** An absolute URL on the shop. */
  url(path: string): string;
  /** The hits whose path is `path`. */
  hitsOn(path: string): URL[];
  close(): Promise<void>;
}

export async function startShop(): Promise<ShopReceiver> {
  const hits: URL[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/favicon.ico') {
      response.writeHead(404).end();
      return;
    }
    hits.push(new URL(request.url ?? '/', baseUrl));
    const outcome = url.pathname.startsWith('/ok') ? 'Thank you for your order' : 'Your payment was not completed';
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
    response.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body><h1>${outcome}</h1></body></html>`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    hits,
    url: (path) => new URL(path, baseUrl).toString(),
    hitsOn: (path) => hits.filter((hit) => hit.pathname === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// Test artefacts: screenshots and axe reports, for a person (or CI) to look at after a run.

/**
 * Where browser tests write their artefacts: `ARTIFACTS_DIR`, or `payment-sdk-artifacts` in the OS
 * temp folder (outside the repository, so never committed).
 */
export const ARTIFACTS_DIR = process.env.ARTIFACTS_DIR || join(tmpdir(), 'payment-sdk-artifacts');

/** The path of artefact `name` (in sub-folders as given), its folder created. */
export function artifactPath(...name: string[]): string {
  const path = join(ARTIFACTS_DIR, ...name);
  mkdirSync(dirname(path), { recursive: true });
  return path;
}

/**
 * Saves a full-page screenshot of `page` as artefact `name` (a `.jpg`): JPEG, since encoding a tall
 * page as PNG costs about three times as long (~0.5 s a page on a 2-core machine) for a picture
 * that is only looked at.
 */
export async function screenshot(page: Page, ...name: string[]): Promise<void> {
  await page.screenshot({ path: artifactPath(...name), fullPage: true, type: 'jpeg', quality: 80 });
}

// Accessibility: axe-core, injected into the page under test.

/** An axe rule's violation, as kept in the reports. */
export interface AxeFinding {
  id: string;
  impact: string | null | undefined;
  help: string;
  targets: string[];
}

/** What axe found on a page: every violation, and the rule ids it could not decide. */
export interface AxeReport {
  url: string;
  violations: AxeFinding[];
  incomplete: string[];
  passes: number;
}

/**
 * Loads axe-core into every page of `context` before the page's own scripts (an init script), so
 * that {@link runAxe} finds it there: injecting its 500 kB source after each navigation costs about
 * 0.5 s a page on a 2-core machine, the init script a few ms. Call it before opening the pages.
 */
export async function preloadAxe(context: BrowserContext): Promise<void> {
  await context.addInitScript({ content: axe.source });
}

/**
 * Runs axe-core with its default rules (WCAG 2.0-2.2 A and AA, best practices) on `page`, injecting
 * it unless {@link preloadAxe} did. Its source is an inline script, which the page's CSP refuses:
 * run it in a context made with `bypassCSP: true`.
 */
export async function runAxe(page: Page): Promise<AxeReport> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: axe.source });
  const results = await page.evaluate(() => (window as unknown as { axe: typeof axe }).axe.run());
  return {
    url: results.url,
    violations: results.violations.map((rule) => ({
      id: rule.id,
      impact: rule.impact,
      help: rule.help,
      targets: rule.nodes.map((node) => node.target.join(' ')),
    })),
    incomplete: results.incomplete.map((rule) => rule.id),
    passes: results.passes.length,
  };
}

/** The violations of impact serious or critical: there must be none. */
export function seriousViolations(report: AxeReport): AxeFinding[] {
  return report.violations.filter((finding) => finding.impact === 'serious' || finding.impact === 'critical');
}

// Content-Security-Policy: what a page reports when its own policy blocks something.

/** Content-Security-Policy violations seen in a browser context: `securitypolicyviolation` events and console messages. */
export interface CspWatch {
  readonly violations: string[];
}

/** Records every CSP violation of the pages of `context` (call before opening them). */
export async function watchCsp(context: BrowserContext): Promise<CspWatch> {
  const violations: string[] = [];
  await context.exposeBinding('reportCspViolation', (_source, text: string) => {
    violations.push(text);
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { reportCspViolation(text: string): void }).reportCspViolation(
        `${event.violatedDirective} blocked ${event.blockedURI || 'inline'} on ${event.documentURI}`,
      );
    });
  });
  context.on('console', (message) => {
    if (/content security policy|refused to/i.test(message.text())) violations.push(`console: ${message.text()}`);
  });
  return { violations };
}

// Security headers of every HTML answer of the sandbox.

/** The directives every HTML answer's CSP has, whatever the page. */
export const CSP_DIRECTIVES = [
  "default-src 'none'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
];

/**
 * Asserts the headers of an HTML answer: a CSP that runs only the nonce'd script and style (the
 * nonce that the page's `<script>` and `<style>` carry when `html` is given), framing refused, no
 * referrer, no sniffing, no caching, and no `Refresh`. Returns the CSP's directives by name.
 */
export function expectSecurityHeaders(headers: Headers | Record<string, string>, html?: string): Map<string, string> {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : (headers[name] ?? null));
  expect(get('content-type')).toMatch(/^text\/html\b/);
  expect(get('x-frame-options')).toBe('DENY');
  expect(get('referrer-policy')).toBe('no-referrer');
  expect(get('x-content-type-options')).toBe('nosniff');
  expect(get('cache-control')).toBe('no-store');
  expect(get('refresh')).toBeNull();
  const csp = get('content-security-policy') ?? '';
  const directives = new Map(
    csp.split(';').map((part) => {
      const [name = '', ...values] = part.trim().split(/\s+/);
      return [name, values.join(' ')] as const;
    }),
  );
  for (const directive of CSP_DIRECTIVES) {
    const [name = ''] = directive.split(' ');
    expect(`${name} ${directives.get(name)}`, csp).toBe(directive);
  }
  const nonce = /^'nonce-([A-Za-z0-9+/=]{16,})'$/.exec(directives.get('script-src') ?? '')?.[1];
  expect(nonce, `script-src of ${csp}`).toBeDefined();
  expect(directives.get('style-src')).toBe(`'nonce-${nonce}'`);
  expect(directives.get('form-action')?.split(' ')).toContain("'self'");
  if (html !== undefined) {
    // Every script and style element carries the nonce; no inline handler or style attribute.
    for (const tag of html.match(/<(script|style)\b[^>]*>/gi) ?? []) expect(tag).toContain(`nonce="${nonce}"`);
    expect(html).not.toMatch(/\s(on[a-z]+|style)\s*=/i);
    expect(html).not.toMatch(/<meta[^>]+http-equiv/i);
  }
  return directives;
}
