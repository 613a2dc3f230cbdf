/**
 * What the builder methods of `PaymentSandboxContainer` collect, checked as they are given, and the
 * `payment-service-sdk sandbox` flags they become (the image takes that command's flags as its
 * arguments). Pure: no container runtime needed, so it is tested on its own.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { ConfigurationError } from '../core/errors.js';
import type { FaultRule } from '../sandbox/fault-rule.js';

/** The sandbox's port inside the container, as the image declares it (`EXPOSE 4010`). */
export const SANDBOX_PORT = 4010;

/** Where the image keeps its state (`VOLUME /data`). */
export const DATA_DIR = '/data';

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
