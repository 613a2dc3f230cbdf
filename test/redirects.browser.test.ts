import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeInBrowser, launchChromium } from './support/browser.js';

const SENTINEL_KEY = 'sk_test_BROWSER_REDIRECT_SENTINEL';

/**
 * In a real Chromium, `redirect: 'manual'` gives the page an opaque redirect (status 0, no
 * headers) instead of the 3xx: the client turns it into an ApiError, and the redirect's target,
 * on another origin, receives nothing.
 */
describeInBrowser('redirects in a web page', () => {
  let browser: Browser;
  let shop: Server;
  let elsewhere: Server;
  let origin: string;
  const apiRequests: string[] = [];
  const elsewhereRequests: string[] = [];

  beforeAll(async () => {
    const bundle = await esbuild.build({
      entryPoints: [fileURLToPath(new URL('../src/index.ts', import.meta.url))],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      logLevel: 'silent',
    });
    const script = bundle.outputFiles[0]?.text ?? '';
    elsewhere = createServer((request, response) => {
      elsewhereRequests.push(`${request.method} ${request.url}`);
      response.setHeader('access-control-allow-origin', '*');
      response.setHeader('access-control-allow-headers', '*');
      response.end('{"success":true,"data":{}}');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    // The page and the API on one origin, whose API paths answer 307 to the other origin.
    shop = createServer((request, response) => {
      if (request.url?.startsWith('/external/')) {
        apiRequests.push(`${request.method} ${request.url.split('?')[0]}`);
        response.writeHead(307, { location: `${target}${request.url}` });
        response.end();
        return;
      }
      if (request.url === '/sdk.js') {
        response.setHeader('content-type', 'text/javascript');
        response.end(script);
        return;
      }
      response.setHeader('content-type', 'text/html');
      response.end('<!doctype html><title>shop</title>');
    });
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => shop?.close(resolve));
    await new Promise((resolve) => elsewhere?.close(resolve));
  });

  it('a 307 on a read and on a write is an ApiError (status 0), not followed, not retried', async () => {
    const page = await browser.newPage();
    await page.goto(origin);
    await page.addScriptTag({ type: 'module', content: "import * as sdk from '/sdk.js'; window.sdk = sdk;" });
    await page.waitForFunction(() => 'sdk' in window);
    const results = await page.evaluate(
      async ({ baseUrl, apiKey }) => {
        const sdk = (window as unknown as { sdk: typeof import('../src/index.js') }).sdk;
        const client = new sdk.PaymentClient({ apiKey, webcode: 'SHOP1', baseUrl, dangerouslyAllowBrowser: true, maxRetries: 2 });
        const outcome = (promise: Promise<unknown>) =>
          promise.then(
            () => ({ resolved: true }),
            (error: InstanceType<typeof sdk.ApiError>) => ({
              isApiError: error instanceof sdk.ApiError,
              status: error.status,
              attempts: error.attempts,
              message: error.message,
              json: JSON.stringify(error),
            }),
          );
        return [
          await outcome(client.terminals.list()),
          await outcome(
            client.sessions.create({
              amount: { value: 100, currency: 'EUR' },
              urlOk: 'https://shop.example/ok',
              urlKo: 'https://shop.example/ko',
            }),
          ),
        ];
      },
      { baseUrl: origin, apiKey: SENTINEL_KEY },
    );
    for (const result of results) {
      expect(result).toMatchObject({ isApiError: true, status: 0, attempts: 1 });
      expect((result as { message: string }).message).toMatch(/redirect/);
      expect(JSON.stringify(result)).not.toContain(SENTINEL_KEY);
    }
    expect(apiRequests).toEqual(['GET /external/v1/test/pos/terminals', 'POST /external/v1/test/payment/session']);
    expect(elsewhereRequests).toEqual([]);
    await page.close();
  }, 20_000);
});
