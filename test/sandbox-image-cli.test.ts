/**
 * `payment-service-sdk sandbox image` (issue 37, item 3) as a user who installed from npm runs it:
 * the repository's `npm pack` tarball installed in a fresh folder, its bin run with `npx`, building
 * from the installed package's own files (its Dockerfile, dist's CommonJS files, the health check)
 * with podman (no Docker engine answers here), offline on the local base (`scripts/podman.sh base`),
 * then the image run and answering on 127.0.0.1. Also: Docker where an engine answers (here the
 * Docker API podman serves), and a clear error when neither engine works. The tarball is packed
 * from the current dist (built first when there is none), with `--ignore-scripts`: other test
 * files read that dist while this one runs.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../src/index.js';
import { BASE_IMAGE, containersAvailable, podman, podmanEnv, ROOT, removeContainers, runContainer } from './support/containers.js';

const available = containersAvailable();
/** The docker client (no engine needed: it talks to the Docker API podman serves). */
const dockerClient = spawnSync('docker', ['--version'], { stdio: 'ignore' }).status === 0;
const children = new Set<ChildProcess>();
const tags: string[] = [];
let shop: string;
let tarball: string;

/** This process's environment for npm and the bin: this Node first on PATH, no DOCKER_HOST unless given, podman's containers.conf. */
function environment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...podmanEnv() };
  for (const name of Object.keys(env))
    if (name.startsWith('PAYMENT_SERVICE_') || name === 'DOCKER_HOST' || name.startsWith('npm_')) delete env[name];
  return {
    ...env,
    // The bin's `#!/usr/bin/env node` finds Node 24 (the system's may be 20).
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
    NO_COLOR: '1',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    ...extra,
  };
}

/** Runs a command in its own process group, killed as a whole after `timeoutMs`. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv | undefined; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? environment(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const kill = () => child.pid !== undefined && process.kill(-child.pid, 'SIGKILL');
  const timer = setTimeout(kill, options.timeoutMs);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => {
    const finish = (code: number | null) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    };
    child.on('error', (error) => {
      stderr += error.message;
      finish(null);
    });
    child.on('close', finish);
  });
}

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist/cli.cjs')))
    execFileSync(process.execPath, [join(ROOT, 'scripts/build-quiet.mjs')], { cwd: ROOT, stdio: 'inherit', timeout: 300_000 });
  shop = mkdtempSync(join(tmpdir(), 'payment-sdk-fresh-shop-'));
  // Another build may be rewriting dist/ at this moment (its clean comes first): pack again until the tarball has the bin.
  let info: { filename: string; files: { path: string }[] } | undefined;
  for (let attempt = 0; attempt < 10; attempt++) {
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', shop], { cwd: ROOT, timeoutMs: 120_000 });
    expect(packed.code, packed.stderr).toBe(0);
    [info] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
    if (info.files.some((file) => file.path === 'dist/cli.cjs')) break;
    await new Promise((done) => setTimeout(done, 3_000));
  }
  expect(info?.files.map((file) => file.path)).toEqual(expect.arrayContaining(['Dockerfile', 'container/healthcheck.cjs', 'dist/cli.cjs']));
  tarball = join(shop, info?.filename ?? '');
  writeFileSync(join(shop, 'package.json'), `${JSON.stringify({ name: 'fresh-shop', version: '1.0.0', private: true, type: 'module' })}\n`);
  const installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
    cwd: shop,
    timeoutMs: 180_000,
  });
  expect(installed.code, installed.stderr).toBe(0);
  expect(realpathSync(join(shop, 'node_modules/payment-service-sdk'))).not.toContain(ROOT);
  expect(existsSync(join(shop, 'node_modules/.bin/payment-service-sdk'))).toBe(true);
  if (available)
    execFileSync(join(ROOT, 'scripts/podman.sh'), ['base'], { env: podmanEnv(), stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
}, 360_000);

afterAll(async () => {
  for (const child of children) if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  await removeContainers();
  if (available) for (const tag of tags) await podman(['rmi', '-f', tag], { allowFailure: true });
  if (shop) rmSync(shop, { recursive: true, force: true });
}, 60_000);

/** `npx payment-service-sdk sandbox image ...args` in the fresh folder. */
function sandboxImage(args: string[], env?: NodeJS.ProcessEnv) {
  return run('npx', ['--no-install', 'payment-service-sdk', 'sandbox', 'image', ...args], { cwd: shop, env, timeoutMs: 240_000 });
}

describe('sandbox image from the installed package', () => {
  it('says so, exit 1, when neither Docker nor podman works, and refuses a bad tag with exit 2', async () => {
    // The bin itself on this Node, with a PATH that has neither docker nor podman.
    const empty = mkdtempSync(join(tmpdir(), 'payment-sdk-no-engines-'));
    const began = performance.now();
    const neither = await run(process.execPath, [join(shop, 'node_modules/.bin/payment-service-sdk'), 'sandbox', 'image'], {
      cwd: shop,
      env: environment({ PATH: empty }),
      timeoutMs: 60_000,
    });
    rmSync(empty, { recursive: true, force: true });
    // At once: no wait for an engine that is not there.
    expect(performance.now() - began).toBeLessThan(10_000);
    expect(neither.code).toBe(1);
    expect(neither.stdout).toBe('');
    expect(neither.stderr).toMatch(
      /neither Docker nor podman can build the image \(docker: not installed; podman: not installed\): start Docker \(or Docker Desktop\), or install podman/,
    );
    const bad = await run(
      process.execPath,
      [join(shop, 'node_modules/.bin/payment-service-sdk'), 'sandbox', 'image', '--tag', 'Not An Image'],
      {
        cwd: shop,
        timeoutMs: 60_000,
      },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--tag must be an image name/);
  }, 60_000);

  it.runIf(available)(
    'builds with podman where no Docker engine answers, offline on the local base, prints the tag, and the image answers on 127.0.0.1',
    async () => {
      const tag = `localhost/payment-sdk-tarball-${process.pid}:test`;
      tags.push(tag);
      const started = performance.now();
      const built = await sandboxImage(['--tag', tag, '--base', BASE_IMAGE]);
      console.info(`[sandbox image] built from the tarball with podman in ${Math.round(performance.now() - started)} ms`);
      expect(built.code, built.stderr).toBe(0);
      expect(built.stdout).toBe(`${tag}\n`);
      expect(built.stderr).toMatch(new RegExp(`Building ${tag} with podman from .*/node_modules/payment-service-sdk on ${BASE_IMAGE}`));

      const version = (JSON.parse(readFileSync(join(shop, 'node_modules/payment-service-sdk/package.json'), 'utf8')) as { version: string })
        .version;
      const labels = JSON.parse((await podman(['image', 'inspect', '--format', '{{json .Labels}}', tag])).stdout);
      expect(labels).toMatchObject({ 'org.opencontainers.image.version': version, 'org.opencontainers.image.licenses': 'MIT' });
      expect(JSON.parse((await podman(['image', 'inspect', '--format', '{{json .HealthCheck}}', tag])).stdout).Test).toEqual([
        'CMD',
        'node',
        '/app/healthcheck.cjs',
      ]);
      // /app holds the installed package's CommonJS files and the health check, nothing else.
      const listing = await podman([
        'run',
        '--rm',
        '--entrypoint',
        'node',
        tag,
        '-e',
        "console.log(JSON.stringify(require('node:fs').readdirSync('/app/dist')))",
      ]);
      const cjs = readdirSync(join(shop, 'node_modules/payment-service-sdk/dist')).filter((name) => name.endsWith('.cjs'));
      expect((JSON.parse(listing.stdout) as string[]).sort()).toEqual(cjs.sort());

      const container = await runContainer({ image: tag });
      const client = new PaymentClient({ apiKey: 'sk_test_sandbox', webcode: 'SANDBOX', baseUrl: container.baseUrl, maxRetries: 0 });
      const session = await client.sessions.create({
        amount: { value: 2599, currency: 'EUR' },
        urlOk: 'https://shop.example/ok',
        urlKo: 'https://shop.example/ko',
      });
      expect(session.paymentUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${container.port}/pay-external-test/`));
      expect((await fetch(session.paymentUrl)).status).toBe(200);
      await container.remove();
    },
    300_000,
  );

  it.runIf(available && dockerClient)(
    'builds with Docker where an engine answers (here the Docker API podman serves)',
    async () => {
      const started = execFileSync(join(ROOT, 'scripts/podman.sh'), ['socket', 'start'], {
        env: podmanEnv(),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 30_000,
      });
      const folder = /^export PAYMENT_SDK_PODMAN_DIR=(.*)$/m.exec(started)?.[1] ?? '';
      const dockerHost = /^export DOCKER_HOST=(.*)$/m.exec(started)?.[1] ?? '';
      try {
        const tag = `localhost/payment-sdk-tarball-docker-${process.pid}:test`;
        tags.push(tag);
        const built = await sandboxImage(['--tag', tag, '--base', BASE_IMAGE], environment({ DOCKER_HOST: dockerHost }));
        expect(built.code, built.stderr).toBe(0);
        expect(built.stdout).toBe(`${tag}\n`);
        expect(built.stderr).toContain(`Building ${tag} with docker from `);
        const container = await runContainer({ image: tag });
        expect((await fetch(`${container.baseUrl}/openapi.json`)).status).toBe(200);
        await container.remove();
      } finally {
        execFileSync(join(ROOT, 'scripts/podman.sh'), ['socket', 'stop', folder], { env: podmanEnv(), stdio: 'ignore', timeout: 30_000 });
      }
    },
    300_000,
  );
});
