/**
 * Whether the sandbox's image can be run here through the Docker API that testcontainers uses
 * (`eval "$(scripts/podman.sh socket start)"` exports it). Locally a missing engine or image skips
 * the tests that need it with a warning; under REQUIRE_CONTAINERS=1 (.ci/run) it fails them.
 */
import { getContainerRuntimeClient, ImageName } from 'testcontainers';
import { PAYMENT_SANDBOX_IMAGE } from '../../src/testcontainers/index.js';

const HINT =
  'run `scripts/podman.sh image` and `eval "$(scripts/podman.sh socket start)"` first (`scripts/podman.sh socket stop` when done)';

function required(): boolean {
  const value = process.env.REQUIRE_CONTAINERS;
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

function unavailable(reason: string): undefined {
  const message = `${reason}: the container tests need a container engine and the sandbox image; ${HINT}`;
  if (required()) throw new Error(`${message}. REQUIRE_CONTAINERS is set, so they may not be skipped.`);
  console.warn(`[container tests skipped] ${message}.`);
  return undefined;
}

/** The sandbox image's name when an engine answers and has it; otherwise `undefined` after a warning (throws under REQUIRE_CONTAINERS=1). */
export async function sandboxImage(image = PAYMENT_SANDBOX_IMAGE): Promise<string | undefined> {
  if (!process.env.DOCKER_HOST) return unavailable('DOCKER_HOST is not set');
  try {
    const client = await getContainerRuntimeClient();
    if (!(await client.image.exists(ImageName.fromString(image)))) return unavailable(`the engine has no image ${image}`);
  } catch (error) {
    return unavailable(`no container engine answers at ${process.env.DOCKER_HOST} (${(error as Error).message})`);
  }
  return image;
}
