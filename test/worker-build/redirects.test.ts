import { vi } from 'vitest';

/**
 * test/redirects.test.ts again with the hooks run as the build for runtimes that forbid code generation
 * runs them: dist/worker/ links src/core/hooks-route.ts in place of ky-route.ts (see tsup.config.ts).
 * It must pass as it is, with ky never loaded.
 */
vi.mock('../../src/core/ky-route.js', () => import('../../src/core/hooks-route.js'));
vi.mock('ky', () => {
  throw new Error('ky was loaded');
});

await import('../redirects.test.js');
