/**
 * Shared by the examples: a client for the real service when PAYMENT_SERVICE_API_KEY,
 * PAYMENT_SERVICE_WEBCODE and PAYMENT_SERVICE_BASE_URL are set (plus PAYMENT_SERVICE_CLIENT_SECRET
 * for the redirect data), otherwise a client of a fresh local sandbox.
 */
import { pathToFileURL } from 'node:url';
import { PaymentClient } from 'payment-service-sdk';
import { createSandbox, type Sandbox, type SandboxOptions } from 'payment-service-sdk/sandbox';

export interface Setup {
  client: PaymentClient;
  clientSecret: string;
  sandbox: Sandbox | undefined;
  close(): Promise<void>;
}

export async function connect(sandboxOptions: SandboxOptions = {}): Promise<Setup> {
  if (process.env.PAYMENT_SERVICE_API_KEY && process.env.PAYMENT_SERVICE_BASE_URL) {
    return {
      client: new PaymentClient(),
      clientSecret: process.env.PAYMENT_SERVICE_CLIENT_SECRET ?? '',
      sandbox: undefined,
      close: async () => {},
    };
  }
  const sandbox = createSandbox({ posDelayMs: 0, ...sandboxOptions });
  const { baseUrl } = await sandbox.listen();
  const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl });
  return { client, clientSecret: sandbox.clientSecrets.test, sandbox, close: () => sandbox.close() };
}

/** True when `moduleUrl` is the script Node was started with (not an import by a test). */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && moduleUrl === pathToFileURL(process.argv[1]).href;
}
