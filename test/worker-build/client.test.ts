import { vi } from 'vitest';

/**
 * test/client.test.ts again with the modules the build for runtimes that forbid code generation links
 * in place of ky, p-retry and uuid (dist/worker/: see tsup.config.ts): the hooks run by
 * src/core/hooks-route.ts, retries by src/core/retry-loop.ts, keys from src/core/random-uuid.ts.
 * It must pass as it is, with none of those packages loaded.
 */
vi.mock('../../src/core/ky-route.js', () => import('../../src/core/hooks-route.js'));
vi.mock('../../src/core/p-retry.js', () => import('../../src/core/retry-loop.js'));
vi.mock('../../src/core/uuid.js', () => import('../../src/core/random-uuid.js'));
for (const name of ['ky', 'p-retry', 'uuid']) {
  vi.doMock(name, () => {
    throw new Error(`${name} was loaded`);
  });
}

await import('../client.test.js');
