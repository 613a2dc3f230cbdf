/**
 * `PaymentSandboxContainer`: the sandbox's container image as a testcontainers `GenericContainer`,
 * with builder methods for the sandbox's main settings.
 */
import { GenericContainer, getContainerRuntimeClient } from 'testcontainers';
import { ConfigurationError } from '../core/errors.js';
import type { FaultRule } from '../sandbox/fault-rule.js';
import { VERSION } from '../version.js';
import {
  bindOn,
  checkEngineHost,
  checkFaultRules,
  checkHostIp,
  checkHostPort,
  checkPosDelay,
  checkSeed,
  checkWebhookUrl,
  DATA_DIR,
  DEFAULT_HOST_IP,
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
 * The image a `PaymentSandboxContainer` runs by default, tagged with the package's version
 * (`payment-service-sdk/sandbox:0.1.0`): the one `npx payment-service-sdk sandbox image` builds
 * from the installed package (or `npm run image` from a clone of its repository).
 */
export const PAYMENT_SANDBOX_IMAGE = `payment-service-sdk/sandbox:${VERSION}`;

/** How long `start()` waits for the startup line after the sandbox answered, at most. */
const STARTUP_LINE_TIMEOUT_MS = 10_000;

/**
 * The sandbox of `payment-service-sdk sandbox` in a container, for tests in any testcontainers
 * setup. Port 4010 is published on a random port of the host's `127.0.0.1` only (see
 * {@link withHostIp} for another address); `start()` waits until the sandbox answers
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
  #hostIp = DEFAULT_HOST_IP;
  #hostIpGiven = false;

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
   * The address of the host the sandbox's port is published on; default `127.0.0.1`, so that only
   * this machine reaches the sandbox, which in a container keeps the documented keys, client secrets
   * and an open dashboard. `'0.0.0.0'` (or `'::'`) publishes it on every interface of the engine's
   * machine, as a port published without an address is: anyone who reaches that machine then
   * reaches the sandbox. Give an
   * address when the engine runs on another machine than the tests (`DOCKER_HOST=tcp://docker:2375`,
   * tests in a container of their own): there `start()` refuses the default, since the engine
   * machine's loopback cannot be reached from here. Not with {@link withHostNetwork}, which
   * publishes nothing (the sandbox then listens on the host's `127.0.0.1`).
   *
   * ```ts
   * const sandbox = await new PaymentSandboxContainer().withHostIp('0.0.0.0').start();
   * ```
   */
  withHostIp(address: string): this {
    this.#hostIp = checkHostIp(address);
    this.#hostIpGiven = true;
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
    if (this.#hostNetwork && this.#hostIpGiven)
      throw new ConfigurationError(
        'withHostIp',
        "withHostIp publishes the sandbox's port on an address, and withHostNetwork publishes no port (the sandbox listens on the host's 127.0.0.1): use one of them",
      );
    if (!this.#hostNetwork) {
      checkEngineHost((await getContainerRuntimeClient()).info.containerRuntime.host, this.#hostIp, this.#hostIpGiven);
      // Every published port on the chosen address only: without one the engine binds 0.0.0.0 and ::.
      this.hostConfig.PortBindings = bindOn(this.hostConfig.PortBindings, this.#hostIp);
    } else {
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
