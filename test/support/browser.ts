import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';
import { describe, it } from 'vitest';

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
