/**
 * The sandbox's control API (`/_sandbox/...`) as `listen` and `trigger` reach it: over HTTP, with
 * the client's key, unwrapping the service's envelopes. Against the real service none of this
 * exists, and {@link findSandbox} says so by resolving `undefined`.
 */
import type { Environment } from '../index.js';

/** How long the probe for a sandbox and each control request may take. */
const CONTROL_TIMEOUT_MS = 10_000;

/** The control API answered with a failure, or could not be reached (exit 1). */
export class SandboxControlError extends Error {
  override name = 'SandboxControlError';

  /**
   * @param answered whether the address answered at all (a refusal), or not (network, timeout).
   * @param status the HTTP status of the refusal; `code` the service's error code in it.
   */
  constructor(
    message: string,
    readonly answered: boolean,
    readonly status?: number,
    readonly code?: unknown,
  ) {
    super(message);
  }
}

/** The sandbox refused the API key (401, or 403 with code 11008): nothing it sends would arrive (exit 1). */
export class KeyRefusedError extends Error {
  override name = 'KeyRefusedError';
}

/** A sandbox found at the client's base URL: control requests with its key. */
export interface SandboxLink {
  baseUrl: string;
  environment: Environment;
  /** A control request; `path` is relative to `/_sandbox/` (`clock`, `test/sessions/ID/pay`...). */
  request<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: Record<string, unknown>): Promise<T>;
}

interface Envelope {
  success?: unknown;
  data?: unknown;
  error?: { message?: unknown; code?: unknown };
}

function linkTo(baseUrl: string, apiKey: string, environment: Environment): SandboxLink {
  const root = baseUrl.replace(/\/+$/, '');
  return {
    baseUrl: root,
    environment,
    async request<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: Record<string, unknown>): Promise<T> {
      let response: Response;
      try {
        response = await fetch(`${root}/_sandbox/${path}`, {
          method,
          headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS),
        });
      } catch (error) {
        throw new SandboxControlError(
          `The sandbox at ${root} did not answer ${method} /_sandbox/${path}: ${(error as Error).message}`,
          false,
        );
      }
      const envelope = (await response.json().catch(() => ({}))) as Envelope;
      if (!response.ok || envelope.success !== true) {
        const message = typeof envelope.error?.message === 'string' ? envelope.error.message : `HTTP ${response.status}`;
        throw new SandboxControlError(
          `The sandbox refused ${method} /_sandbox/${path}: ${message}`,
          true,
          response.status,
          envelope.error?.code,
        );
      }
      return envelope.data as T;
    },
  };
}

/**
 * The sandbox at `baseUrl`, or `undefined` when the address is not one (the real service answers
 * the probe `GET /_sandbox/clock` with no success envelope). Unreachable: rejects; the key
 * refused (401, or 403 with code 11008): rejects with {@link KeyRefusedError}.
 */
export async function findSandbox(settings: {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  environment?: string | undefined;
}): Promise<SandboxLink | undefined> {
  if (!settings.baseUrl || !settings.apiKey) return undefined;
  const link = linkTo(settings.baseUrl, settings.apiKey, settings.environment === 'live' ? 'live' : 'test');
  try {
    const clock = await link.request<{ epochMs?: unknown }>('GET', 'clock');
    return typeof clock?.epochMs === 'number' ? link : undefined;
  } catch (error) {
    if (!(error instanceof SandboxControlError) || !error.answered) throw error;
    if (error.status === 401 || (error.status === 403 && error.code === 11008)) {
      const environment = link.environment === 'live' ? 'Live' : 'Test';
      throw new KeyRefusedError(
        `the sandbox at ${link.baseUrl} refused the API key (${error.status}${error.status === 403 ? ', 11008' : ''}): ` +
          `give its ${environment} key with --api-key, PAYMENT_SERVICE_API_KEY or config set apiKey (the sandbox's banner prints its keys)`,
      );
    }
    return undefined;
  }
}

/** A command that works against the sandbox only met another address (exit 1): said in one line. */
export class NotASandboxError extends Error {
  override name = 'NotASandboxError';
}

/**
 * The sandbox at the client's base URL, for a command that has no meaning elsewhere (`sessions pay`,
 * `logs`): the real service refuses it in one line, {@link NotASandboxError}.
 */
export async function sandboxOnly(
  settings: { baseUrl?: string | undefined; apiKey?: string | undefined; environment?: string | undefined },
  what: string,
): Promise<SandboxLink> {
  const link = await findSandbox(settings);
  if (!link) throw new NotASandboxError(`${what} works against the sandbox only, and ${settings.baseUrl ?? 'the base URL'} is not one`);
  return link;
}
