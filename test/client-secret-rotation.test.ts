/**
 * Issue 37, item 7: a client secret rotated while customers come back with tokens made with the
 * old one, against the sandbox over real HTTP on 127.0.0.1: the rotation through the control API,
 * the typed object, the dashboard and the CLI; tokens decoded with both secrets, refused with only
 * the new one; a made tenant's new secret kept across a restart.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeRedirectData, PaymentClient, RedirectDataError, verifyRedirect } from '../src/index.js';
import { createSandbox } from '../src/sandbox/index.js';
import { paidSession, useSandboxes } from './sandbox/support.js';

const sandboxes = useSandboxes();
const run = promisify(execFile);
const cli = join(import.meta.dirname, '..', 'dist', 'cli.cjs');
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const tokenOf = (target: string) => new URL(target).searchParams.get('data') ?? '';

async function refusal(call: Promise<unknown>): Promise<RedirectDataError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RedirectDataError);
  return error as RedirectDataError;
}

describe('client secret rotation', () => {
  it('signs new tokens with the new secret; tokens made before decode with both, and are refused with only the new one', async () => {
    const { sandbox, baseUrl, test } = await sandboxes.start();
    const old = sandbox.clientSecrets.test;
    const before = await paidSession(test, { customReference: 'order-before' });

    const response = await fetch(`${baseUrl}/_sandbox/test/client-secret/rotate`, {
      method: 'POST',
      headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: { environment: string; clientSecret: string } };
    expect(data.environment).toBe('test');
    expect(data.clientSecret).toMatch(/^cs_test_[A-Za-z0-9]{24}$/);
    expect(data.clientSecret).not.toBe(old);
    expect(sandbox.clientSecrets.test).toBe(data.clientSecret);
    expect(sandbox.clientSecrets.live).toBe('cs_live_sandbox');

    const oldToken = tokenOf(before.target);
    const decoded = await decodeRedirectData(oldToken, [data.clientSecret, old]);
    expect(decoded.customReference).toBe('order-before');
    const onlyNew = await refusal(decodeRedirectData(oldToken, data.clientSecret));
    expect(onlyNew.reason).toBe('signature');
    const neither = await refusal(decodeRedirectData(oldToken, [data.clientSecret, 'cs_test_another_one_of_ours']));
    expect(neither.reason).toBe('signature');
    expect(neither.message).toContain('none of the 2 client secrets given matched');
    expect(`${neither.message} ${JSON.stringify(neither)}`).not.toContain(data.clientSecret);

    const after = await paidSession(test, { customReference: 'order-after' });
    const newToken = tokenOf(after.target);
    await expect(decodeRedirectData(newToken, [data.clientSecret, old])).resolves.toMatchObject({ customReference: 'order-after' });
    expect((await refusal(decodeRedirectData(newToken, old))).reason).toBe('signature');
    await expect(verifyRedirect(after.target, [data.clientSecret, old], { customReference: 'order-after' })).resolves.toBeDefined();
    await expect(decodeRedirectData(newToken, [])).rejects.toThrow(/empty/);
  });

  it('rotates through the typed object and the dashboard, and the request log masks the new secret', async () => {
    const { sandbox, baseUrl, test } = await sandboxes.start();
    const typed = sandbox.rotateClientSecret('live');
    expect(sandbox.clientSecrets.live).toBe(typed);
    const secret = sandbox.rotateClientSecret('test');
    await test.sessions.create({
      amount: { value: 100, currency: 'EUR' },
      urlOk: 'https://shop.example/ok',
      urlKo: 'https://shop.example/ko',
      description: `leaked ${secret}`,
    });
    const log = await fetch(`${baseUrl}/_sandbox/test/requests`, { headers: { 'x-api-key': sandbox.keys.test } });
    const text = await log.text();
    expect(text).toContain('leaked');
    expect(text).not.toContain(secret);

    const page = await (await fetch(`${baseUrl}/`)).text();
    expect(page).toContain('Rotate client secret');
    expect(page).not.toContain(secret);
    const formToken = /name="token" value="([^"]+)"/.exec(page)?.[1] ?? '';
    const answer = await fetch(`${baseUrl}/_dashboard/actions/rotate-client-secret`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: formToken, environment: 'test', returnTo: '/' }).toString(),
      redirect: 'manual',
    });
    expect(answer.status).toBe(303);
    const notice = new URL(answer.headers.get('location') ?? '', baseUrl).searchParams.get('notice') ?? '';
    expect(notice).toContain('client secret is now cs_test_…');
    expect(sandbox.clientSecrets.test).not.toBe(secret);
    expect(notice).not.toContain(sandbox.clientSecrets.test);
  });

  it('keeps a made tenant’s new secret across a restart on its data folder, and the CLI prints the new one', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'secret-rotation-'));
    folders.push(dataDir);
    const first = sandboxes.adopt(createSandbox({ dataDir, posDelayMs: 0 }));
    const { baseUrl } = await first.listen();
    const tenant = first.createTenant();
    const { stdout } = await run(
      process.execPath,
      [
        cli,
        'sandbox',
        'rotate-secret',
        '--format',
        'json',
        '--base-url',
        baseUrl,
        '--api-key',
        tenant.keys.test,
        '--webcode',
        tenant.webcode,
      ],
      { env: { ...process.env, PAYMENT_SERVICE_API_KEY: '', NO_COLOR: '1' }, timeout: 30_000 },
    );
    const printed = JSON.parse(stdout) as { environment: string; clientSecret: string };
    expect(printed.environment).toBe('test');
    expect(printed.clientSecret).not.toBe(tenant.clientSecrets.test);
    expect(first.tenants().find((made) => made.webcode === tenant.webcode)?.clientSecrets.test).toBe(printed.clientSecret);
    await first.close();

    const second = sandboxes.adopt(createSandbox({ dataDir, posDelayMs: 0 }));
    await second.listen();
    expect(second.tenants().find((made) => made.webcode === tenant.webcode)?.clientSecrets.test).toBe(printed.clientSecret);
    const client = new PaymentClient({ apiKey: tenant.keys.test, webcode: tenant.webcode, baseUrl: second.baseUrl, environment: 'test' });
    const paid = await paidSession(client);
    await expect(decodeRedirectData(tokenOf(paid.target), printed.clientSecret)).resolves.toBeDefined();
  });
});
