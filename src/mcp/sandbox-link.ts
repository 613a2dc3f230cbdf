/**
 * The sandbox's control API (`/_sandbox/...`) as the MCP server reaches it: over HTTP (or the
 * `fetch` given, for a sandbox in the same process), with the client's key, unwrapping the
 * envelope. A refusal is a {@link SandboxControlRefusal} with the status, code, message and traceId.
 */
import type { Environment } from '../core/options.js';

/** Where the sandbox is, and the key its control API takes (a key of the server's environment). */
export interface McpSandbox {
  /** The sandbox's origin, as `sandbox.listen()` resolves it or as its banner prints it. */
  baseUrl: string;
  /** Default: the client's API key. */
  apiKey?: string | undefined;
  /** Default: the global `fetch`. A sandbox in the same process can be reached with `(request) => sandbox.handle(request)`. */
  fetch?: ((request: Request) => Promise<Response>) | undefined;
}

/** The sandbox refused a control request (or did not answer). */
export class SandboxControlRefusal extends Error {
  override name = 'SandboxControlRefusal';
  constructor(
    message: string,
    readonly status: number | null,
    readonly code: number | null,
    readonly traceId: string | null,
  ) {
    super(message);
  }
}

const CONTROL_TIMEOUT_MS = 30_000;

export interface SandboxLink {
  environment: Environment;
  request(method: string, path: string, query?: Record<string, unknown>, body?: unknown, signal?: AbortSignal): Promise<unknown>;
  /** A document of the sandbox (`/_sandbox/openapi.json`), as text. */
  text(path: string): Promise<string>;
}

export function sandboxLink(sandbox: McpSandbox, apiKey: string, environment: Environment): SandboxLink {
  const root = sandbox.baseUrl.replace(/\/+$/, '');
  const send = sandbox.fetch ?? ((request: Request) => fetch(request));
  return {
    environment,
    async request(method, path, query, body, signal) {
      const url = new URL(`${root}/_sandbox/${path}`);
      for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
      const timeout = AbortSignal.timeout(CONTROL_TIMEOUT_MS);
      let response: Response;
      try {
        response = await send(
          new Request(url, {
            method,
            headers: { 'x-api-key': sandbox.apiKey ?? apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
          }),
        );
      } catch (error) {
        throw new SandboxControlRefusal(
          `The sandbox at ${root} did not answer ${method} /_sandbox/${path}: ${(error as Error).message}`,
          null,
          null,
          null,
        );
      }
      const envelope = (await response.json().catch(() => ({}))) as {
        success?: unknown;
        data?: unknown;
        error?: { message?: unknown; code?: unknown; traceId?: unknown };
      };
      if (response.ok && envelope.success === true) return envelope.data;
      const error = envelope.error ?? {};
      throw new SandboxControlRefusal(
        `The sandbox refused ${method} /_sandbox/${path}: ${typeof error.message === 'string' ? error.message : `HTTP ${response.status}`}`,
        response.status,
        typeof error.code === 'number' ? error.code : null,
        typeof error.traceId === 'string' ? error.traceId : null,
      );
    },
    async text(path) {
      const response = await send(new Request(`${root}${path}`, { signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS) }));
      if (!response.ok)
        throw new SandboxControlRefusal(`The sandbox answered ${response.status} to GET ${path}`, response.status, null, null);
      return response.text();
    },
  };
}
