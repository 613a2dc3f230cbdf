/**
 * The sandbox's container image (root Dockerfile, `npm run image`), built against the local
 * stand-in of node:24-slim and run with podman: reached only through ports published on 127.0.0.1,
 * or on the host's network where the container delivers webhooks to a receiver of this process.
 * Skipped with a warning where podman is missing; under REQUIRE_CONTAINERS=1 (.ci/run) it fails instead.
 */
import { chmodSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../src/index.js';
import { startReceiver } from './sandbox/support.js';
import {
  BASE_IMAGE,
  type Container,
  containersAvailable,
  ensureImage,
  IMAGE,
  podman,
  publishedPort,
  ROOT,
  removeContainers,
  runContainer,
  waitForAnswer,
} from './support/containers.js';

const available = containersAvailable();
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const dirs: string[] = [];
/** The tag of the image built `docker build .`'s way (removed in afterAll whatever happened). */
const ROOT_BUILD = `localhost/payment-sdk-root-build-${process.pid}:test`;

beforeAll(async () => {
  if (available) await ensureImage();
}, 300_000);

afterAll(async () => {
  await removeContainers();
  if (available) await podman(['rmi', '-f', ROOT_BUILD], { allowFailure: true });
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** A folder for /data that the image's user (uid 1000) can write, as a bind mount needs. */
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-container-data-'));
  dirs.push(dir);
  if (process.getuid?.() === 0) chownSync(dir, 1000, 1000);
  else chmodSync(dir, 0o777);
  return dir;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise((done) => server.close(done));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

function client(baseUrl: string): PaymentClient {
  return new PaymentClient({ apiKey: 'sk_test_sandbox', webcode: 'SANDBOX', baseUrl, environment: 'test' });
}

const SESSION = {
  amount: { value: 2599, currency: 'EUR' },
  urlOk: 'http://localhost:3000/ok',
  urlKo: 'http://localhost:3000/ko',
} as const;

async function control(container: Container, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${container.baseUrl}/_sandbox/${path}`, {
    method,
    headers: { 'x-api-key': 'sk_test_sandbox', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

async function inspect(format: string, target: string, kind: 'image' | 'container' = 'image'): Promise<string> {
  return (await podman([kind, 'inspect', '--format', format, target])).stdout.trim();
}

// Read by every run, podman or not: a plain `docker build .` labels the image with this default.
describe('the root Dockerfile', () => {
  it("defaults its VERSION argument to package.json's version, and .dockerignore sends only what it copies", () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    expect(/^ARG VERSION=(.*)$/m.exec(dockerfile)?.[1]).toBe(VERSION);
    const copied = [...dockerfile.matchAll(/^COPY (?:--\S+ )*(\S+) /gm)].map((match) => match[1]);
    expect(copied).toEqual(['dist/*.cjs', 'container/healthcheck.cjs']);
    const rules = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    expect(rules).toEqual(['*', ...copied.map((path) => `!${path}`)]);
  });
});

// Containers start and stop under the load of the whole suite in CI: each test gets a minute.
describe.runIf(available)('the sandbox container image', { timeout: 60_000 }, () => {
  it('declares the base, port, volume, user, health check, entrypoint and OCI labels, and adds at most 10 MB to its base', async () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^ARG BASE=node:24-slim$/m);
    expect(dockerfile).toMatch(/^FROM \$\{BASE\}$/m);
    const labels = JSON.parse(await inspect('{{json .Labels}}', IMAGE));
    expect(labels).toMatchObject({
      'org.opencontainers.image.version': VERSION,
      'org.opencontainers.image.source': 'https://github.com/payment-service-sdk/payment-service-sdk',
      'org.opencontainers.image.licenses': 'MIT',
      'org.opencontainers.image.title': expect.any(String),
      'org.opencontainers.image.description': expect.any(String),
    });
    const config = JSON.parse(await inspect('{{json .Config}}', IMAGE));
    expect(Object.keys(config.ExposedPorts)).toEqual(['4010/tcp']);
    expect(Object.keys(config.Volumes)).toEqual(['/data']);
    expect(config.User).toBe('node');
    expect(config.Entrypoint).toEqual(['node', '--max-semi-space-size=2', '/app/dist/cli.cjs', 'sandbox']);
    expect(JSON.parse(await inspect('{{json .HealthCheck}}', IMAGE)).Test).toEqual(['CMD', 'node', '/app/healthcheck.cjs']);
    const [image, base] = [Number(await inspect('{{.Size}}', IMAGE)), Number(await inspect('{{.Size}}', BASE_IMAGE))];
    const added = image - base;
    console.info(`[container] ${IMAGE} adds ${(added / 1_048_576).toFixed(2)} MB to ${BASE_IMAGE}`);
    expect(added).toBeGreaterThan(0);
    expect(added).toBeLessThanOrEqual(10 * 1_048_576);
  });

  it('answers on 127.0.0.1 with the documented keys, gives out addresses the host can open, runs as uid 1000 and passes its health check', async () => {
    const container = await runContainer({ args: ['--seed', '7'] });
    const session = await client(container.baseUrl).sessions.create(SESSION);
    expect(session.paymentUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${container.port}/pay-external-test/`));
    expect((await fetch(session.paymentUrl)).status).toBe(200);
    const viaLocalhost = await client(`http://localhost:${container.port}`).sessions.create(SESSION);
    expect(viaLocalhost.paymentUrl).toMatch(new RegExp(`^http://localhost:${container.port}/`));
    const openapi = await (await fetch(`${container.baseUrl}/openapi.json`)).json();
    expect(openapi.servers[0].url).toBe(container.baseUrl);
    const dashboard = await fetch(`${container.baseUrl}/`);
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).not.toContain('0.0.0.0');
    const logs = await container.logs();
    expect(JSON.parse(logs.split('\n')[0] ?? '')).toMatchObject({
      webcode: 'SANDBOX',
      keys: { test: 'sk_test_sandbox', live: 'sk_live_sandbox' },
      clientSecrets: { test: 'cs_test_sandbox', live: 'cs_live_sandbox' },
    });
    expect(logs).not.toContain('http://0.0.0.0');
    expect((await podman(['exec', container.name, 'node', '-p', 'process.getuid() + ":" + process.getgid()'])).stdout.trim()).toBe(
      '1000:1000',
    );
    expect((await podman(['healthcheck', 'run', container.name], { allowFailure: true })).code).toBe(0);
    await container.remove();
  });

  it('takes flags after the image name and PAYMENT_SANDBOX_* variables: the seed, and webhooks to a receiver on the host (host network)', async () => {
    const flagged = await runContainer({ args: ['--seed', '7'] });
    const fromFlag = await client(flagged.baseUrl).sessions.create(SESSION);
    await flagged.remove();

    const receiver = await startReceiver();
    try {
      const port = await freePort();
      const container = await runContainer({
        network: 'host',
        baseUrl: `http://127.0.0.1:${port}`,
        options: ['-e', 'PAYMENT_SANDBOX_SEED=7', '-e', `PAYMENT_SANDBOX_WEBHOOK_URL=${receiver.url}`],
        args: ['--host', '127.0.0.1', '--port', String(port)],
      });
      const session = await client(container.baseUrl).sessions.create(SESSION);
      // The same seed, given either way, draws the same payment page token.
      expect(new URL(session.paymentUrl).pathname).toBe(new URL(fromFlag.paymentUrl).pathname);
      const paid = await control(container, 'POST', `test/sessions/${session.sessionId}/pay`);
      expect(paid.status).toBe(200);
      const [delivery] = await receiver.waitFor(1, 10_000);
      expect(delivery?.json).toMatchObject({ event_code: 'AUTHORISATION', data: { amount: 2599, paymentStatus: 'AUTHORISED' } });
      await container.remove();
    } finally {
      await receiver.close();
    }
  });

  it('runs --read-only on a /data volume; docker stop exits 0 with a clean stop, and a restart keeps the session, the tenant and the idempotency replay', async () => {
    const data = dataDir();
    const container = await runContainer({ options: ['--read-only', '--tmpfs', '/tmp', '-v', `${data}:/data`] });
    const shop = client(container.baseUrl);
    const session = await shop.sessions.create(SESSION, { idempotencyKey: 'order-77' });
    const tenant = await control(container, 'POST', 'tenants', { webcode: 'WORKER_1' });
    expect(tenant.status).toBe(201);

    const stopStarted = performance.now();
    await podman(['stop', '-t', '10', container.name]);
    const stopMs = performance.now() - stopStarted;
    expect(await inspect('{{.State.ExitCode}}', container.name, 'container')).toBe('0');
    expect(await container.logs()).toMatch(/Stopped on SIGTERM in \d+ ms: requests in flight answered, store closed\./);
    console.info(`[container] podman stop -t 10 took ${Math.round(stopMs)} ms`);

    const startStarted = performance.now();
    await podman(['start', container.name]);
    const restarted = `http://127.0.0.1:${await publishedPort(container.name)}`;
    await waitForAnswer(restarted);
    console.info(`[container] podman start to first answer: ${Math.round(performance.now() - startStarted)} ms`);
    const again = client(restarted);
    expect((await again.sessions.retrieve(session.sessionId)).sessionId).toBe(session.sessionId);
    const replayed = await again.sessions.create(SESSION, { idempotencyKey: 'order-77' });
    expect(replayed.sessionId).toBe(session.sessionId);
    const tenants = await (await fetch(`${restarted}/_sandbox/tenants`, { headers: { 'x-api-key': 'sk_test_sandbox' } })).json();
    expect(tenants.data.tenants.map((made: { webcode: string }) => made.webcode)).toContain('WORKER_1');
    await container.remove();
  });

  // The one documented command: the repository root as the context, after the repository's
  // own build (ensureImage made dist), no build arguments but the base.
  it('builds with `docker build .` from the repository root: only dist and the health check in /app, no node_modules, and it answers with the documented keys', {
    timeout: 300_000,
  }, async () => {
    await podman(['build', '--format', 'docker', '--build-arg', `BASE=${BASE_IMAGE}`, '-t', ROOT_BUILD, ROOT], { timeoutMs: 240_000 });
    try {
      expect(JSON.parse(await inspect('{{json .Labels}}', ROOT_BUILD))).toMatchObject({ 'org.opencontainers.image.version': VERSION });
      const listing = await podman([
        'run',
        '--rm',
        '--entrypoint',
        'node',
        ROOT_BUILD,
        '-e',
        "const fs = require('node:fs'); const data = fs.statSync('/data'); console.log(JSON.stringify({ app: fs.readdirSync('/app', { recursive: true }), data: [data.uid, data.gid] }))",
      ]);
      const { app, data } = JSON.parse(listing.stdout) as { app: string[]; data: number[] };
      const cjs = readdirSync(join(ROOT, 'dist')).filter((name) => name.endsWith('.cjs'));
      expect([...app].sort()).toEqual(['dist', ...cjs.map((name) => `dist/${name}`), 'healthcheck.cjs'].sort());
      expect(data).toEqual([1000, 1000]);
      const container = await runContainer({ image: ROOT_BUILD });
      const session = await client(container.baseUrl).sessions.create(SESSION);
      expect(session.paymentUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${container.port}/pay-external-test/`));
      expect(JSON.parse((await container.logs()).split('\n')[0] ?? '')).toMatchObject({
        webcode: 'SANDBOX',
        keys: { test: 'sk_test_sandbox', live: 'sk_live_sandbox' },
      });
      await container.remove();
    } finally {
      await podman(['rmi', '-f', ROOT_BUILD], { allowFailure: true });
    }
  });
});
