/**
 * Vitest `globalSetup`: one sandbox for the whole run, its URL and owner key handed to the workers.
 * Each test file then makes its own tenant with `sandboxTenant` (see checkout.test.ts).
 */
import { createSandbox } from 'payment-service-sdk/sandbox';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    sandboxUrl: string;
    sandboxKey: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const sandbox = createSandbox({ posDelayMs: 0 });
  const { baseUrl } = await sandbox.listen();
  project.provide('sandboxUrl', baseUrl);
  project.provide('sandboxKey', sandbox.keys.test);
  return () => sandbox.close();
}
