/**
 * `payment-service-sdk/testcontainers`: the builder's settings on their own, then the module against
 * the real image through the Docker API (podman's, from scripts/podman.sh): a session paid on the
 * hosted form, the redirect decoded with the container's client secret, a tenant, a seed and fault
 * rules taking effect, a data volume kept by a second container, webhooks to a receiver on the host
 * through host networking, and the stop.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { getContainerRuntimeClient } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError, decodeRedirectData, PaymentClient, ServerError } from '../src/index.js';
import { createSandbox } from '../src/sandbox/index.js';
import { PAYMENT_SANDBOX_IMAGE, PaymentSandboxContainer, type StartedPaymentSandboxContainer } from '../src/testcontainers/index.js';
import { dataVolumeSource, sandboxFlags } from '../src/testcontainers/settings.js';
import { credentialsOf, withoutSecrets } from '../src/testcontainers/startup.js';
import { payTestSession } from '../src/testing/index.js';
import { VERSION } from '../src/version.js';
import { dockerApi } from './support/sandbox-image.js';

const FAULT = { route: 'POST /payment/session', times: 1, effect: { type: 'error', status: 503, when: 'before' } } as const;
const params = {
  amount: { value: 2599, currency: 'EUR' as const },
  urlOk: 'https://shop.example/paid',
  urlKo: 'https://shop.example/failed',
};

describe('the builder', () => {
  it('runs the image of the package version by default', () => {
    expect(PAYMENT_SANDBOX_IMAGE).toBe(`payment-service-sdk/sandbox:${VERSION}`);
  });

  it('turns the settings into the sandbox command flags', () => {
    expect(
      sandboxFlags({
        webhookUrls: ['http://127.0.0.1:3000/a', 'http://127.0.0.1:3000/b'],
        seed: 7,
        posDelayMs: [0, 10],
        faultRules: [FAULT],
        hostPort: 4999,
      }),
    ).toEqual([
      '--host',
      '127.0.0.1',
      '--port',
      '4999',
      '--webhook-url',
      'http://127.0.0.1:3000/a',
      '--webhook-url',
      'http://127.0.0.1:3000/b',
      '--seed',
      '7',
      '--pos-delay-ms',
      '0-10',
      '--faults',
      '/payment-sandbox/faults.json',
    ]);
    expect(sandboxFlags({ webhookUrls: [] })).toEqual([]);
  });

  it('takes a volume name as it is and a folder as an absolute path', () => {
    expect(dataVolumeSource('payment-data')).toBe('payment-data');
    expect(dataVolumeSource('./data')).toBe(resolve('data'));
    expect(dataVolumeSource('/srv/sandbox')).toBe('/srv/sandbox');
    expect(() => dataVolumeSource('/srv:/data')).toThrow(ConfigurationError);
  });

  it('refuses bad settings with a ConfigurationError naming the method', () => {
    const container = new PaymentSandboxContainer();
    const cases: [() => unknown, string][] = [
      [() => container.withSeed(-1), 'withSeed'],
      [() => container.withSeed(1.5), 'withSeed'],
      [() => container.withWebhookUrl('ftp://127.0.0.1/x'), 'withWebhookUrl'],
      [() => container.withWebhookUrl('/webhooks'), 'withWebhookUrl'],
      [() => container.withPosDelayMs([5, 1]), 'withPosDelayMs'],
      [() => container.withFaultRules({} as never), 'withFaultRules'],
      [() => container.withFaultRules('no-such-faults.json'), 'withFaultRules'],
      [() => container.withHostNetwork(70_000), 'withHostNetwork'],
      [() => container.withDataVolume(''), 'withDataVolume'],
    ];
    for (const [call, method] of cases) {
      expect(call).toThrow(ConfigurationError);
      expect(call).toThrow(new RegExp(`^${method} `));
    }
  });

  it('reads the credentials from the startup line only', () => {
    const line = JSON.stringify({
      baseUrl: 'http://0.0.0.0:4010',
      webcode: 'SHOP1',
      keys: { test: 'sk_test_1', live: 'sk_live_1' },
      clientSecrets: { test: 'cs_test_1', live: 'cs_live_1' },
    });
    expect(credentialsOf(line)).toEqual({
      webcode: 'SHOP1',
      keys: { test: 'sk_test_1', live: 'sk_live_1' },
      clientSecrets: { test: 'cs_test_1', live: 'cs_live_1' },
    });
    expect(credentialsOf('Payment service sandbox listening on http://0.0.0.0:4010')).toBeUndefined();
    expect(credentialsOf('{"webcode":"SHOP1"}')).toBeUndefined();
  });

  it('leaves keys, client secrets and dashboard tokens out of the output it quotes', () => {
    const output = [
      '{"baseUrl":"http://0.0.0.0:4010","webcode":"SANDBOX","keys":{"test":"sk_test_SENTINEL","live":"sk_live_SENTINEL"},"clientSecrets":{"test":"cs_test_SENTINEL","live":"cs_live_SENTINEL"}}',
      'Payment service sandbox listening on http://0.0.0.0:4010',
      '  dashboard http://0.0.0.0:4010/?token=SENTINEL (control API under http://0.0.0.0:4010/_sandbox/)',
      '  Test: key sk_test_SENTINEL, client secret cs_test_SENTINEL',
      '  Live: key sk_live_SENTINEL, client secret cs_live_SENTINEL',
      'Error: --faults /payment-sandbox/faults.json: rule 1: Fault rule refused',
    ].join('\n');
    expect(withoutSecrets(output)).toBe(
      'Payment service sandbox listening on http://0.0.0.0:4010\nError: --faults /payment-sandbox/faults.json: rule 1: Fault rule refused',
    );
  });
});

/** A webhook receiver on the host's 127.0.0.1, as a shop's would be. */
async function receiver(): Promise<{ server: Server; url: string; events: { event_code: string; data: Record<string, unknown> }[] }> {
  const events: { event_code: string; data: Record<string, unknown> }[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      events.push(JSON.parse(body));
      response.end('ok');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, events };
}

async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const api = await dockerApi();
const image = api?.image;
afterAll(() => api?.stop());

describe.skipIf(image === undefined)('against the image', () => {
  let dataDir: string;
  let first: StartedPaymentSandboxContainer | undefined;
  let second: StartedPaymentSandboxContainer | undefined;
  let hook: Awaited<ReturnType<typeof receiver>>;
  let paid: { sessionId: string; paymentReference: string };
  let tenantKeys: { webcode: string; test: string };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'payment-sdk-tc-'));
    // The container's user is uid 1000, not this process's.
    chmodSync(dataDir, 0o777);
    hook = await receiver();
  });

  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    hook?.server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts with a seed and a fault rule on a data volume, and a PaymentClient works from getClientOptions', async () => {
    first = await new PaymentSandboxContainer(image).withDataVolume(dataDir).withSeed(7).withPosDelayMs(0).withFaultRules([FAULT]).start();
    const options = first.getClientOptions();
    expect(options).toEqual({ apiKey: 'sk_test_sandbox', webcode: 'SANDBOX', baseUrl: first.getBaseUrl(), environment: 'test' });
    expect(first.getBaseUrl()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const client = new PaymentClient({ ...options, maxRetries: 0 });

    // The rule strikes the first create only.
    const refused = await client.sessions.create(params).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServerError);
    expect((refused as ServerError).status).toBe(503);
    const session = await client.sessions.create(params);
    expect(session.paymentUrl.startsWith(`${first.getBaseUrl()}/pay-external-test/`)).toBe(true);

    // The same seed and the same calls in process give the same payment-page token; seed 1 another.
    const tokenOf = async (seed: number) => {
      const local = createSandbox({ seed, posDelayMs: 0 });
      local.faults.add(FAULT);
      const { baseUrl } = await local.listen();
      const localClient = new PaymentClient({ apiKey: local.keys.test, webcode: local.webcode, baseUrl, maxRetries: 0 });
      await localClient.sessions.create(params).catch(() => undefined);
      const made = await localClient.sessions.create(params);
      await local.close();
      return made.paymentUrl.split('/').at(-1);
    };
    expect(session.paymentUrl.split('/').at(-1)).toBe(await tokenOf(7));
    expect(await tokenOf(1)).not.toBe(await tokenOf(7));

    // Paid on the hosted form over HTTP; the urlOk data decodes with the container's client secret.
    const outcome = await payTestSession(session.paymentUrl);
    expect(outcome).toMatchObject({ paid: true, status: 303 });
    const data = await decodeRedirectData(outcome.data ?? '', first.getClientSecret());
    expect(data).toMatchObject({ sessionId: session.sessionId, amount: 2599, currency: 'EUR', status: 'AUTHORISED' });
    await expect(decodeRedirectData(outcome.data ?? '', first.getClientSecret('live'))).rejects.toThrow();
    paid = { sessionId: session.sessionId, paymentReference: String(data.paymentReference) };
  }, 120_000);

  it('makes a tenant with its own webcode, keys and records', async () => {
    const tenant = await first!.createTenant({ webcode: 'TC_SHOP' });
    expect(tenant).toMatchObject({ webcode: 'TC_SHOP', baseUrl: first!.getBaseUrl() });
    expect(tenant.keys.test).not.toBe(first!.getClientOptions().apiKey);
    const made = await tenant.client.sessions.create(params);
    expect(made.sessionId).toMatch(/^TC_SHOP-EXTT-/);
    const listed = (await tenant.client.sessions.list().toArray()).map((item) => item.sessionId);
    expect(listed).toEqual([made.sessionId]);
    tenantKeys = { webcode: tenant.webcode, test: tenant.keys.test };

    // A restart of the same container (SIGTERM, then a new start) keeps the data volume's records.
    await first!.restart();
    const again = new PaymentClient({ apiKey: tenant.keys.test, webcode: tenant.webcode, baseUrl: first!.getBaseUrl(), maxRetries: 0 });
    expect((await again.sessions.list().toArray()).map((item) => item.sessionId)).toEqual([made.sessionId]);
  }, 60_000);

  it('fails to start, quoting the sandbox, when a fault rule is refused', async () => {
    const refused = await new PaymentSandboxContainer(image)
      .withFaultRules([{ route: 'GET /nowhere', effect: { type: 'drop' } }] as never)
      .withStartupTimeout(30_000)
      .start()
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/^The sandbox container exited \(code 2\) before answering; its last lines:\n/);
    expect((refused as Error).message).toContain('--faults /payment-sandbox/faults.json: rule 1');
  }, 60_000);

  it('stops, and a second container on the same volume has the records and tenants; host networking brings webhooks to the host', async () => {
    const oldBaseUrl = first!.getBaseUrl();
    await first!.stop();
    first = undefined;
    await expect(fetch(`${oldBaseUrl}/openapi.json`)).rejects.toThrow();

    const faultsFile = join(dataDir, 'faults.json');
    writeFileSync(
      faultsFile,
      JSON.stringify([{ route: 'GET /payment/sessions', times: 1, effect: { type: 'error', status: 500, when: 'before' } }]),
    );
    second = await new PaymentSandboxContainer(image)
      .withDataVolume(dataDir)
      .withHostNetwork()
      .withWebhookUrl(hook.url)
      .withPosDelayMs(0)
      .withFaultRules(faultsFile)
      .start();
    expect(second.getBaseUrl()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const client = new PaymentClient({ ...second.getClientOptions(), maxRetries: 0 });

    const kept = await client.sessions.retrieve(paid.sessionId);
    expect(kept).toMatchObject({ status: 'completed', paymentReference: paid.paymentReference });
    const tenantClient = new PaymentClient({
      apiKey: tenantKeys.test,
      webcode: tenantKeys.webcode,
      baseUrl: second.getBaseUrl(),
      maxRetries: 0,
    });
    expect(await tenantClient.sessions.list().toArray()).toHaveLength(1);

    // The rules file: the first listing of the main webcode fails, the next one answers.
    await expect(client.sessions.list().firstPage()).rejects.toBeInstanceOf(ServerError);
    expect((await client.sessions.list().toArray()).map((item) => item.sessionId)).toContain(paid.sessionId);

    const session = await client.sessions.create(params);
    const outcome = await payTestSession(session.paymentUrl);
    const data = await decodeRedirectData(outcome.data ?? '', second.getClientSecret());
    const event = await until('the AUTHORISATION webhook', () =>
      hook.events.find(
        (candidate) => candidate.event_code === 'AUTHORISATION' && candidate.data.paymentReference === data.paymentReference,
      ),
    );
    expect(event.data).toMatchObject({ amount: 2599, currency: 'EUR', paymentStatus: 'AUTHORISED' });

    // stop() sends SIGTERM (testcontainers' default is to kill): the sandbox closes its store and exits 0.
    const baseUrl = second.getBaseUrl();
    const stopped = await second.stop({ remove: false });
    second = undefined;
    await expect(fetch(`${baseUrl}/openapi.json`)).rejects.toThrow();
    const runtime = await getContainerRuntimeClient();
    const exited = runtime.container.getById(stopped.getId());
    expect((await exited.inspect()).State.ExitCode).toBe(0);
    await runtime.container.remove(exited, { removeVolumes: true });
  }, 120_000);

  it('works from the built CommonJS package', async () => {
    // Users load dist/, not the sources vitest maps the package names to.
    const root = fileURLToPath(new URL('..', import.meta.url));
    const script = `
import { createRequire } from 'node:module';
const require = createRequire(${JSON.stringify(`${root}/`)});
// The ESM build runs in the test of docs/testing.md's block.
const builds = [[require('./dist/testcontainers.cjs'), require('./dist/index.cjs')]];
const seen = [];
for (const [{ PaymentSandboxContainer }, { PaymentClient }] of builds) {
  // withCommand adds sandbox flags; the credentials come from what the sandbox printed.
  const sandbox = await new PaymentSandboxContainer(${JSON.stringify(image)}).withPosDelayMs(0).withCommand(['--webcode', 'CJS_SHOP']).start();
  try {
    const client = new PaymentClient({ ...sandbox.getClientOptions(), maxRetries: 0 });
    const { paymentUrl } = await client.sessions.create(${JSON.stringify(params)});
    seen.push(paymentUrl.startsWith(sandbox.getBaseUrl() + '/pay-external-test/'), sandbox.getWebcode());
  } finally {
    await sandbox.stop();
  }
}
console.log(JSON.stringify(seen));
`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: root, timeout: 90_000 });
    expect(JSON.parse(stdout)).toEqual([true, 'CJS_SHOP']);
  }, 120_000);

  it("runs docs/testing.md's block as written", async () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const guide = readFileSync(join(root, 'docs/testing.md'), 'utf8');
    const start = guide.indexOf('\n## Testcontainers\n');
    expect(start).toBeGreaterThanOrEqual(0);
    const section = guide.slice(start, guide.indexOf('\n## ', start + 1));
    const blocks = [...section.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
    expect(blocks).toHaveLength(1);
    // A file of the repository, so that `payment-service-sdk` is the built package (its own name).
    const file = join(root, `.readme-testcontainers-${process.pid}.mjs`);
    writeFileSync(file, blocks[0] ?? '');
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: root, timeout: 90_000 });
      expect(stdout.trim()).toMatch(/^true http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      rmSync(file, { force: true });
    }
  }, 120_000);
});
