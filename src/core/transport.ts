import type * as z from 'zod/mini';
import type { ListMeta } from '../schemas/common.js';
import { referenceProblem } from '../schemas/references.js';
import { VERSION } from '../version.js';
import { APIPromise, type WithResponse } from './api-promise.js';
import {
  ConnectionError,
  PaymentServiceError,
  type RequestContext,
  RequestValidationError,
  TimeoutError,
  type ValidationIssue,
} from './errors.js';
import { type Logger, MAX_TIMER_MS, type ResolvedOptions } from './options.js';
import { type Paginator, paginate } from './pagination.js';
import { interpretResponse, parseWith, toIssues } from './response.js';
import { isRetryable, isStaleSocket, RetryBudget, type RetryClass, retryDelay, sleep } from './retry.js';
import type { Send } from './send.js';

/** Options every method takes as its last argument. */
export interface RequestOptions {
  /** `Idempotency-Key` for a write. Default: a fresh UUID v4 per call, reused by its retries. */
  idempotencyKey?: string | undefined;
  /** Per-attempt timeout in milliseconds for this call. */
  timeout?: number | undefined;
  /** Cancels the call, during a request or a wait between retries. The call rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** Retries after the first attempt for this call. */
  maxRetries?: number | undefined;
  /** Extra headers. They cannot replace `X-API-KEY`, `Content-Type` or `Idempotency-Key`. */
  headers?: Record<string, string> | undefined;
}

/** A service endpoint: what a resource method declares, and all the core needs to call it. */
export interface Endpoint<Params, Result> {
  method: 'GET' | 'POST';
  /** Path after `/external/v1` (or `/external/v1/test`), with `{name}` placeholders for path parameters. */
  path: string;
  /** Checks the caller's params and turns them into wire fields (query for GET, body for POST). */
  params?: z.core.$ZodType<object, Params>;
  /** Checks the success envelope's `data`. */
  response: z.core.$ZodType<Result>;
  /** Retry class; default `read` for GET and `write` for POST. */
  retryClass?: RetryClass;
  /** Uses the client's long `posTimeout` instead of `timeout` (the service may take 240 s). */
  longRunning?: boolean;
}

/** What a resource method passes for one call. */
export interface CallInput<Params> {
  params?: Params | undefined;
  pathParams?: Record<string, unknown>;
}

/** A request ready to send: validated, serialised once, and resent byte for byte. */
interface PreparedRequest {
  method: 'GET' | 'POST';
  url: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  idempotencyKey: string | undefined;
  timeout: number;
  signal: AbortSignal | undefined;
}

type Network = typeof import('./network.js');

/**
 * p-retry, uuid and zod's schema compiler are imported on the first request, not with the package
 * (and ky on the first request of a client with hooks): an app that only parses webhooks, decodes
 * redirects or builds a client at start-up does not need them yet. So is `@opentelemetry/api`,
 * when the app has it (`ready`: see telemetry.ts).
 */
let network: Network | undefined;
let loading: Promise<Network> | undefined;
export function loadNetwork(): Promise<Network> {
  loading ??= import('./network.js').then(async (module) => {
    await module.ready;
    network = module;
    return module;
  });
  return loading;
}

/**
 * A fresh `Idempotency-Key`: a UUID v4, as the service recommends. One per logical call, made
 * before the first attempt so that every retry and every recovery resend carries the same key.
 */
export async function newIdempotencyKey(): Promise<string> {
  return (network ?? (await loadNetwork())).uuidv4();
}

const abortController = (controller: AbortController) => controller.abort();

const RESERVED_HEADERS = new Set(['x-api-key', 'content-type', 'idempotency-key']);

function isCount(value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function checkRequestOptions(options: RequestOptions, issues: ValidationIssue[]): void {
  const { idempotencyKey, timeout, maxRetries, signal, headers } = options;
  if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(idempotencyKey))) {
    issues.push({ path: 'options.idempotencyKey', message: 'must be 1 to 255 visible ASCII characters' });
  }
  if (timeout !== undefined && !isCount(timeout, 1, MAX_TIMER_MS)) {
    issues.push({ path: 'options.timeout', message: `must be an integer number of milliseconds, 1 to ${MAX_TIMER_MS}` });
  }
  if (maxRetries !== undefined && !isCount(maxRetries, 0)) {
    issues.push({ path: 'options.maxRetries', message: 'must be an integer >= 0' });
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    issues.push({ path: 'options.signal', message: 'must be an AbortSignal' });
  }
  if (headers !== undefined && (typeof headers !== 'object' || headers === null)) {
    issues.push({ path: 'options.headers', message: 'must be an object of header names to values' });
  }
}

/** A fetch failure as a `ConnectionError`. Only sent requests fail so: the network module is loaded. */
function toConnectionError(cause: unknown, afterResponse: boolean): ConnectionError {
  const { message, ...details } = (network as Network).fetchFailure(cause, afterResponse);
  return new ConnectionError(`Connection to the payment service failed: ${message}`, { cause, afterResponse, ...details });
}

/**
 * The request core shared by every resource: validates, serialises, authenticates, sends with
 * retries, and turns the exchange into data or a typed error.
 */
export class Transport {
  readonly #options: ResolvedOptions;
  #send: Send | undefined;
  readonly #pathPrefix: string;
  readonly #userAgent: string;
  readonly #webcodeQuery: string;
  readonly #budget: RetryBudget | undefined;

  constructor(options: ResolvedOptions) {
    this.#options = options;
    this.#budget = options.retryBudget === false ? undefined : new RetryBudget(options.retryBudget);
    this.#pathPrefix = options.environment === 'test' ? '/external/v1/test' : '/external/v1';
    this.#webcodeQuery = `?webcode=${encodeURIComponent(options.webcode)}`;
    const runtime = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node;
    const app = options.appInfo ? ` ${options.appInfo.name}${options.appInfo.version ? `/${options.appInfo.version}` : ''}` : '';
    this.#userAgent = `payment-service-sdk/${VERSION}${runtime ? ` node/${runtime}` : ''}${app}`;
  }

  /**
   * How attempts go out, chosen on the first request. Without `beforeRequest` or `afterResponse`
   * hooks, straight to `fetch`: retries, timeouts and error mapping are the SDK's, and ky's request
   * pipeline would add about a quarter of a loopback exchange for nothing (docs/benchmarks.md).
   * With them, through ky, which runs them. A custom `fetch` is called as `fetch(request, { signal })`
   * either way; the global one is handed the URL and init, which spares building a `Request` twice.
   */
  async #sender(): Promise<Send> {
    const { hooks, fetch } = this.#options;
    if (hooks?.beforeRequest || hooks?.afterResponse) {
      const { sendWithHooks } = await import('./ky-route.js');
      this.#send ??= sendWithHooks(hooks, fetch);
    }
    this.#send ??= fetch
      ? (url, init) => fetch(new Request(url, init), { signal: init.signal })
      : (url, init) => globalThis.fetch(url, init);
    return this.#send;
  }

  /** The client's logger, for layers above the transport (POS recovery). */
  get logger(): Logger | undefined {
    return this.#options.logger;
  }

  /** Calls an endpoint. The returned promise resolves to the validated data. */
  request<Params, Result>(endpoint: Endpoint<Params, Result>, input: CallInput<Params>, options: RequestOptions = {}): APIPromise<Result> {
    return new APIPromise(this.#execute(endpoint, input, options));
  }

  /** Checks a call as `request` would, sending nothing: throws the same `RequestValidationError`. */
  check<Params, Result>(endpoint: Endpoint<Params, Result>, input: CallInput<Params>, options: RequestOptions = {}): void {
    this.#prepare(endpoint, input, options);
  }

  /** Walks a cursor-paginated listing; `key` names the array in `data`. */
  paginate<Params extends { cursor?: string | undefined }, Key extends string, Item>(
    endpoint: Endpoint<Params, { [K in Key]: Item[] } & { meta: ListMeta }>,
    key: Key,
    params: Params | undefined,
    options?: RequestOptions,
  ): Paginator<Item> {
    return paginate(
      key,
      (cursor) => this.request(endpoint, { params: cursor === undefined ? params : ({ ...params, cursor } as Params) }, options),
      typeof params?.cursor === 'string' ? params.cursor : undefined,
      this.#options.logger,
    );
  }

  /**
   * One call, its attempts and retries. The first attempt goes out directly: most calls succeed at
   * once, and p-retry's set-up per call is measurable. A failure hands the remaining attempts to
   * p-retry, with `onFailedAttempt` (made only then: a call that succeeds at once needs no retry
   * state) deciding after each failed one: it throws to give up, or waits and returns to try again.
   * The SDK decides and waits itself, since p-retry's own delays know neither jitter caps nor
   * `Retry-After`; p-retry's `retries` is `maxRetries`, one spare with the first attempt for the free
   * stale-socket resend (`onFailedAttempt` counts the ordinary retries).
   */
  async #execute<Params, Result>(
    endpoint: Endpoint<Params, Result>,
    input: CallInput<Params>,
    options: RequestOptions,
  ): Promise<WithResponse<Result>> {
    const request = this.#prepare(endpoint, input, options);
    const net = network ?? (await loadNetwork());
    if (request.body !== undefined) {
      request.idempotencyKey = options.idempotencyKey ?? net.uuidv4();
      request.headers['idempotency-key'] = request.idempotencyKey;
    }
    let send = this.#send ?? (await this.#sender());
    const check = this.#options.validateResponses ? net.checker(endpoint.response) : undefined;
    // With OpenTelemetry (telemetry.ts), one span per call, ended after its last attempt; its attempts go out under it.
    const span = net.startSpan(this.#options, endpoint, request, VERSION);
    if (span) send = span.bind(send);
    const retryClass = endpoint.retryClass ?? (endpoint.method === 'GET' ? 'read' : 'write');
    const context: RequestContext = { method: request.method, path: request.path, idempotencyKey: request.idempotencyKey };
    const maxRetries = options.maxRetries ?? this.#options.maxRetries;
    let attempts = 1;
    let retries = 0;
    let freeRetryUsed = false;
    let tokensSpent = 0;

    try {
      request.signal?.throwIfAborted();
      let result: WithResponse<Result>;
      try {
        result = await this.#attempt(send, endpoint.response, check, request, 1);
      } catch (error) {
        const onFailedAttempt = async (failure: Error, attempt: number): Promise<void> => {
          const free = !freeRetryUsed && attempt === 1 && isStaleSocket(failure, retryClass);
          if (!free) {
            if (retries >= maxRetries || !isRetryable(failure, retryClass)) throw failure;
            const cost = this.#budget ? this.#budget.withdraw(failure) : 0;
            if (cost === undefined) throw failure;
            tokensSpent += cost;
            retries += 1;
          }
          freeRetryUsed ||= free;
          const delayMs = free ? 0 : retryDelay(failure, retries - 1);
          this.#options.logger?.warn(`payment-service-sdk: retrying ${request.method} ${request.path} in ${delayMs} ms`, {
            ...context,
            attempt,
            delayMs,
            error: failure.name,
          });
          span?.retry(attempt, delayMs, failure);
          await this.#options.hooks?.onRetry?.({ ...context, attempt, error: failure, delayMs });
          await sleep(delayMs, request.signal);
        };
        await onFailedAttempt(error as Error, 1);
        result = await net.pRetry(
          (retryNumber) => {
            attempts = retryNumber + 1;
            return this.#attempt(send, endpoint.response, check, request, attempts);
          },
          {
            retries: maxRetries,
            minTimeout: 0,
            maxTimeout: 0,
            ...(request.signal ? { signal: request.signal } : {}),
            onFailedAttempt: ({ error, attemptNumber }) => onFailedAttempt(error, attemptNumber + 1),
          },
        );
      }
      this.#budget?.refund(tokensSpent);
      span?.end(attempts, result);
      return result;
    } catch (error) {
      if (error instanceof PaymentServiceError) error.withContext({ ...context, attempts });
      span?.fail(attempts, error);
      throw error;
    }
  }

  #prepare<Params, Result>(endpoint: Endpoint<Params, Result>, input: CallInput<Params>, options: RequestOptions): PreparedRequest {
    const issues: ValidationIssue[] = [];
    checkRequestOptions(options, issues);

    let path = endpoint.path;
    for (const [name, value] of Object.entries(input.pathParams ?? {})) {
      if (typeof value !== 'string' || value.trim() === '') {
        issues.push({ path: name, message: 'must be a non-empty string' });
        continue;
      }
      this.#checkReference(name, value, issues);
      path = path.replace(`{${name}}`, encodeURIComponent(value));
    }
    this.#checkReference('paymentReference', (input.params as { paymentReference?: unknown } | undefined)?.paymentReference, issues);

    let fields: object = {};
    if (endpoint.params) {
      const parsed = parseWith(endpoint.params, input.params ?? {});
      if (parsed.success) fields = parsed.data;
      else issues.push(...toIssues(parsed.error));
    }
    if (issues.length > 0) {
      throw new RequestValidationError(issues, { method: endpoint.method, path: this.#pathPrefix + endpoint.path });
    }

    const fullPath = this.#pathPrefix + path;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (!RESERVED_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = String(value);
    }
    headers.accept = 'application/json';
    headers['user-agent'] = this.#userAgent;
    headers['x-api-key'] = this.#options.apiKey;

    let url = this.#options.baseUrl + fullPath;
    let body: string | undefined;
    if (endpoint.method === 'GET') {
      url += this.#webcodeQuery;
      for (const name in fields) {
        const value = (fields as Record<string, unknown>)[name];
        if (value !== undefined) url += `&${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`;
      }
    } else {
      body = JSON.stringify({ webcode: this.#options.webcode, ...fields });
      headers['content-type'] = 'application/json';
    }
    const defaultTimeout = endpoint.longRunning ? this.#options.posTimeout : this.#options.timeout;
    return {
      method: endpoint.method,
      url,
      path: fullPath,
      headers,
      body,
      idempotencyKey: undefined,
      timeout: options.timeout ?? defaultTimeout,
      signal: options.signal,
    };
  }

  /** A reference of the other environment or another webcode would only earn a 403 (or act on the wrong account). */
  #checkReference(field: string, value: unknown, issues: ValidationIssue[]): void {
    const problem = referenceProblem(value, this.#options.environment, this.#options.webcode);
    if (problem) issues.push({ path: field, message: problem });
  }

  async #attempt<Result>(
    send: Send,
    schema: z.core.$ZodType<Result>,
    check: ((data: unknown) => Result | undefined) | undefined,
    request: PreparedRequest,
    attempt: number,
  ): Promise<WithResponse<Result>> {
    const timer = new AbortController();
    const timeoutId = setTimeout(abortController, request.timeout, timer);
    const signal = request.signal ? AbortSignal.any([request.signal, timer.signal]) : timer.signal;
    const started = this.#options.logger ? performance.now() : 0;
    let response: Response | undefined;
    let text: string;
    try {
      response = await send(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body ?? null,
        signal,
        redirect: 'manual',
      });
      text = await response.text();
    } catch (error) {
      if (request.signal?.aborted) throw request.signal.reason;
      if (timer.signal.aborted) throw new TimeoutError(request.timeout);
      // A hook's own error is the caller's to see as thrown; only fetch failures are connection errors.
      if (error instanceof TypeError) throw toConnectionError(error, response !== undefined);
      throw error;
    } finally {
      clearTimeout(timeoutId);
    }
    const durationMs = Math.round(performance.now() - started);
    this.#options.logger?.debug(
      `payment-service-sdk: ${request.method} ${request.path} ${response.status} ${durationMs}ms attempt ${attempt}`,
      {
        method: request.method,
        path: request.path,
        status: response.status,
        durationMs,
        attempt,
        idempotencyKey: request.idempotencyKey,
        apiKey: '[redacted]',
      },
    );
    const data = interpretResponse(
      response,
      text,
      schema,
      check,
      { method: request.method, path: request.path, idempotencyKey: request.idempotencyKey },
      this.#options,
    );
    return { data, response, idempotencyKey: request.idempotencyKey };
  }
}
