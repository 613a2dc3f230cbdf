import type { Environment } from '../schemas/common.js';
import { ConfigurationError, type RequestContext } from './errors.js';
import type { RetryBudgetOptions } from './retry.js';

export type { Environment };

/** A console-like logger: `debug` gets one line per attempt, `info` POS recovery steps, `warn` retries and listings cut short. */
export interface Logger {
  debug(message: string, details?: Record<string, unknown>): void;
  info(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
}

/** What `hooks.onRetry` is told before the SDK waits and resends. */
export interface RetryInfo extends RequestContext {
  /** The attempt that failed, counting from 1. */
  attempt: number;
  /** Why it failed. */
  error: Error;
  /** How long the SDK waits before the next attempt, in milliseconds. */
  delayMs: number;
}

/**
 * Hooks around every HTTP attempt, for adapters that trace or decorate the exchange. A client with
 * `beforeRequest` or `afterResponse` sends its attempts through ky, which runs them (in the build for
 * Workers, edge runtimes and browsers, the SDK runs them itself, the same way, without ky); one
 * without sends them straight to `fetch`, which is cheaper.
 */
export interface ClientHooks {
  /** Called before each retry, after the decision to retry and before the wait. */
  onRetry?: (info: RetryInfo) => void | Promise<void>;
  /** Called before each attempt. May return a replacement `Request`. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing is the common case.
  beforeRequest?: (request: Request) => void | Request | Promise<void | Request>;
  /** Called after each attempt with a clone of the response. May return a replacement `Response`. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing is the common case.
  afterResponse?: (request: Request, response: Response) => void | Response | Promise<void | Response>;
}

/** Options of {@link PaymentClient}. Missing ones fall back to `PAYMENT_SERVICE_*` environment variables. */
export interface ClientOptions {
  /** API key sent as `X-API-KEY`. Falls back to `PAYMENT_SERVICE_API_KEY`. */
  apiKey?: string | undefined;
  /** The business identifier bound to the key. Falls back to `PAYMENT_SERVICE_WEBCODE`. */
  webcode?: string | undefined;
  /** `'test'` (default) or `'live'`. Falls back to `PAYMENT_SERVICE_ENVIRONMENT`. */
  environment?: Environment | undefined;
  /** The service's base address, for example `https://pay.example.com`. Falls back to `PAYMENT_SERVICE_BASE_URL`. */
  baseUrl?: string | undefined;
  /** Per-attempt timeout in milliseconds. Default 60 000. */
  timeout?: number | undefined;
  /** Per-attempt timeout of `pos.createPayment`, above the service's 240 s. Default 270 000. */
  posTimeout?: number | undefined;
  /** Retries after the first attempt, for failures that are safe to retry. Default 2. */
  maxRetries?: number | undefined;
  /**
   * A `fetch` implementation to use instead of the global one. Called as `fetch(request, { signal })`
   * for each attempt, with the attempt's signal, which aborts at the timeout or when the call's own
   * `signal` aborts. The request has `redirect: 'manual'`: keep it, so that a 3xx is never followed
   * (the SDK turns it into an `ApiError`) and the API key never goes to another origin.
   */
  fetch?: typeof fetch | undefined;
  /**
   * The client's retry budget, a token bucket shared by all its calls so that an outage does not
   * multiply the load: retries spend tokens (5, or 10 after a timeout or connection failure),
   * successes refund them. Default `{ capacity: 500 }`; `false` turns it off.
   */
  retryBudget?: RetryBudgetOptions | false | undefined;
  /** Name and version of the adapter or app, appended to the `User-Agent`. */
  appInfo?: { name: string; version?: string | undefined } | undefined;
  /** Hooks around every HTTP attempt. */
  hooks?: ClientHooks | undefined;
  /** Receives one debug line per attempt (method, path, status, duration, attempt) and retry warnings. */
  logger?: Logger | undefined;
  /** Check responses against the schemas. Default `true`. */
  validateResponses?: boolean | undefined;
  /**
   * OpenTelemetry spans, when the app has `@opentelemetry/api` installed (an optional peer
   * dependency, imported with the first request, never with the package; without it nothing
   * changes). Default `true`; `false` turns this client's spans off.
   *
   * Each call is one `CLIENT` span named by its route template (`POST /payment/session`,
   * `GET /payment/session/{sessionId}`), sent to the globally registered tracer provider and ended
   * after the last attempt, with the attributes `http.request.method`, `url.template`,
   * `server.address`, `server.port`, `http.response.status_code`, `http.request.resend_count`,
   * `error.type` (the error's class name, with the span status `ERROR`), `payment_service.attempts`,
   * `payment_service.idempotency_key`, `payment_service.error_code`, `payment_service.trace_id` and
   * `payment_service.environment`. Each retry is a `retry` event (`payment_service.attempt`,
   * `payment_service.delay_ms`, `error.type`). A listing makes one span per page; a call refused
   * before sending (`RequestValidationError`) makes none. Never recorded: the API key, the query
   * string, the full URL, bodies.
   */
  telemetry?: boolean | undefined;
  /**
   * Allow a client in a web browser. Off by default, because the API key would be readable by
   * anyone who opens the page: call the service from your backend instead.
   */
  dangerouslyAllowBrowser?: boolean | undefined;
}

/** Options after defaults and environment variables are applied and every value is checked. */
export interface ResolvedOptions {
  apiKey: string;
  webcode: string;
  environment: Environment;
  /** Origin and optional path prefix, without a trailing slash. */
  baseUrl: string;
  timeout: number;
  posTimeout: number;
  maxRetries: number;
  retryBudget: RetryBudgetOptions | false;
  fetch: typeof fetch | undefined;
  appInfo: { name: string; version?: string | undefined } | undefined;
  hooks: ClientHooks | undefined;
  logger: Logger | undefined;
  validateResponses: boolean;
  telemetry: boolean;
}

const ENV = {
  apiKey: 'PAYMENT_SERVICE_API_KEY',
  webcode: 'PAYMENT_SERVICE_WEBCODE',
  baseUrl: 'PAYMENT_SERVICE_BASE_URL',
  environment: 'PAYMENT_SERVICE_ENVIRONMENT',
} as const;

function readEnv(name: string): string | undefined {
  const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
  return value === '' ? undefined : value;
}

/** Longest delay a timer can hold. */
export const MAX_TIMER_MS = 2_147_483_647;

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);

/** True for `localhost`, `127.0.0.0/8` and `::1`: the only hosts a live client may reach over plain http. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || hostname.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(hostname);
}

function requireString(option: string, value: unknown, envName: string): string {
  if (value === undefined) {
    throw new ConfigurationError(option, `Missing option "${option}": pass it to new PaymentClient() or set ${envName}`);
  }
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigurationError(option, `Option "${option}" must be a non-empty string`);
  }
  return value;
}

function checkCount(option: string, value: unknown, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ConfigurationError(option, `Option "${option}" must be an integer from ${min} to ${max}`);
  }
  return value;
}

function resolveBaseUrl(raw: string, environment: Environment): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigurationError('baseUrl', 'Option "baseUrl" must be an absolute URL, for example https://pay.example.com');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigurationError('baseUrl', `Option "baseUrl" must use http or https, not ${url.protocol.slice(0, -1)}`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new ConfigurationError('baseUrl', 'Option "baseUrl" must not contain credentials, a query or a fragment');
  }
  if (environment === 'live' && url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new ConfigurationError('baseUrl', 'A live client needs an https baseUrl (plain http is allowed only for loopback hosts)');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** True in a web page (a window with a document), false in Node, Deno, Bun and workers. */
function inBrowser(): boolean {
  const scope = globalThis as { window?: { document?: unknown }; document?: unknown };
  return typeof scope.window === 'object' && scope.window !== null && typeof scope.document === 'object' && scope.document !== null;
}

/** Applies environment variables and defaults, and checks every option. Throws {@link ConfigurationError}. */
export function resolveOptions(options: ClientOptions = {}): ResolvedOptions {
  if (inBrowser() && options.dangerouslyAllowBrowser !== true) {
    throw new ConfigurationError(
      'dangerouslyAllowBrowser',
      'PaymentClient refuses to run in a browser, where the API key would be exposed to anyone: call the service from your backend, or pass dangerouslyAllowBrowser: true if you accept the risk',
    );
  }
  const apiKey = requireString('apiKey', options.apiKey ?? readEnv(ENV.apiKey), ENV.apiKey);
  // A key with control characters or spaces would be rejected by fetch with a message that quotes it.
  if (!/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new ConfigurationError('apiKey', 'Option "apiKey" must contain only visible ASCII characters, with no spaces');
  }
  const webcode = requireString('webcode', options.webcode ?? readEnv(ENV.webcode), ENV.webcode);
  const environment = options.environment ?? readEnv(ENV.environment) ?? 'test';
  if (environment !== 'test' && environment !== 'live') {
    throw new ConfigurationError('environment', 'Option "environment" must be "test" or "live"');
  }
  const baseUrl = resolveBaseUrl(requireString('baseUrl', options.baseUrl ?? readEnv(ENV.baseUrl), ENV.baseUrl), environment);
  if (options.fetch !== undefined && typeof options.fetch !== 'function') {
    throw new ConfigurationError('fetch', 'Option "fetch" must be a function');
  }
  if (options.fetch === undefined && typeof globalThis.fetch !== 'function') {
    throw new ConfigurationError('fetch', 'No global fetch in this runtime: pass the "fetch" option');
  }
  const appInfo = options.appInfo;
  if (appInfo !== undefined && (typeof appInfo?.name !== 'string' || !/^[\w.@/-]+$/.test(appInfo.name))) {
    throw new ConfigurationError('appInfo', 'Option "appInfo.name" must be a non-empty token (letters, digits, . _ - / @)');
  }
  if (appInfo?.version !== undefined && !/^[\w.+-]+$/.test(appInfo.version)) {
    throw new ConfigurationError('appInfo', 'Option "appInfo.version" must be a version token (letters, digits, . + - _)');
  }
  for (const flag of ['validateResponses', 'telemetry'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean') {
      throw new ConfigurationError(flag, `Option "${flag}" must be a boolean`);
    }
  }
  const budget = options.retryBudget;
  if (budget !== undefined && budget !== false) {
    if (typeof budget !== 'object' || budget === null) {
      throw new ConfigurationError('retryBudget', 'Option "retryBudget" must be an object or false');
    }
    for (const key of ['capacity', 'retryCost', 'timeoutCost'] as const) checkCount(`retryBudget.${key}`, budget[key], 0, 0);
  }
  for (const hook of ['beforeRequest', 'afterResponse', 'onRetry'] as const) {
    const value = options.hooks?.[hook];
    if (value !== undefined && typeof value !== 'function') {
      throw new ConfigurationError('hooks', `Option "hooks.${hook}" must be a function`);
    }
  }
  return {
    apiKey,
    webcode,
    environment,
    baseUrl,
    timeout: checkCount('timeout', options.timeout, 60_000, 1, MAX_TIMER_MS),
    posTimeout: checkCount('posTimeout', options.posTimeout, 270_000, 1, MAX_TIMER_MS),
    maxRetries: checkCount('maxRetries', options.maxRetries, 2, 0),
    retryBudget: budget ?? {},
    fetch: options.fetch,
    appInfo,
    hooks: options.hooks,
    logger: options.logger,
    validateResponses: options.validateResponses ?? true,
    telemetry: options.telemetry ?? true,
  };
}
