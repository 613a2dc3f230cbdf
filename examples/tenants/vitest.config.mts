import { defineConfig } from 'vitest/config';

// One sandbox for the run (globalSetup), one tenant per test file (sandboxTenant in the file).
export default defineConfig({
  test: {
    include: ['examples/tenants/*.test.ts'],
    globalSetup: ['examples/tenants/global-setup.ts'],
  },
});
