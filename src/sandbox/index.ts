/**
 * A stateful local emulator of the payment service, for demos and end-to-end tests with no
 * account and no network. Import from `payment-service-sdk/sandbox`.
 *
 * ```ts
 * const sandbox = createSandbox({ posDelayMs: 0 });
 * const { baseUrl } = await sandbox.listen();
 * const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl });
 * ```
 */
import type { Environment } from '../core/options.js';
import { declaredHosts, isOwnHost, misdirectedPage } from './access.js';
import { createApi, type Deferred } from './api/index.js';
import { API_ROUTES, type OperationInput } from './api/routes.js';
import { readJsonText, readOptionalJsonText } from './body.js';
import { offsetClock, type SandboxClock, seededRandom, systemClock } from './clock.js';
import { type ClockState, CONTROL_PREFIX, type ControlSession, handleControl, SandboxControl } from './control.js';
import type { PosRecord, SandboxRecords, WebhookDelivery } from './records.js';
import { failureBody, invalid, jsonResponse, SANDBOX_BANNER, SANDBOX_CODES, ServiceFailure, successBody } from './responses.js';
import { Scheduler } from './scheduler.js';
import { hashText, SandboxStore, SandboxStoreError } from './store.js';
import { jsonObject } from './validation.js';
import { handleDashboard } from './views/dashboard.js';
import { handlePage } from './views/page.js';
import { type AttemptReport, WEBHOOK_ATTEMPT, WebhookDispatcher, type WebhookRetryOptions } from './webhooks.js';

export { type ManualClock, manualClock, type SandboxClock, seededRandom, systemClock, type TimerHandle } from './clock.js';
export {
  type ClockState,
  type ControlListParams,
  type ControlPage,
  type ControlSession,
  parseDuration,
  type RecordTimeline,
  SandboxControl,
} from './control.js';
export type {
  AttemptRecord,
  ControlPayment,
  DeliveryAttempt,
  IdempotencyRecord,
  ModificationRecord as SandboxModification,
  PosRecord as SandboxPosPayment,
  RecordFilter,
  SandboxRecords,
  SessionRecord as SandboxSession,
  StoredAmount,
  WebhookDelivery,
} from './records.js';
export { SANDBOX_CODES } from './responses.js';
export { SandboxStoreError } from './store.js';
export type { AttemptReport as WebhookAttemptReport, WebhookRetryOptions } from './webhooks.js';

/** An API key the sandbox accepts. */
export interface SandboxKey {
  key: string;
  environment: Environment;
  /** Defaults to the sandbox's webcode. */
  webcode?: string | undefined;
  /** Client addresses allowed to use the key; other addresses get 403 without a code. Default: any. */
  ipAllowList?: readonly string[] | undefined;
}

/** Options of {@link createSandbox}. */
export interface SandboxOptions {
  /** The business the keys are bound to. Default `SANDBOX`. */
  webcode?: string | undefined;
  /** The Test and Live keys. Default `sk_test_sandbox` and `sk_live_sandbox`. */
  keys?: { test?: string | undefined; live?: string | undefined } | undefined;
  /** More keys, for example with an IP allow-list or another webcode. */
  extraKeys?: readonly SandboxKey[] | undefined;
  /** The client secrets that sign the redirect `data` (not empty). Default `cs_test_sandbox` and `cs_live_sandbox`. */
  clientSecrets?: { test?: string | undefined; live?: string | undefined } | undefined;
  /** URLs every webhook is POSTed to. */
  webhookUrls?: readonly string[] | undefined;
  /** Retries of webhook deliveries. */
  webhookRetry?: WebhookRetryOptions | undefined;
  /** Simulated terminal time for a POS payment, in ms: a number or `[min, max]`. Default `[2000, 3000]`, as documented. */
  posDelayMs?: number | readonly [number, number] | undefined;
  /** When a Test POS `timeout` payment completes (success) and emits its webhook, in ms. Default 10 000. */
  posTimeoutResolveMs?: number | undefined;
  /** When modifications resolve to `success` (and the REFUND webhook goes out), in ms. Default 200. */
  modificationResolveMs?: number | undefined;
  /** The clock; default the system clock. Use `manualClock()` to control expiry and delays. */
  clock?: SandboxClock | undefined;
  /** Seed of the sandbox's randomness (tokens, PSP references, trace ids, delays). Default 1. */
  seed?: number | undefined;
  /**
   * Folder of the store, `DIR/sandbox.db` (SQLite). Every request's changes commit in one
   * transaction before it is answered, so they survive the process being killed. Default: memory only.
   */
  dataDir?: string | undefined;
  /** Largest request body accepted, in bytes; a larger one answers 413. Default 1 MiB. */
  maxBodyBytes?: number | undefined;
  /** How long a stored idempotent response is kept, in ms of the sandbox clock. Default 24 h. */
  idempotencyTtlMs?: number | undefined;
  /**
   * Called with faults of the sandbox's own scheduled work, and once with a {@link SandboxStoreError}
   * when the database file turns out damaged. Default: printed to stderr.
   */
  onError?: ((error: unknown) => void) | undefined;
  /** `fetch` used for webhook deliveries. Default the global one. */
  fetch?: typeof fetch | undefined;
  /** Called after each webhook delivery attempt is recorded (the CLI prints the failed ones). */
  onWebhookAttempt?: ((report: AttemptReport) => void) | undefined;
  /**
   * Host names (`name` or `name:port`; the port is ignored) requests may carry in `Host` besides
   * the loopback names (`localhost`, `*.localhost`, `127.x.x.x`, `[::1]`) and the address listened
   * on (with this machine's addresses when that is `0.0.0.0` or `::`). Any other `Host` gets 421:
   * a page of another site whose name was rebound to this address cannot reach the sandbox.
   */
  allowedHosts?: readonly string[] | undefined;
  /**
   * When set, the dashboard answers only a browser that opened it with `/?token=<dashboardToken>`
   * (it then keeps an HttpOnly, SameSite=Strict cookie); others get 401. For a sandbox listening
   * beyond loopback (the CLI sets a random one there). Default: none.
   */
  dashboardToken?: string | undefined;
}

/** Per-request details the fetch handler cannot see itself. */
export interface HandleInfo {
  /** The client's address, for IP allow-lists. */
  remoteAddress?: string | undefined;
}

/** A running sandbox. */
export interface Sandbox {
  /** Fetch-standard handler: answers any request to the service's paths or the payment page. */
  handle(request: Request, info?: HandleInfo): Promise<Response>;
  /** msw handlers that route requests for {@link Sandbox.baseUrl} to `handle` (needs `msw` installed). */
  readonly handlers: unknown[];
  /** Starts a real HTTP server (default `127.0.0.1`, a free port). */
  listen(options?: { port?: number; host?: string }): Promise<{ baseUrl: string }>;
  /** `http://127.0.0.1:<port>` once listening; before that `http://sandbox.localhost`, for in-process use. */
  readonly baseUrl: string;
  readonly webcode: string;
  readonly keys: { test: string; live: string };
  readonly clientSecrets: { test: string; live: string };
  /** Typed reads of the stored sessions, POS payments, modifications, webhook deliveries and idempotency entries. */
  readonly records: SandboxRecords;
  /** Where the state is kept: `DIR/sandbox.db`, or `:memory:`. */
  readonly location: string;
  /** The webhook URLs; change it to add receivers. */
  webhookUrls: string[];
  /** Resolves when no webhook delivery attempt is in flight (scheduled retries may still follow). */
  webhooksSettled(): Promise<void>;
  /** The sandbox clock: the clock given (or the system clock), moved ahead by {@link Sandbox.advanceClock}. */
  readonly clock: SandboxClock;
  /** Every control operation, reads with paging and record timelines included (the control API and the dashboard use it). */
  readonly control: SandboxControl;
  /** Pays a pending session as `holderName` would on the hosted page (default a name that pays); resolves after its webhooks' first attempts. */
  paySession(environment: Environment, sessionId: string, options?: { holderName?: string | undefined }): Promise<ControlSession>;
  /** Expires a pending session now. */
  expireSession(environment: Environment, sessionId: string): ControlSession;
  /** Resolves a `pending` or `timeout` POS payment now; resolves after its webhooks' first attempts. */
  resolvePosPayment(environment: Environment, posPaymentId: string, outcome: 'success' | 'failed'): Promise<PosRecord>;
  /** Delivers a recorded delivery's event again, as a new delivery to the same URL; resolves after its first attempt. */
  resendDelivery(environment: Environment, deliveryId: number): Promise<WebhookDelivery>;
  /** Emits `AUTHORISATION` (a completed session or a POS payment with its result) or `REFUND` (a resolved refund) for a record. */
  emitEvent(environment: Environment, eventCode: 'AUTHORISATION' | 'REFUND', reference: string): Promise<WebhookDelivery[]>;
  /** Moves the sandbox clock ahead by `ms`; scheduled work falls due in order, as if the time had passed. */
  advanceClock(ms: number): Promise<ClockState>;
  /** Deletes every record, stored response, delivery and scheduled job, and sets the clock back; keys and webhook URLs stay. */
  reset(): Promise<void>;
  /** Stops the server and timers and closes the store; scheduled work stays stored for the next start. */
  close(): Promise<void>;
}

const API_PREFIX = /^\/external\/v1(\/test)?(\/.*)$/;
const IN_PROCESS_BASE_URL = 'http://sandbox.localhost';

function delayPicker(option: SandboxOptions['posDelayMs'], random: () => number): () => number {
  if (typeof option === 'number') return () => option;
  const [min, max] = option ?? [2_000, 3_000];
  return () => Math.round(min + (max - min) * random());
}

/** Longest URL answered; a longer one gets 431, as Node's own limit on the request head does. */
const MAX_URL_LENGTH = 8_192;
const DAY_MS = 86_400_000;

/** Creates a sandbox of the service: in memory (or in `dataDir`), answering both the Test and Live path families. */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const webcode = options.webcode ?? 'SANDBOX';
  const keys = { test: options.keys?.test ?? 'sk_test_sandbox', live: options.keys?.live ?? 'sk_live_sandbox' };
  const clientSecrets = { test: options.clientSecrets?.test ?? 'cs_test_sandbox', live: options.clientSecrets?.live ?? 'cs_live_sandbox' };
  // An empty secret cannot sign: a payment would complete and its redirect then fail.
  if (clientSecrets.test === '' || clientSecrets.live === '') throw new TypeError('clientSecrets must not be empty strings');
  const declared = declaredHosts(options.allowedHosts ?? []);
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576;
  const idempotencyTtlMs = options.idempotencyTtlMs ?? DAY_MS;
  const store = new SandboxStore(options.dataDir);
  const clock = offsetClock(options.clock ?? systemClock(), store.counter('clockOffset'));
  // Each run of a stored sandbox draws from its own stream, so tokens never repeat those of earlier runs.
  const random = seededRandom((options.seed ?? 1) + (store.runs - 1) * 0x9e3779b9);
  const registry = new Map<string, SandboxKey>([
    [keys.test, { key: keys.test, environment: 'test' }],
    [keys.live, { key: keys.live, environment: 'live' }],
    ...(options.extraKeys ?? []).map((entry): [string, SandboxKey] => [entry.key, entry]),
  ]);
  const webhooks = new WebhookDispatcher({
    store,
    clock,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    urls: [...(options.webhookUrls ?? [])],
    retry: options.webhookRetry,
    onAttempt: options.onWebhookAttempt,
  });
  const api = createApi({
    webcode,
    // The scheduler is made next, from the operations' job handlers; nothing schedules before it exists.
    schedule: (kind, delayMs, subject) => scheduler.add(kind, delayMs, subject),
    clock,
    random,
    store,
    webhooks,
    posDelay: delayPicker(options.posDelayMs, random),
    posTimeoutResolveMs: options.posTimeoutResolveMs ?? 10_000,
    modificationResolveMs: options.modificationResolveMs ?? 200,
  });
  const onError =
    options.onError ??
    ((error) => console.error('payment-service-sdk sandbox:', error instanceof SandboxStoreError ? error.message : error));
  let damageReported = false;
  /** Reports a fault; a damaged database by name and with what to do, once, however many requests meet it. */
  function report(error: unknown): void {
    const damage = store.damage(error);
    if (!damage) onError(error);
    else if (!damageReported) {
      damageReported = true;
      onError(damage);
    }
  }
  const scheduler = new Scheduler({
    store,
    clock,
    handlers: { ...api.jobs, [WEBHOOK_ATTEMPT]: webhooks.handler },
    onError: report,
  });
  webhooks.attach(scheduler);
  const control = new SandboxControl({ store, api, webhooks, scheduler, clock, origin: () => sandbox.baseUrl });
  const dashboard = { control, formToken: randomToken(), accessToken: options.dashboardToken, maxBodyBytes, webcode };
  let boundHosts = new Set<string>();
  try {
    store.purgeIdempotency(clock.now() - idempotencyTtlMs);
    // Work scheduled before a restart is in the store: run what is due, arm the timer for the rest.
    scheduler.runDue();
  } catch (error) {
    scheduler.close();
    store.close();
    throw store.damage(error) ?? error;
  }
  let server: { close(): Promise<void>; baseUrl: string; hosts: string[] } | undefined;

  function traceId(): string {
    return `sbx-${Math.floor(random() * 2 ** 48)
      .toString(16)
      .padStart(12, '0')}`;
  }

  function fail(failure: ServiceFailure): Response {
    return jsonResponse(failure.status, failureBody(failure, traceId()));
  }

  function authenticate(request: Request, environment: Environment, info: HandleInfo | undefined): SandboxKey {
    const key = registry.get(request.headers.get('x-api-key') ?? '');
    if (!key || key.environment !== environment) {
      throw new ServiceFailure(403, 11008, 'API key without permission for this resource');
    }
    if (key.ipAllowList && !key.ipAllowList.includes(normaliseAddress(info?.remoteAddress))) {
      throw new ServiceFailure(403, SANDBOX_CODES.ipNotAllowed, "Forbidden: this address is not in the API key's IP allow-list");
    }
    return key;
  }

  async function serveApi(
    request: Request,
    url: URL,
    environment: Environment,
    rest: string,
    info: HandleInfo | undefined,
  ): Promise<Response> {
    const route = API_ROUTES.find((candidate) => candidate.pattern.test(rest));
    if (!route) throw new ServiceFailure(404, SANDBOX_CODES.notFound, `No endpoint at ${url.pathname}`);
    if (route.method !== request.method)
      throw new ServiceFailure(405, SANDBOX_CODES.methodNotAllowed, `Method ${request.method} not allowed on ${url.pathname}`);
    const params = (route.pattern.exec(rest) ?? []).slice(1).map((param) => decodePathParam(param, url));
    const key = authenticate(request, environment, info);
    const body = request.method === 'POST' ? jsonObject(await readJsonText(request, maxBodyBytes)) : {};
    const sentWebcode = request.method === 'POST' ? body.webcode : url.searchParams.get('webcode');
    if (sentWebcode === undefined || sentWebcode === null || sentWebcode === '') throw invalid('webcode is required');
    if (sentWebcode !== (key.webcode ?? webcode)) throw new ServiceFailure(403, 11008, 'webcode does not match the API key');
    const idempotencyKey = request.method === 'POST' ? request.headers.get('idempotency-key') : null;
    const context: OperationInput = {
      environment,
      params,
      query: url.searchParams,
      body,
      origin: server?.baseUrl ?? url.origin,
      idempotencyKey,
    };
    const bodyHash = idempotencyKey === null ? '' : hashText(canonical(body));

    for (;;) {
      // The record(s), the stored response, counters and scheduled work: one transaction.
      const outcome = store.transaction((): { wait: true } | { response: Response } | Deferred => {
        if (idempotencyKey !== null) {
          const stored = store.idempotencyEntry(environment, idempotencyKey, clock.now() - idempotencyTtlMs);
          if (stored) {
            if (stored.endpoint !== route.name)
              throw new ServiceFailure(
                409,
                SANDBOX_CODES.idempotencyEndpointMismatch,
                'Idempotency key already used for a different endpoint.',
              );
            if (stored.bodyHash !== bodyHash)
              throw new ServiceFailure(409, SANDBOX_CODES.idempotencyBodyMismatch, 'Idempotency key reused with a different request body.');
            if (stored.status === null || stored.response === null) return { wait: true };
            return { response: jsonResponse(stored.status, stored.response, { 'idempotent-replayed': 'true' }) };
          }
        }
        const result = route.run(api, context);
        const entry = { environment, key: idempotencyKey ?? '', endpoint: route.name, bodyHash, createdAt: clock.now() };
        if ('deferred' in result) {
          // Its response is stored by the job that answers it; until then a resend waits.
          if (idempotencyKey !== null) store.saveIdempotency({ ...entry, status: null, response: null });
          return result;
        }
        const response = successBody(result.data);
        // Only successes are stored: a failed request ran nothing, and may be sent again as it was.
        if (idempotencyKey !== null && result.status >= 200 && result.status < 300)
          store.saveIdempotency({ ...entry, status: result.status, response });
        return { response: jsonResponse(result.status, response) };
      });
      if ('wait' in outcome) {
        // A request with this key is still running (a POS payment at its terminal): wait, then replay it.
        // Subscribed before running due work, which may be the very job that settles the key.
        const settled = api.keys.settled(environment, idempotencyKey ?? '');
        scheduler.runDue();
        await settled;
        continue;
      }
      // Work the request scheduled for now (a terminal with no delay) runs before it is answered.
      scheduler.runDue();
      if ('response' in outcome) return outcome.response;
      const answer = await outcome.deferred;
      return jsonResponse(answer.status, successBody(answer.data));
    }
  }

  async function handle(request: Request, info?: HandleInfo): Promise<Response> {
    try {
      if (request.url.length > MAX_URL_LENGTH)
        throw new ServiceFailure(431, SANDBOX_CODES.headersTooLarge, `URL longer than ${MAX_URL_LENGTH} characters`);
      const url = new URL(request.url);
      const apiPath = API_PREFIX.exec(url.pathname);
      // In-process requests carry no Host; over HTTP, one that names another site is refused before anything runs.
      const host = request.headers.get('host');
      if (host !== null && !isOwnHost(host, boundHosts, declared)) {
        const message = `Host ${host} does not name this sandbox: use ${sandbox.baseUrl}, or declare the name with allowedHosts (CLI: --allowed-host)`;
        if (apiPath || url.pathname.startsWith(CONTROL_PREFIX)) throw new ServiceFailure(421, SANDBOX_CODES.misdirected, message);
        return misdirectedPage(message);
      }
      // Work due by now (expiry, resolutions) is applied before the request sees the state.
      scheduler.runDue();
      if (apiPath) return await serveApi(request, url, apiPath[1] ? 'test' : 'live', apiPath[2] ?? '', info);
      if (url.pathname.startsWith(CONTROL_PREFIX))
        return await handleControl(
          request,
          url,
          control,
          {
            check: (checked, environment) => void authenticate(checked, environment, info),
            any: (checked) => {
              const key = registry.get(checked.headers.get('x-api-key') ?? '');
              void authenticate(checked, key?.environment ?? 'test', info);
            },
          },
          (body) => readOptionalJsonText(body, maxBodyBytes),
        );
      const dashboardResponse = await handleDashboard(request, url, dashboard);
      if (dashboardResponse) return dashboardResponse;
      const pageResponse = await handlePage(request, url, { api, store, clientSecrets, clock, webcode, maxBodyBytes });
      if (pageResponse) return pageResponse;
      throw new ServiceFailure(404, SANDBOX_CODES.notFound, `Nothing at ${url.pathname}`);
    } catch (error) {
      if (error instanceof ServiceFailure) return fail(error);
      const damage = store.damage(error);
      if (damage) {
        report(error);
        return fail(new ServiceFailure(500, SANDBOX_CODES.internal, `Sandbox error: ${damage.message}`));
      }
      return fail(
        new ServiceFailure(500, SANDBOX_CODES.internal, `Sandbox error: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
  }

  const sandbox: Sandbox = {
    handle,
    get handlers() {
      return mswHandlers(() => sandbox.baseUrl, handle);
    },
    async listen(listenOptions = {}) {
      if (server) return { baseUrl: server.baseUrl };
      const { serveNode } = await import('./node.js');
      server = await serveNode(handle, {
        port: listenOptions.port ?? 0,
        host: listenOptions.host ?? '127.0.0.1',
        maxBodyBytes,
        failure: (status, message) => failureBody(new ServiceFailure(status, codeOfStatus(status), message), traceId()),
      });
      boundHosts = new Set(server.hosts);
      return { baseUrl: server.baseUrl };
    },
    get baseUrl() {
      return server?.baseUrl ?? IN_PROCESS_BASE_URL;
    },
    webcode,
    keys,
    clientSecrets,
    records: store.records(),
    location: store.location,
    get webhookUrls() {
      return webhooks.urls;
    },
    set webhookUrls(urls: string[]) {
      webhooks.urls = urls;
    },
    webhooksSettled: () => scheduler.settled(),
    clock,
    control,
    paySession: (environment, sessionId, payOptions) => control.paySession(environment, sessionId, payOptions),
    expireSession: (environment, sessionId) => control.expireSession(environment, sessionId),
    resolvePosPayment: (environment, posPaymentId, outcome) => control.resolvePosPayment(environment, posPaymentId, outcome),
    resendDelivery: (environment, deliveryId) => control.resendDelivery(environment, deliveryId),
    emitEvent: (environment, eventCode, reference) => control.emitEvent(environment, eventCode, reference),
    advanceClock: (ms) => control.advanceClock(ms),
    reset: () => control.reset(),
    async close() {
      if (scheduler.closed) return;
      scheduler.close();
      await server?.close();
      server = undefined;
      await scheduler.settled();
      store.close();
    },
  };
  return sandbox;
}

/** The code of a failure answered before the request reached the sandbox (Node's parser, the body limit). */
function codeOfStatus(status: number): number {
  if (status === 413) return SANDBOX_CODES.bodyTooLarge;
  return status === 431 ? SANDBOX_CODES.headersTooLarge : status === 500 ? SANDBOX_CODES.internal : 12001;
}

/** A path parameter; one that is not valid percent-encoding names no record, like any unknown id. */
function decodePathParam(param: string, url: URL): string {
  try {
    return decodeURIComponent(param);
  } catch {
    throw new ServiceFailure(404, SANDBOX_CODES.notFound, `Nothing at ${url.pathname}`);
  }
}

/** JSON with sorted keys, so that the same body in another key order is the same request. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : inner,
  );
}

/** A secret of this process (not of the seeded stream: it must not be predictable). */
function randomToken(): string {
  const bytes = new Uint8Array(18);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_');
}

function normaliseAddress(address: string | undefined): string {
  return address?.startsWith('::ffff:') ? address.slice(7) : (address ?? '');
}

/** msw's `http.all` handler for the sandbox, loaded only when asked for (msw is an optional peer). */
function mswHandlers(baseUrl: () => string, handle: (request: Request) => Promise<Response>): unknown[] {
  const load = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process?.getBuiltinModule?.('node:module') as
    | { createRequire(path: string): (id: string) => unknown }
    | undefined;
  if (!load) throw new Error('sandbox.handlers needs Node.js 22 or later with msw installed');
  const requireFromHere = load.createRequire(`${(globalThis as { process: { cwd(): string } }).process.cwd()}/`);
  const { http } = requireFromHere('msw') as {
    http: { all(path: string, resolver: (input: { request: Request }) => Promise<Response>): unknown };
  };
  return [http.all(`${baseUrl()}/*`, ({ request }) => handle(request))];
}

export { SANDBOX_BANNER };
