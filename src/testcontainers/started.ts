/**
 * `StartedPaymentSandboxContainer`: a running sandbox container, with its address, credentials,
 * options for `new PaymentClient` and tenants for test workers.
 */
import {
  AbstractStartedContainer,
  type RestartOptions,
  type StartedTestContainer,
  type StopOptions,
  type StoppedTestContainer,
} from 'testcontainers';
import { ConfigurationError } from '../core/errors.js';
import type { Environment } from '../core/options.js';
import { type SandboxTenant, type SandboxTenantOptions, sandboxTenant } from '../testing/tenant.js';
import { SANDBOX_PORT } from './settings.js';
import type { SandboxCredentials } from './startup.js';

/**
 * How long `stop()` and `restart()` wait after SIGTERM before killing, in ms. The sandbox finishes
 * the requests in flight, closes its store and exits within 2 s of SIGTERM; testcontainers' own
 * default, 0, kills it at once.
 */
const STOP_TIMEOUT_MS = 5_000;

/** Options for `new PaymentClient(...)`: the sandbox's address, webcode and a key of one environment. */
export interface SandboxClientOptions {
  apiKey: string;
  webcode: string;
  baseUrl: string;
  environment: Environment;
}

/** What {@link StartedPaymentSandboxContainer.createTenant} takes: the tenant's webcode, name and client environment. */
export type SandboxContainerTenantOptions = Omit<SandboxTenantOptions, 'baseUrl' | 'controlKey'>;

function environmentOf(environment: unknown, method: string): Environment {
  if (environment === 'test' || environment === 'live') return environment;
  throw new ConfigurationError('environment', `${method} takes 'test' or 'live', got ${JSON.stringify(environment)}`);
}

/** A started {@link PaymentSandboxContainer}: everything of testcontainers' started container, and the sandbox's own. */
export class StartedPaymentSandboxContainer extends AbstractStartedContainer {
  readonly #credentials: SandboxCredentials;
  readonly #hostPort: number | undefined;

  /** @internal Made by `PaymentSandboxContainer.start()`. */
  constructor(started: StartedTestContainer, credentials: SandboxCredentials, hostPort?: number) {
    super(started);
    this.#credentials = credentials;
    this.#hostPort = hostPort;
  }

  /**
   * The sandbox's address as this process reaches it: `http://<host>:<mapped port>`, or
   * `http://127.0.0.1:<port>` with host networking. The addresses the sandbox gives out
   * (`paymentUrl`, the OpenAPI `servers`) follow it. Read it again after `restart()`: the engine
   * may publish another port.
   */
  getBaseUrl(): string {
    if (this.#hostPort !== undefined) return `http://127.0.0.1:${this.#hostPort}`;
    const host = this.getHost();
    return `http://${host.includes(':') ? `[${host}]` : host}:${this.getMappedPort(SANDBOX_PORT)}`;
  }

  /** The sandbox's webcode (`SANDBOX` unless the image was given another). */
  getWebcode(): string {
    return this.#credentials.webcode;
  }

  /** The API key of `environment` (default `test`). */
  getApiKey(environment: Environment = 'test'): string {
    return this.#credentials.keys[environmentOf(environment, 'getApiKey')];
  }

  /**
   * Options for `new PaymentClient(...)` against this sandbox, for `environment` (default `test`):
   * `{ apiKey, webcode, baseUrl, environment }`. Add your own (`maxRetries`, `logger`...) with a spread.
   */
  getClientOptions(environment: Environment = 'test'): SandboxClientOptions {
    const checked = environmentOf(environment, 'getClientOptions');
    return {
      apiKey: this.#credentials.keys[checked],
      webcode: this.#credentials.webcode,
      baseUrl: this.getBaseUrl(),
      environment: checked,
    };
  }

  /** The client secret of `environment` (default `test`): it signs the `urlOk` redirect's `data`, for `decodeRedirectData`. */
  getClientSecret(environment: Environment = 'test'): string {
    return this.#credentials.clientSecrets[environmentOf(environment, 'getClientSecret')];
  }

  /** Stops the container: SIGTERM, so the sandbox closes its store, then a kill after `timeout` ms (default 5 000). */
  override stop(options: Partial<StopOptions> = {}): Promise<StoppedTestContainer> {
    return super.stop({ timeout: STOP_TIMEOUT_MS, ...options });
  }

  /** Restarts the container (SIGTERM first, as `stop()`) and waits until the sandbox answers again. */
  override restart(options: Partial<RestartOptions> = {}): Promise<void> {
    return super.restart({ timeout: STOP_TIMEOUT_MS, ...options });
  }

  /**
   * A tenant of this sandbox (`POST /_sandbox/tenants` with its own key): a webcode, keys, client
   * secrets and records of its own, and a client for it, so that parallel test workers share one
   * container without seeing each other's data. See `sandboxTenant` of `payment-service-sdk/testing`.
   */
  createTenant(options: SandboxContainerTenantOptions = {}): Promise<SandboxTenant> {
    return sandboxTenant({ ...options, baseUrl: this.getBaseUrl(), controlKey: this.#credentials.keys.test });
  }
}
