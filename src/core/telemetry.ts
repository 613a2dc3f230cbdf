/**
 * OpenTelemetry tracing, optional: spans through `@opentelemetry/api` when the app has it installed,
 * nothing at all when it has not.
 *
 * `@opentelemetry/api` is an optional peer dependency. It is imported with the first request (this
 * module comes with the network chunk, see `loadNetwork` in transport.ts), once per process, and
 * never with the package itself; when the import fails, because the package is absent or the
 * runtime cannot resolve package names, tracing is off for good: no error, no warning. Bundlers:
 * esbuild (and so wrangler) bundles the package when the app has it and leaves the import to fail
 * quietly at run time when it has not; webpack and Turbopack are told to leave the import alone
 * (`webpackIgnore`), so that an app without the package still builds, and import it at run time
 * from `node_modules`. The specifier stays a literal: tools that refuse computed specifiers
 * (miniflare) and file tracers (Next.js output tracing) can read it. Spans go
 * to whatever tracer provider the app registers globally (`trace.setGlobalTracerProvider`, or an
 * OpenTelemetry SDK that does it). The client option `telemetry: false` turns spans off for one
 * client (the package, when installed, is still imported once).
 *
 * Each call of a resource method is one span, of kind `CLIENT`, named by the method and route
 * template of its endpoint (`POST /payment/session`, `GET /payment/session/{sessionId}`: the
 * template, never the id), and ended once, after its last attempt. Listings make one span per page
 * request; POS recovery one per request it makes. A call refused before anything is sent
 * (`RequestValidationError`) makes no span. During the call, its span is the active span, so spans
 * of an instrumented `fetch` and of the client's `beforeRequest` and `afterResponse` hooks nest under
 * it (with a context manager registered).
 *
 * Attributes, with OpenTelemetry's HTTP semantic convention names where one exists:
 * - `http.request.method`, `url.template` (the route template), `server.address`, `server.port`;
 * - `http.response.status_code` of the last response, when there was one;
 * - `http.request.resend_count`: retries made, when there were any;
 * - `error.type`: the error's class name (`TerminalBusyError`, `TimeoutError`...) when the call
 *   fails; the span status is then `ERROR`, with the error's message;
 * - `payment_service.attempts`: attempts made, counting the first;
 * - `payment_service.idempotency_key`: the `Idempotency-Key` sent, for writes;
 * - `payment_service.error_code` and `payment_service.trace_id`: the service's error code and its
 *   own trace id, when a failure envelope carried them;
 * - `payment_service.environment`: `test` or `live`.
 *
 * Each retry adds a `retry` event, with `payment_service.attempt` (the attempt that failed, from
 * 1), `payment_service.delay_ms` (the wait before the next one), `error.type` (why it failed) and,
 * when it got an error response, its `http.response.status_code`, `payment_service.error_code` and
 * `payment_service.trace_id`.
 *
 * Spans nobody records (no tracer provider registered, or sampled out) are dropped at once: a call
 * then costs one no-op `startSpan` more than without the package.
 *
 * Never recorded: the API key, the query string (it carries the webcode) or the full URL, request
 * and response bodies.
 */
import type * as OpenTelemetry from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';
import type { ApiError } from './errors.js';
import type { ResolvedOptions } from './options.js';
import type { Send } from './send.js';

type Api = typeof OpenTelemetry;

/** The instrumentation scope of the SDK's spans. */
const TRACER_NAME = 'payment-service-sdk';

/** `@opentelemetry/api` once imported; `undefined` before, and for good when it cannot be imported. */
let api: Api | undefined;

/**
 * Imports `@opentelemetry/api`, once per process, when this module loads (with the first request):
 * `loadNetwork` waits for it, so that the first call is traced too and no call waits afterwards.
 * A failed import (package absent, or a runtime that cannot resolve package names) is the end of
 * it: tracing stays off, quietly.
 */
export const ready: Promise<void> = import(/* webpackIgnore: true */ /* turbopackIgnore: true */ '@opentelemetry/api').then(
  (module) => {
    // An old CommonJS build of the API imported from ESM may show its exports on `default` only.
    const namespace: Api | undefined = module.trace ? module : (module as unknown as { default?: Api }).default;
    api = namespace?.trace ? namespace : undefined;
  },
  () => undefined,
);

/** The client options tracing reads. */
type ClientSettings = Pick<ResolvedOptions, 'telemetry' | 'baseUrl' | 'environment'>;

/** Attributes every span of a client carries, worked out on its first call. */
const clientAttributes = new WeakMap<ClientSettings, Attributes>();

/**
 * Adds what `error` tells: its class name as `error.type` (`_OTHER` for a thrown non-error), and
 * the status, service error code and service trace id of an error response. Read by shape, not
 * `instanceof`: this module imports nothing at run time that the initial load has, or bundlers
 * would move that code into a chunk of its own. (`ConnectionError`'s code is a string: skipped.)
 */
function describe(attributes: Attributes, error: unknown): Attributes {
  const { name, status, code, traceId } = (error ?? {}) as Partial<ApiError>;
  attributes['error.type'] = error instanceof Error ? name : '_OTHER';
  if (typeof status === 'number') attributes['http.response.status_code'] = status;
  if (typeof code === 'number') attributes['payment_service.error_code'] = code;
  if (typeof traceId === 'string') attributes['payment_service.trace_id'] = traceId;
  return attributes;
}

/** The span of one call, a recording one: told of each retry, and of the outcome, which ends it. */
export class CallSpan {
  readonly #api: Api;
  readonly #span: Span;

  constructor(otel: Api, span: Span) {
    this.#api = otel;
    this.#span = span;
  }

  /** `send` with this span as the active one, so that an instrumented `fetch` and the client's hooks nest under it. */
  bind(send: Send): Send {
    const { context, trace } = this.#api;
    return context.bind(trace.setSpan(context.active(), this.#span), send);
  }

  /** A failed attempt is about to be retried after `delayMs`. */
  retry(attempt: number, delayMs: number, error: Error): void {
    this.#span.addEvent('retry', describe({ 'payment_service.attempt': attempt, 'payment_service.delay_ms': delayMs }, error));
  }

  /** The call succeeded, after `attempts` attempts: ends the span. */
  end(attempts: number, { response }: { response: Response }): void {
    this.#finish(attempts, { 'http.response.status_code': response.status });
  }

  /** The call failed with `error`, after `attempts` attempts: ends the span, with status `ERROR`. */
  fail(attempts: number, error: unknown): void {
    this.#span.setStatus({ code: this.#api.SpanStatusCode.ERROR, ...(error instanceof Error && { message: error.message }) });
    this.#finish(attempts, describe({}, error));
  }

  #finish(attempts: number, attributes: Attributes): void {
    attributes['payment_service.attempts'] = attempts;
    if (attempts > 1) attributes['http.request.resend_count'] = attempts - 1;
    this.#span.setAttributes(attributes).end();
  }
}

/**
 * Starts the span of a call to `endpoint`, named `method template` and a child of the active span
 * if there is one. `undefined` when tracing is off (`telemetry: false`, or no `@opentelemetry/api`:
 * one check), or when nothing records the span (no tracer provider registered, or sampled out).
 * The global tracer is looked up per call, so that a provider registered (or replaced) after the
 * client was made is the one used. `version` is the SDK's.
 */
export function startSpan(
  settings: ClientSettings,
  { method, path }: { method: 'GET' | 'POST'; path: string },
  { idempotencyKey }: { idempotencyKey: string | undefined },
  version: string,
): CallSpan | undefined {
  if (!api || !settings.telemetry) return undefined;
  let base = clientAttributes.get(settings);
  if (!base) {
    const url = new URL(settings.baseUrl);
    base = {
      'server.address': url.hostname,
      'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      'payment_service.environment': settings.environment,
    };
    clientAttributes.set(settings, base);
  }
  const attributes: Attributes = { ...base, 'http.request.method': method, 'url.template': path };
  if (idempotencyKey) attributes['payment_service.idempotency_key'] = idempotencyKey;
  const span = api.trace.getTracer(TRACER_NAME, version).startSpan(`${method} ${path}`, { kind: api.SpanKind.CLIENT, attributes });
  // A span nobody records (no provider registered, or sampled out) needs neither ending nor activating.
  return span.isRecording() ? new CallSpan(api, span) : undefined;
}
