/**
 * The SDK's errors in the CLI's words: a field path becomes the flag that set it, a client option
 * the flag, the variable and the `config set` that give it. Secrets are never part of a message.
 */
import { ApiError, type ConfigurationError, RequestValidationError } from '../index.js';
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

/**
 * A failure as `--format json` (or `ndjson`) writes it: one JSON line on stderr, the same fields for
 * every failure. `status`, `code` and `traceId` are the service's answer's (`null` when there was
 * none: a usage mistake, a network failure); `name` is the SDK error's class (`NotFoundError`,
 * `ConnectionError`, ...) or `UsageError`; `exitCode` is the process's. A refused request
 * (`RequestValidationError`) adds `issues`, each with the flag that set the field.
 */
export interface ErrorLine {
  name: string;
  message: string;
  status: number | null;
  code: number | null;
  traceId: string | null;
  exitCode: number;
  issues?: { path: string; flag: string; message: string }[];
}

/** The SDK error behind `error`: itself, or the `cause` of a failure the CLI worded (an offline terminal). */
function apiErrorOf(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof ApiError ? cause : undefined;
}

/** The {@link ErrorLine} of a failure: `message` as the prose line says it, without its `Name: ` prefix. */
export function errorLine(error: unknown, message: string, exitCode: number, name?: string): ErrorLine {
  const api = apiErrorOf(error);
  const named = name ?? (error instanceof Error ? error.name : 'Error');
  const text = message.startsWith(`${named}: `) ? message.slice(named.length + 2) : message;
  return {
    name: named,
    message: text,
    status: api?.status ?? null,
    code: api?.code ?? null,
    traceId: api?.traceId ?? null,
    exitCode,
    ...(error instanceof RequestValidationError && {
      issues: error.issues.map((issue) => ({ path: issue.path, flag: issue.path ? flagOf(issue.path) : '', message: issue.message })),
    }),
  };
}

/**
 * Whether a command line asks for its errors as JSON: `--format json` or `--format ndjson` given
 * (as `--format=json` too). Read from the words themselves, so that a mistake the parser stops at
 * before reading `--format` is still written so. The default format (JSON off a terminal) keeps
 * errors in prose: only an explicit `--format` changes them.
 */
export function wantsJsonErrors(argv: readonly string[]): boolean {
  let format: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index] ?? '';
    if (word === '--') break;
    if (word === '--format') format = argv[++index];
    else if (word.startsWith('--format=')) format = word.slice('--format='.length);
  }
  return format === 'json' || format === 'ndjson';
}
