/**
 * A tenant of a running sandbox for one test worker, made over HTTP: the sandbox runs once (in the
 * test runner's global setup, another process), each worker gets its own webcode, keys and data.
 */
import { PaymentClient } from '../client.js';
import type { Environment } from '../core/options.js';

/** Where the sandbox is and the owner's key that may make tenants. */
export interface SandboxTenantOptions {
  /** The sandbox's base URL, `http://127.0.0.1:<port>`. */
  baseUrl: string;
  /** A key of the sandbox's own (its `keys.test` or `keys.live`): tenants' keys cannot make tenants. */
  controlKey: string;
  /** The tenant's webcode (1 to 32 characters `A`-`Z`, `0`-`9`, `_`). Default: a generated one. */
  webcode?: string | undefined;
  /** A label for the tenant, shown in listings. Default: the webcode. */
  name?: string | undefined;
  /** The environment of the returned `client`. Default `test`. */
  environment?: Environment | undefined;
}

/** One worker's tenant: its client, credentials, and how to remove it. */
export interface SandboxTenant {
  /** A client of the tenant on `environment` (no retries: a test sees failures as they come). */
  client: PaymentClient;
  webcode: string;
  name: string;
  keys: { test: string; live: string };
  clientSecrets: { test: string; live: string };
  baseUrl: string;
  /** Removes the tenant and its records (`DELETE /_sandbox/tenants/{webcode}`). */
  remove(): Promise<void>;
}

/**
 * Makes a tenant of the sandbox at `baseUrl` (`POST /_sandbox/tenants`) and a client for it.
 * Throws an `Error` naming the status and the sandbox's message when the sandbox refuses (a webcode
 * in use, a key that is not the owner's); the keys are never in it.
 */
export async function sandboxTenant(options: SandboxTenantOptions): Promise<SandboxTenant> {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const body = JSON.stringify({
    ...(options.webcode === undefined ? {} : { webcode: options.webcode }),
    ...(options.name === undefined ? {} : { name: options.name }),
  });
  const made = await controlCall<Omit<SandboxTenant, 'client' | 'baseUrl' | 'remove'>>(
    baseUrl,
    options.controlKey,
    'POST',
    'tenants',
    body,
  );
  const environment = options.environment ?? 'test';
  const client = new PaymentClient({ apiKey: made.keys[environment], webcode: made.webcode, baseUrl, environment, maxRetries: 0 });
  return {
    ...made,
    client,
    baseUrl,
    remove: async () => {
      await controlCall(baseUrl, options.controlKey, 'DELETE', `tenants/${encodeURIComponent(made.webcode)}`);
    },
  };
}

async function controlCall<T>(baseUrl: string, key: string, method: 'POST' | 'DELETE', path: string, body?: string): Promise<T> {
  const response = await fetch(`${baseUrl}/_sandbox/${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  let parsed: { success?: boolean; data?: T; error?: { message?: string } } | undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok || parsed?.success !== true || parsed.data === undefined) {
    const reason = parsed?.error?.message ?? `an answer that is not the sandbox's (${text.slice(0, 80)})`;
    throw new Error(`The sandbox at ${baseUrl} refused ${method} /_sandbox/${path}: ${response.status} ${reason}`);
  }
  return parsed.data;
}
