/**
 * `PaymentSandboxContainer`: the sandbox's container image as a testcontainers `GenericContainer`,
 * with builder methods for the sandbox's main settings.
 */
import { GenericContainer } from 'testcontainers';
import type { FaultRule } from '../sandbox/fault-rule.js';
import { VERSION } from '../version.js';
import {
  checkFaultRules,
  checkHostPort,
  checkPosDelay,
  checkSeed,
  checkWebhookUrl,
  DATA_DIR,
  dataVolumeSource,
  FAULTS_FILE,
  SANDBOX_PORT,
  type SandboxContainerSettings,
  sandboxFlags,
} from './settings.js';
import { StartedPaymentSandboxContainer } from './started.js';
import { freeLoopbackPort, readCredentials } from './startup.js';
import { SandboxReadyStrategy } from './wait.js';

/**
 * The image a `PaymentSandboxContainer` runs by default: the one `npm run image` builds from this
 * package's repository, tagged with the package's version (`payment-service-sdk/sandbox:0.1.0`).
 */
export const PAYMENT_SANDBOX_IMAGE = `payment-service-sdk/sandbox:${VERSION}`;

/** How long `start()` waits for the startup line after the sandbox answered, at most. */
const STARTUP_LINE_TIMEOUT_MS = 10_000;

/**
 * The sandbox of `payment-service-sdk sandbox` in a container, for tests in any testcontainers
 * setup. Port 4010 is published on a random host port; `start()` waits until the sandbox answers
 * and resolves to a {@link StartedPaymentSandboxContainer} that knows its address, webcode, keys
 * and client secrets.
 *
 * ```ts
 * import { PaymentClient } from 'payment-service-sdk';
 * import { PaymentSandboxContainer } from 'payment-service-sdk/testcontainers';
 *
 * const sandbox = await new PaymentSandboxContainer().withSeed(7).withPosDelayMs(0).start();
 * const client = new PaymentClient(sandbox.getClientOptions());
 * // ...
 * await sandbox.stop();
 * ```
 *
 * The builder methods become the sandbox command's flags; `withCommand([...])` adds more flags after
 * them (any flag of `payment-service-sdk sandbox`). Everything else of `GenericContainer`
 * (`withEnvironment`, `withName`, `withReuse`...) works as usual.
 */
export class PaymentSandboxContainer extends GenericContainer {
  readonly #settings: SandboxContainerSettings = { webhookUrls: [] };
  #extraFlags: string[] = [];
  #hostNetwork = false;

  /** @param image The image to run; default {@link PAYMENT_SANDBOX_IMAGE}. */
  constructor(image: string = PAYMENT_SANDBOX_IMAGE) {
    super(image);
    this.withExposedPorts(SANDBOX_PORT);
  }

  /**
   * POST every webhook to `url` as well (`--webhook-url`; repeatable). From a container, the
   * host's `127.0.0.1` is the container's own: to reach a receiver on the host, use
   * {@link withHostNetwork} (or an address of the host the engine routes to the host).
   */
  withWebhookUrl(url: string): this {
    this.#settings.webhookUrls.push(checkWebhookUrl(url));
    return this;
  }

  /**
   * Keeps the sandbox's state in `source`, mounted at `/data`: a named volume (`payment-data`) or a
   * folder of the host (any path with a `/`, resolved to an absolute one; the container's user, uid
   * 1000, must be able to write it). Records, tenants and idempotency entries then survive a
   * restart and a new container on the same volume.
   */
  withDataVolume(source: string): this {
    return this.withBindMounts([{ source: dataVolumeSource(source), target: DATA_DIR, mode: 'rw' }]);
  }

  /** The seed of the sandbox's randomness: tokens, references, delays, fault rules' `probability` (`--seed`). */
  withSeed(seed: number): this {
    this.#settings.seed = checkSeed(seed);
    return this;
  }

  /** The simulated terminal time of POS payments, in ms or a `[min, max]` range (`--pos-delay-ms`; default 2000-3000). */
  withPosDelayMs(delay: number | [number, number]): this {
    this.#settings.posDelayMs = checkPosDelay(delay);
    return this;
  }

  /**
   * Fault rules active from the start (`--faults`): an array of rules as `POST /_sandbox/faults`
   * takes them, or the path of a JSON file holding one. Copied into the container; a rule the
   * sandbox refuses makes `start()` fail with the sandbox's message.
   */
  withFaultRules(rules: readonly FaultRule[] | string): this {
    Object.assign(this.#settings, checkFaultRules(rules));
    return this;
  }

  /**
   * Runs the container on the host's network (`--network host`), the sandbox listening on the
   * host's `127.0.0.1:port` (default: a free port picked at start), so that webhooks can reach a
   * receiver listening on the host's `127.0.0.1`. Needs a local Linux engine (Docker Engine or
   * podman; Docker Desktop only with its host networking turned on). No port is published then.
   */
  withHostNetwork(port?: number): this {
    this.#settings.hostPort = port === undefined ? undefined : checkHostPort(port);
    this.#hostNetwork = true;
    return this;
  }

  /** Flags of `payment-service-sdk sandbox` to pass after the builder's own (`['--max-body-bytes', '2048']`). */
  override withCommand(flags: string[]): this {
    this.#extraFlags = [...flags];
    return this;
  }

  /** Starts the container and waits until the sandbox answers `GET /openapi.json`. */
  override async start(): Promise<StartedPaymentSandboxContainer> {
    const settings = { ...this.#settings, webhookUrls: [...this.#settings.webhookUrls] };
    if (this.#hostNetwork) {
      settings.hostPort ??= await freeLoopbackPort();
      // Nothing is published on the host's network: no port for testcontainers to map, no binding for the engine.
      this.exposedPorts = [];
      delete this.hostConfig.PortBindings;
      this.withNetworkMode('host');
    }
    if (settings.faultRules)
      this.withCopyContentToContainer([{ content: JSON.stringify(settings.faultRules), target: FAULTS_FILE, mode: 0o644 }]);
    else if (settings.faultRulesFile)
      this.withCopyFilesToContainer([{ source: settings.faultRulesFile, target: FAULTS_FILE, mode: 0o644 }]);
    super.withCommand([...sandboxFlags(settings), ...this.#extraFlags]);
    const { hostPort } = settings;
    const strategy = new SandboxReadyStrategy((host, ports) =>
      hostPort === undefined
        ? `http://${host.includes(':') ? `[${host}]` : host}:${ports.getBinding(SANDBOX_PORT)}`
        : `http://127.0.0.1:${hostPort}`,
    );
    if (this.startupTimeoutMs !== undefined) strategy.withStartupTimeout(this.startupTimeoutMs);
    this.withWaitStrategy(strategy);
    const started = await super.start();
    try {
      const credentials = await readCredentials(await started.logs(), STARTUP_LINE_TIMEOUT_MS);
      return new StartedPaymentSandboxContainer(started, credentials, hostPort);
    } catch (error) {
      await started.stop();
      throw error;
    }
  }
}
