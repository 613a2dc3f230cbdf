import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeInBrowser, launchChromium } from './support/browser.js';

/**
 * The root entry, bundled for the browser as a front-end app would, loaded in a real Chromium:
 * a client is refused there unless the caller opts in.
 */
describeInBrowser('PaymentClient in a web page', () => {
  let browser: Browser;
  let server: Server;
  let origin: string;
  const seenApiKeys: string[] = [];

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
    server = createServer((request, response) => {
      // The service, on the page's own origin: the SDK's request from the page needs no CORS here.
      if (request.url?.startsWith('/external/v1/test/pos/terminals?')) {
        seenApiKeys.push(String(request.headers['x-api-key']));
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ success: true, data: [{ poiId: 'V400m-TEST-000001', status: 'boarded', extra: 1 }] }));
        return;
      }
      if (request.url === '/strict') {
        // A page whose policy refuses eval: zod's compiled parsers cannot be made, the runtime ones work.
        response.setHeader('content-security-policy', "script-src 'self'");
        response.setHeader('content-type', 'text/html');
        response.end('<!doctype html><title>strict shop</title><script type="module" src="/boot.js"></script>');
        return;
      }
      if (request.url === '/boot.js') {
        response.setHeader('content-type', 'text/javascript');
        // Runs as the page's own script, where the policy applies (DevTools evaluation is exempt).
        response.end(`import * as sdk from '/sdk.js';
let evalRefused = false;
try { new Function('return 1')(); } catch { evalRefused = true; }
const client = new sdk.PaymentClient({ apiKey: 'sk_test_strict', webcode: 'SHOP1', baseUrl: location.origin, dangerouslyAllowBrowser: true });
client.terminals.list().then(
  (terminals) => { window.strictResult = { evalRefused, terminals }; },
  (error) => { window.strictResult = { evalRefused, error: String(error) }; },
);`);
        return;
      }
      if (request.url === '/sdk.js') {
        response.setHeader('content-type', 'text/javascript');
        response.end(script);
        return;
      }
      response.setHeader('content-type', 'text/html');
      response.end('<!doctype html><title>shop</title><p>front end</p>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('refuses a client without dangerouslyAllowBrowser, and allows it with the flag', async () => {
    const page = await browser.newPage();
    await page.goto(origin);
    await page.addScriptTag({ type: 'module', content: "import * as sdk from '/sdk.js'; window.sdk = sdk;" });
    await page.waitForFunction(() => 'sdk' in window);
    const result = await page.evaluate(() => {
      const sdk = (window as unknown as { sdk: typeof import('../src/index.js') }).sdk;
      const options = { apiKey: 'sk_test_browser_SENTINEL', webcode: 'SHOP1', baseUrl: 'https://pay.example.com' };
      let refused: { name: string; option: string; message: string } | undefined;
      try {
        new sdk.PaymentClient(options);
      } catch (error) {
        const { name, option, message } = error as { name: string; option: string; message: string };
        refused = { name, option, message };
      }
      const allowed = new sdk.PaymentClient({ ...options, dangerouslyAllowBrowser: true });
      return { refused, environment: allowed.environment };
    });
    expect(result.refused).toMatchObject({ name: 'ConfigurationError', option: 'dangerouslyAllowBrowser' });
    expect(result.refused?.message).toContain('browser');
    expect(result.refused?.message).not.toContain('SENTINEL');
    expect(result.environment).toBe('test');
    await page.close();
  }, 20_000);

  it('sends a request from the page and validates the answer', async () => {
    const page = await browser.newPage();
    await page.goto(origin);
    await page.addScriptTag({ type: 'module', content: "import * as sdk from '/sdk.js'; window.sdk = sdk;" });
    await page.waitForFunction(() => 'sdk' in window);
    const terminals = await page.evaluate(async (baseUrl) => {
      const sdk = (window as unknown as { sdk: typeof import('../src/index.js') }).sdk;
      const client = new sdk.PaymentClient({ apiKey: 'sk_test_browser', webcode: 'SHOP1', baseUrl, dangerouslyAllowBrowser: true });
      return client.terminals.list();
    }, origin);
    expect(terminals).toEqual([{ poiId: 'V400m-TEST-000001', status: 'boarded', extra: 1 }]);
    expect(seenApiKeys.at(-1)).toBe('sk_test_browser');
    await page.close();
  }, 20_000);

  it('validates answers on a page whose Content-Security-Policy refuses eval', async () => {
    const page = await browser.newPage();
    await page.goto(`${origin}/strict`);
    await page.waitForFunction(() => 'strictResult' in window);
    const result = await page.evaluate(() => (window as unknown as { strictResult: unknown }).strictResult);
    expect(result).toEqual({ evalRefused: true, terminals: [{ poiId: 'V400m-TEST-000001', status: 'boarded', extra: 1 }] });
    expect(seenApiKeys.at(-1)).toBe('sk_test_strict');
    await page.close();
  }, 20_000);
});
