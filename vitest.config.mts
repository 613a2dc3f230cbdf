import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  // Examples import the package by name, as users do: point those names at the sources.
  resolve: {
    alias: [
      { find: /^payment-service-sdk\/sandbox$/, replacement: src('sandbox/index.ts') },
      { find: /^payment-service-sdk\/testing$/, replacement: src('testing/index.ts') },
      { find: /^payment-service-sdk\/testcontainers$/, replacement: src('testcontainers/index.ts') },
      { find: /^payment-service-sdk\/stores\/(sqlite|postgres|redis)$/, replacement: src('stores/$1.ts') },
      { find: /^payment-service-sdk$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // A bound, not a measure: with two files at a time on 2 cores, a test that spawns the CLI some
    // forty times took over 15 s next to the queue proofs.
    testTimeout: 60_000,
    // Two files at a time, also on a 2-core machine (vitest's default there is one): many files mostly
    // wait (on child processes, kill intervals, a browser, PostgreSQL and Redis), and one at a time
    // left CI idle for minutes.
    maxWorkers: 2,
    typecheck: { enabled: false },
  },
});
