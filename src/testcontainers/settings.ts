/**
 * What the builder methods of `PaymentSandboxContainer` collect, checked as they are given, and the
 * `payment-service-sdk sandbox` flags they become (the image takes that command's flags as its
 * arguments). Pure: no container runtime needed, so it is tested on its own.
 */
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { ConfigurationError } from '../core/errors.js';
import type { FaultRule } from '../sandbox/fault-rule.js';

/** The sandbox's port inside the container, as the image declares it (`EXPOSE 4010`). */
export const SANDBOX_PORT = 4010;

/** Where the image keeps its state (`VOLUME /data`). */
export const DATA_DIR = '/data';

/**
 * The host address the sandbox's port is published on unless `withHostIp` gives another: this
 * machine's loopback only, as the README tells `docker run` users (`-p 127.0.0.1:4010:4010`). The
 * sandbox in a container keeps the documented keys and an open dashboard.
 */
export const DEFAULT_HOST_IP = '127.0.0.1';

/** Where a fault rules file is copied into the container, outside `/data` and any tmpfs. */
export const FAULTS_FILE = '/payment-sandbox/faults.json';

/** The sandbox settings collected by the builder. */
export interface SandboxContainerSettings {
  webhookUrls: string[];
  seed?: number | undefined;
  posDelayMs?: number | [number, number] | undefined;
  /** Rules given as values: written to {@link FAULTS_FILE}. */
  faultRules?: readonly FaultRule[] | undefined;
  /** A rules file of the host: copied to {@link FAULTS_FILE}. */
  faultRulesFile?: string | undefined;
  /** Host networking: the port the sandbox listens on, on the host's 127.0.0.1. */
  hostPort?: number | undefined;
}

const MAX_POS_DELAY_MS = 600_000;

function isInteger(value: unknown, min: number, max: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
}

/** An absolute http(s) URL, as `--webhook-url` takes it. */
export function checkWebhookUrl(url: unknown): string {
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:')
    throw new ConfigurationError('withWebhookUrl', `withWebhookUrl needs an absolute http(s) URL, got ${JSON.stringify(url)}`);
  return url as string;
}

/** A seed of the sandbox's randomness: an integer from 0 to 2^32 - 1, as `--seed` takes it. */
export function checkSeed(seed: unknown): number {
  if (!isInteger(seed, 0, 2 ** 32 - 1))
    throw new ConfigurationError('withSeed', `withSeed needs an integer from 0 to ${2 ** 32 - 1}, got ${String(seed)}`);
  return seed;
}

/** The simulated terminal time: N ms, or a `[min, max]` range, each from 0 to 600 000. */
export function checkPosDelay(delay: unknown): number | [number, number] {
  if (isInteger(delay, 0, MAX_POS_DELAY_MS)) return delay;
  if (Array.isArray(delay) && delay.length === 2) {
    const [min, max] = delay as unknown[];
    if (isInteger(min, 0, MAX_POS_DELAY_MS) && isInteger(max, min, MAX_POS_DELAY_MS)) return [min, max];
  }
  throw new ConfigurationError(
    'withPosDelayMs',
    `withPosDelayMs needs an integer of ms from 0 to ${MAX_POS_DELAY_MS} or a [min, max] pair with min <= max, got ${JSON.stringify(delay)}`,
  );
}

/**
 * Fault rules as values (an array, checked by the sandbox itself at start, which names the rule it
 * refuses) or the path of a JSON file holding such an array on this machine.
 */
export function checkFaultRules(rules: unknown): Pick<SandboxContainerSettings, 'faultRules' | 'faultRulesFile'> {
  if (Array.isArray(rules)) return { faultRules: rules as FaultRule[], faultRulesFile: undefined };
  if (typeof rules === 'string' && rules !== '') {
    const file = resolve(rules);
    if (!existsSync(file)) throw new ConfigurationError('withFaultRules', `withFaultRules found no file at ${file}`);
    return { faultRules: undefined, faultRulesFile: file };
  }
  throw new ConfigurationError('withFaultRules', 'withFaultRules needs an array of fault rules or the path of a JSON file holding one');
}

/** A port of the host for host networking: 1 to 65 535. */
export function checkHostPort(port: unknown): number {
  if (!isInteger(port, 1, 65_535))
    throw new ConfigurationError('withHostNetwork', `withHostNetwork needs a port from 1 to 65535, got ${String(port)}`);
  return port;
}

/** A host address to publish on: an IPv4 or IPv6 literal (`127.0.0.1`, `0.0.0.0`, `::1`, `192.168.1.20`). */
export function checkHostIp(address: unknown): string {
  const bare = typeof address === 'string' ? address.replace(/^\[(.*)\]$/, '$1') : '';
  if (isIP(bare) === 0)
    throw new ConfigurationError(
      'withHostIp',
      `withHostIp needs an IP address of the host ('127.0.0.1', '0.0.0.0', '::1'...), got ${JSON.stringify(address)}`,
    );
  return bare;
}

/** Whether `host` (an address or a name) is this machine's loopback: `localhost`, 127.0.0.0/8 or `::1`. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare.endsWith('.localhost') || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/** One port binding of the Docker API's `HostConfig.PortBindings`. */
export interface PortBinding {
  HostIp?: string;
  HostPort?: string;
}

/** Whether `address` is a wildcard: every interface. */
export function isWildcard(address: string): boolean {
  return address === '0.0.0.0' || address === '::';
}

/**
 * The port bindings with `hostIp` on each that names no address of its own: without one, the
 * engine publishes on every interface of its machine (`0.0.0.0` and `::`). A wildcard `hostIp` is
 * left out, as the engine's own "every interface": podman 4's Docker API takes a `HostIp` of
 * `0.0.0.0` literally, listens on it, and forwards nothing it receives (checked with podman 4.3).
 * The host ports stay as they were (`0`, a random one, unless `withExposedPorts({ container, host })` fixed one).
 */
export function bindOn(bindings: Record<string, PortBinding[] | undefined> | undefined, hostIp: string): Record<string, PortBinding[]> {
  const bound: Record<string, PortBinding[]> = {};
  for (const [port, list] of Object.entries(bindings ?? {}))
    bound[port] = (list ?? [{}]).map((binding) => (binding.HostIp || isWildcard(hostIp) ? binding : { ...binding, HostIp: hostIp }));
  return bound;
}

/**
 * Refuses the default loopback binding when the engine is on another machine (`DOCKER_HOST=tcp://docker:2375`,
 * a test process in a container of its own): the port would be published on that machine's
 * loopback, where this process cannot reach it. An address given with `withHostIp` is taken as it is.
 */
export function checkEngineHost(engineHost: string, hostIp: string, given: boolean): void {
  if (given || !isLoopback(hostIp) || isLoopback(engineHost)) return;
  throw new ConfigurationError(
    'withHostIp',
    `The container engine is reached at ${engineHost}, not on this machine's loopback: a port published on its ${hostIp} cannot be reached from here. Choose the address to publish on with withHostIp(...): the engine machine's address this process reaches, or '0.0.0.0' for all of its interfaces (then anyone who reaches that machine reaches the sandbox, its documented keys and its dashboard).`,
  );
}

/** A Docker volume name: what the engine accepts as one (a path has a `/`, a volume name cannot). */
const VOLUME_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

/**
 * The source of the `/data` mount: a named volume as given, or a host folder resolved to an
 * absolute path (the engine would take a relative one for a volume name).
 */
export function dataVolumeSource(source: unknown): string {
  if (typeof source !== 'string' || source === '' || source.includes(':'))
    throw new ConfigurationError(
      'withDataVolume',
      `withDataVolume needs a volume name or a folder path without ":", got ${JSON.stringify(source)}`,
    );
  if (VOLUME_NAME.test(source) && !isAbsolute(source)) return source;
  return resolve(source);
}

/** The `payment-service-sdk sandbox` flags of the settings, in a stable order. */
export function sandboxFlags(settings: SandboxContainerSettings): string[] {
  const flags: string[] = [];
  if (settings.hostPort !== undefined) flags.push('--host', '127.0.0.1', '--port', String(settings.hostPort));
  for (const url of settings.webhookUrls) flags.push('--webhook-url', url);
  if (settings.seed !== undefined) flags.push('--seed', String(settings.seed));
  if (settings.posDelayMs !== undefined)
    flags.push('--pos-delay-ms', Array.isArray(settings.posDelayMs) ? settings.posDelayMs.join('-') : String(settings.posDelayMs));
  if (settings.faultRules !== undefined || settings.faultRulesFile !== undefined) flags.push('--faults', FAULTS_FILE);
  return flags;
}
