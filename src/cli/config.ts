/**
 * Where the CLI's client settings come from, first found first: flags, the SDK's environment
 * variables (`PAYMENT_SERVICE_*`), then a profile of the optional file
 * `~/.config/payment-service/config.json` (`$XDG_CONFIG_HOME` is honoured; `PAYMENT_SERVICE_CONFIG`
 * names another file). The file is written with mode 0600, and secrets are never printed.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from './io.js';

/** The settings a profile may hold. */
export const PROFILE_KEYS = ['apiKey', 'webcode', 'baseUrl', 'environment', 'clientSecret'] as const;
export type ProfileKey = (typeof PROFILE_KEYS)[number];
export type Profile = { [K in ProfileKey]?: string | undefined };

const SECRET_KEYS: readonly ProfileKey[] = ['apiKey', 'clientSecret'];

/** The SDK's variable for each setting. */
export const ENV_NAMES: Record<ProfileKey, string> = {
  apiKey: 'PAYMENT_SERVICE_API_KEY',
  webcode: 'PAYMENT_SERVICE_WEBCODE',
  baseUrl: 'PAYMENT_SERVICE_BASE_URL',
  environment: 'PAYMENT_SERVICE_ENVIRONMENT',
  clientSecret: 'PAYMENT_SERVICE_CLIENT_SECRET',
};

interface ConfigFile {
  profiles: Record<string, Profile>;
}

export function configPath(env: NodeJS.ProcessEnv): string {
  if (env.PAYMENT_SERVICE_CONFIG) return env.PAYMENT_SERVICE_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'payment-service', 'config.json');
}

export function readConfig(path: string): ConfigFile {
  if (!existsSync(path)) return { profiles: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new UsageError(`${path} is not valid JSON: fix it or move it aside`);
  }
  const profiles = (parsed as { profiles?: unknown }).profiles;
  if (typeof profiles !== 'object' || profiles === null) throw new UsageError(`${path} has no "profiles" object: fix it or move it aside`);
  return { profiles: profiles as Record<string, Profile> };
}

/** Writes the file whole, through a temporary file, readable by its owner only. */
export function writeConfig(path: string, config: ConfigFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}

/** A secret shown as its last four characters only. */
export function mask(key: ProfileKey, value: string): string {
  if (!SECRET_KEYS.includes(key)) return value;
  return value.length <= 8 ? '****' : `****${value.slice(-4)}`;
}

export function profileKey(name: string): ProfileKey {
  if (!(PROFILE_KEYS as readonly string[]).includes(name))
    throw new UsageError(`unknown setting ${name}: one of ${PROFILE_KEYS.join(', ')}`);
  return name as ProfileKey;
}

/**
 * The settings from flags, variables and the profile, each with where it came from (`flagSources`
 * names the origin of a flag's value when it is not the flag itself, as `--api-key-file`).
 */
export function resolveSettings(
  flags: Profile,
  env: NodeJS.ProcessEnv,
  profileName: string | undefined,
  flagSources: Partial<Record<ProfileKey, string>> = {},
): { settings: Profile; sources: Partial<Record<ProfileKey, string>> } {
  const path = configPath(env);
  const config = readConfig(path);
  const name = profileName ?? env.PAYMENT_SERVICE_PROFILE ?? 'default';
  const profile = config.profiles[name];
  if (profileName !== undefined && !profile) throw new UsageError(`no profile ${profileName} in ${path}`);
  const settings: Profile = {};
  const sources: Partial<Record<ProfileKey, string>> = {};
  for (const key of PROFILE_KEYS) {
    const candidates: [string | undefined, string][] = [
      [flags[key], flagSources[key] ?? 'flag'],
      [env[ENV_NAMES[key]], ENV_NAMES[key]],
      [profile?.[key], `profile ${name}`],
    ];
    const found = candidates.find(([value]) => value !== undefined && value !== '');
    if (found) {
      settings[key] = found[0];
      sources[key] = found[1];
    }
  }
  return { settings, sources };
}
