/**
 * The SDK's errors in the CLI's words: a field path becomes the flag that set it, a client option
 * the flag, the variable and the `config set` that give it. Secrets are never part of a message.
 */
import type { ConfigurationError, RequestValidationError } from '../index.js';
import { ENV_NAMES, type ProfileKey } from './config.js';

/** Each setting as a person knows it: its name in a sentence and its flag. */
const SETTINGS: Record<ProfileKey, { noun: string; flag: string }> = {
  apiKey: { noun: 'API key', flag: '--api-key' },
  webcode: { noun: 'webcode', flag: '--webcode' },
  baseUrl: { noun: 'base URL', flag: '--base-url' },
  environment: { noun: 'environment', flag: '--env' },
  clientSecret: { noun: 'client secret', flag: '--secret' },
};

/** Request fields whose flag is not their name in kebab case; the ids are positional arguments. */
const FLAGS: Record<string, string> = {
  'amount.value': '--amount',
  'amount.currency': '--currency',
  isPreAuth: '--pre-auth',
  syncFromProvider: '--sync',
  sessionId: '<sessionId>',
  posPaymentId: '<posPaymentId>',
};

function isSetting(option: string): option is ProfileKey {
  return Object.hasOwn(SETTINGS, option);
}

/** The flag that sets a request field: `urlOk` is `--url-ok`, `amount.value` is `--amount`. */
export function flagOf(path: string): string {
  return FLAGS[path] ?? `--${path.replaceAll('.', '-').replaceAll(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

/** What the SDK refused, flag by flag: `--amount must be greater than 0; --url-ok must be ...`. */
export function validationMessage(error: RequestValidationError): string {
  return error.issues.map((issue) => (issue.path ? `${flagOf(issue.path)} ${issue.message}` : issue.message)).join('; ');
}

/** A setting nobody gave: where it can come from. */
export function missingSetting(key: ProfileKey): string {
  const { noun, flag } = SETTINGS[key];
  return `no ${noun}: pass ${flag}, set ${ENV_NAMES[key]}, or run payment-service-sdk config set ${key} …`;
}

/** A client option the SDK refused, with where the CLI's settings come from instead of `new PaymentClient()`. */
export function settingMessage(error: ConfigurationError): string {
  if (!isSetting(error.option)) return error.message;
  if (error.message.startsWith('Missing option')) return missingSetting(error.option);
  const { noun, flag } = SETTINGS[error.option];
  const said = error.message.replace(`Option "${error.option}"`, `the ${noun}`).replace(/^A /, 'a ');
  return `${said}: fix ${flag}, ${ENV_NAMES[error.option]} or the profile's ${error.option} (config show says which is used)`;
}
