/**
 * The sandbox's container image in tests, through podman (scripts/podman.sh; no Docker engine runs
 * on these machines). Like test/support/services.ts: where podman is missing the tests are skipped
 * with a warning, and under REQUIRE_CONTAINERS=1 (.ci/run) they fail instead.
 *
 * `ensureImage()` builds the image from dist (and the local base image) when it is missing or was
 * built from another dist, Dockerfile, .dockerignore or health check; `runContainer()` starts a container with a
 * bounded lifetime (podman's `--timeout`, and a timer of this process), and `removeContainers()` (or
 * the container's `remove()`) removes it whatever happened. Containers are reached only through ports published on
 * 127.0.0.1, or on the host's network (`--network host`).
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** The image `npm run image` builds. */
export const IMAGE = `payment-service-sdk/sandbox:${VERSION}`;
/** The local stand-in of node:24-slim that `scripts/podman.sh base` builds. */
export const BASE_IMAGE = 'localhost/payment-sdk-node-base:24';
/** The label the image carries with the digest of what it was built from (see {@link buildDigest}). */
export const DIGEST_LABEL = 'payment-service-sdk.build-digest';
const PODMAN_SH = join(ROOT, 'scripts/podman.sh');
const HINT = 'install podman and runc (scripts/podman.sh install, as root)';

function required(): boolean {
  const value = process.env.REQUIRE_CONTAINERS;
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

/** The environment of every podman call: this process's, with the repository's containers.conf unless one is named. */
export function podmanEnv(): NodeJS.ProcessEnv {
  return { ...process.env, CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? join(ROOT, 'scripts/containers.conf') };
}

/**
 * Whether containers can run here; `false` after a warning when podman is missing, and a throw
 * instead under REQUIRE_CONTAINERS=1.
 */
export function containersAvailable(): boolean {
  try {
    execFileSync('podman', ['--version'], { stdio: 'ignore', timeout: 10_000, env: podmanEnv() });
    return true;
  } catch {
    const message = `podman is not available: the container tests need it; ${HINT}`;
    if (required()) throw new Error(`${message}. REQUIRE_CONTAINERS is set, so they may not be skipped.`);
    console.warn(`[container tests skipped] ${message}.`);
    return false;
  }
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `podman ...args` (killed after `timeoutMs`, default 60 s); rejects on a non-zero exit unless `allowFailure`. */
export function podman(args: string[], options: { timeoutMs?: number; allowFailure?: boolean } = {}): Promise<Run> {
  return new Promise((done, fail) => {
    execFile(
      'podman',
      args,
      { env: podmanEnv(), timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1_048_576 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        if (code !== 0 && !options.allowFailure) return fail(new Error(`podman ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
        done({ code, stdout, stderr });
      },
    );
  });
}

/** The digest of what the image is made of (dist's CommonJS files, the Dockerfile, .dockerignore, the health check), as `npm run image` labels it. */
export function buildDigest(): string {
  const hash = createHash('sha256');
  const files = readdirSync(join(ROOT, 'dist'))
    .filter((name) => name.endsWith('.cjs'))
    .sort()
    .map((name) => join('dist', name));
  for (const file of [...files, 'Dockerfile', '.dockerignore', join('container', 'healthcheck.cjs')]) {
    hash.update(file);
    hash.update(readFileSync(join(ROOT, file)));
  }
  return hash.digest('hex');
}

async function imageDigest(): Promise<string | undefined> {
  const inspected = await podman(['image', 'inspect', '--format', `{{ index .Labels "${DIGEST_LABEL}" }}`, IMAGE], { allowFailure: true });
  return inspected.code === 0 ? inspected.stdout.trim() : undefined;
}

/**
 * The image, built against the local base (`scripts/podman.sh base`, then `image --no-build`) when it
 * is missing or was built from other files (its build digest label). Builds dist first if there is none.
 */
export async function ensureImage(): Promise<string> {
  if (!existsSync(join(ROOT, 'dist/cli.cjs')))
    execFileSync(process.execPath, [join(ROOT, 'scripts/build-quiet.mjs')], { cwd: ROOT, stdio: 'inherit', timeout: 300_000 });
  if ((await imageDigest()) === buildDigest()) return IMAGE;
  // Test files run in parallel workers: one builds, the others wait for it and find the image made.
  await withLock(async () => {
    if ((await imageDigest()) === buildDigest()) return;
    execFileSync(PODMAN_SH, ['image', '--no-build'], {
      cwd: ROOT,
      env: podmanEnv(),
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 300_000,
    });
  });
  const digest = await imageDigest();
  if (digest !== buildDigest()) throw new Error(`${IMAGE} was built but its ${DIGEST_LABEL} label (${digest}) is not the current files'`);
  return IMAGE;
}

/** Runs `work` holding a lock folder under the temp folder (waiting up to 5 min; a lock older than that is stale). */
async function withLock(work: () => Promise<void>): Promise<void> {
  const lock = join(tmpdir(), 'payment-sdk-image.lock');
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 300_000) rmSync(lock, { recursive: true, force: true });
      else if (attempt > 3_000) throw new Error(`${lock} was held for 5 minutes: remove it if no image build runs`);
      else await new Promise((done) => setTimeout(done, 100));
    }
  }
  try {
    await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export interface Container {
  name: string;
  /** The host port published for the container's 4010 on 127.0.0.1; `undefined` on the host's network. */
  port: number | undefined;
  /** `http://127.0.0.1:<port>` through the published port (or the address given on the host network). */
  baseUrl: string;
  logs(): Promise<string>;
  /** Removes the container (stopped or not) and its anonymous volumes. */
  remove(): Promise<void>;
}

const running = new Map<string, NodeJS.Timeout>();

/** The host port podman published for the container's `4010/tcp`. */
export async function publishedPort(name: string): Promise<number> {
  const { stdout } = await podman(['port', name, '4010/tcp']);
  const port = Number(/:(\d+)\s*$/m.exec(stdout)?.[1]);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no published port for ${name}: ${stdout}`);
  return port;
}

/**
 * Starts a container of the image (detached) and waits until it answers. `options` are podman's
 * own (`-e`, `-v`, `--read-only`, ...); `args` follow the image name (the sandbox's flags). Without
 * `network: 'host'` its 4010 is published on a free port of 127.0.0.1; with it, `baseUrl` must be
 * given (the address the sandbox listens on with `--host 127.0.0.1 --port N`). It is removed after
 * `lifetimeMs` (default 120 s) whatever happens, and by {@link removeContainers}.
 */
export async function runContainer(
  settings: { options?: string[]; args?: string[]; network?: 'host'; baseUrl?: string; lifetimeMs?: number; image?: string } = {},
): Promise<Container> {
  const name = `payment-sdk-test-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const lifetimeMs = settings.lifetimeMs ?? 120_000;
  const network = settings.network === 'host' ? ['--network', 'host'] : ['-p', '127.0.0.1::4010'];
  await podman([
    'run',
    '-d',
    '--name',
    name,
    '--timeout',
    String(Math.ceil(lifetimeMs / 1000)),
    ...network,
    ...(settings.options ?? []),
    settings.image ?? IMAGE,
    ...(settings.args ?? []),
  ]);
  const timer = setTimeout(() => void removeContainer(name), lifetimeMs);
  timer.unref();
  running.set(name, timer);
  const port = settings.network === 'host' ? undefined : await publishedPort(name);
  const baseUrl = settings.baseUrl ?? `http://127.0.0.1:${port}`;
  const container: Container = {
    name,
    port,
    baseUrl,
    logs: async () => {
      const { stdout, stderr } = await podman(['logs', name], { allowFailure: true });
      return `${stdout}${stderr}`;
    },
    remove: () => removeContainer(name),
  };
  await waitForAnswer(baseUrl, container);
  return container;
}

/** Resolves once `baseUrl` answers its OpenAPI document (polled every 25 ms, 10 s at most). */
export async function waitForAnswer(baseUrl: string, container?: Container): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    try {
      const response = await fetch(`${baseUrl}/openapi.json`, { method: 'HEAD', signal: AbortSignal.timeout(1_000) });
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 25));
  }
  throw new Error(`${baseUrl} did not answer within 10 s${container ? `; logs:\n${await container.logs()}` : ''}`);
}

async function removeContainer(name: string): Promise<void> {
  clearTimeout(running.get(name));
  running.delete(name);
  await podman(['rm', '-f', '-v', '-t', '0', name], { allowFailure: true });
}

/** Removes every container {@link runContainer} started and has not removed yet. */
export async function removeContainers(): Promise<void> {
  await Promise.all([...running.keys()].map((name) => removeContainer(name)));
}
