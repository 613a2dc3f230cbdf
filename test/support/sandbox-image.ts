/**
 * The sandbox's image behind the Docker API that testcontainers uses. On top of
 * test/support/containers.ts (podman, the image built from the current dist): `DOCKER_HOST` when it
 * is set, else podman's API service started here (`scripts/podman.sh socket start`) and stopped by
 * `stop()`. Where podman is missing the tests are skipped with a warning; under
 * REQUIRE_CONTAINERS=1 (.ci/run) they fail instead.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { containersAvailable, ensureImage, podmanEnv, ROOT } from './containers.js';

const PODMAN_SH = join(ROOT, 'scripts/podman.sh');

export interface DockerApi {
  /** The image name, as `new PaymentSandboxContainer(image)` takes it. */
  image: string;
  /** Stops the API service this module started, if it started one. */
  stop(): void;
}

/** Applies the `export NAME=value` lines `podman.sh socket start` prints to this process's environment. */
function applyExports(lines: string): Record<string, string> {
  const exported: Record<string, string> = {};
  for (const [, name = '', value = ''] of lines.matchAll(/^export ([A-Z_]+)=(.*)$/gm)) exported[name] = value;
  Object.assign(process.env, exported);
  return exported;
}

/** The image and a Docker API serving it; `undefined` after a warning where podman is missing (throws under REQUIRE_CONTAINERS=1). */
export async function dockerApi(): Promise<DockerApi | undefined> {
  if (!containersAvailable()) return undefined;
  const image = await ensureImage();
  if (process.env.DOCKER_HOST) return { image, stop: () => undefined };
  const started = applyExports(
    execFileSync(PODMAN_SH, ['socket', 'start'], {
      env: podmanEnv(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 30_000,
    }),
  );
  const folder = started.PAYMENT_SDK_PODMAN_DIR;
  if (!folder || !started.DOCKER_HOST) throw new Error('scripts/podman.sh socket start printed no DOCKER_HOST');
  return {
    image,
    stop: () => {
      execFileSync(PODMAN_SH, ['socket', 'stop', folder], { env: podmanEnv(), stdio: 'ignore', timeout: 30_000 });
      delete process.env.DOCKER_HOST;
    },
  };
}
