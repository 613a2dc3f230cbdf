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
import { fetchResponse } from './answer.js';
import type { TerminalSettings as SandboxTerminal } from './api/terminals.js';
import { type SandboxClock, systemClock } from './clock.js';
import type { ClockState, ControlSession, SandboxControl } from './control/control.js';
import { type ControlContext, invoke } from './control/route.js';
import { CONTROL_ROUTES as routes } from './control/routes.js';
import type { SandboxFaults } from './faults.js';
import { declaredHosts, publicOrigin } from './http/access.js';
import { fetchRequest, type NodeRequest } from './http/incoming.js';
import type { NodeServer } from './http/node.js';
import { pipeline } from './pipeline.js';
import type { PosRecord, SandboxRecords, WebhookDelivery } from './records.js';
import type { SandboxRequests } from './request-log/schema.js';
import { DEFAULT_REQUEST_LOG_SIZE } from './request-log/store.js';
import { type RequestRoutes, sandboxRequests } from './request-log/typed.js';
import { failureBody, SANDBOX_BANNER, SANDBOX_CODES, ServiceFailure } from './responses.js';
import type { HandleInfo } from './steps/request.js';
import { SandboxStoreError } from './store.js';
import { TenantRegistry } from './tenant-registry.js';
import { openTenant, type SandboxKey, type Tenant, type TenantOptions, type TenantSettings, Tenants, type TenantView } from './tenants.js';
import { type DashboardSettings, handleDashboard } from './views/dashboard/index.js';
import { handlePage, pageSessionToken } from './views/page.js';
import type { AttemptReport, WebhookRetryOptions } from './webhooks.js';

export type { TerminalSettings as SandboxTerminal } from './api/terminals.js';
export { type ManualClock, manualClock, type SandboxClock, seededRandom, systemClock, type TimerHandle } from './clock.js';
export {
  type ClockState,
  type ControlListParams,
  type ControlPage,
  type ControlSession,
  parseDuration,
  type RecordTimeline,
  SandboxControl,
} from './control/control.js';
export {
  FAULT_HEADER,
  type FaultEffect,
  type FaultRule,
  FaultRuleError,
  type FaultRuleState,
  type SandboxFaults,
} from './faults.js';
export type {
  AttemptRecord,
  ControlPayment,
  DeliveryAttempt,
  FaultEntry,
  IdempotencyRecord,
  ModificationRecord as SandboxModification,
  PosRecord as SandboxPosPayment,
  RecordFilter,
  SandboxRecords,
  SessionRecord as SandboxSession,
  StoredAmount,
  WebhookDelivery,
} from './records.js';
export {
  RequestLogEntry,
  RequestLogFilter,
  type RequestLogIssue,
  type RequestLogPage,
  type RequestLogReferences,
  type SandboxRequestFilter,
  type SandboxRequests,
} from './request-log/schema.js';
export { SANDBOX_CODES } from './responses.js';
export type { HandleInfo } from './steps/request.js';
export { SandboxStoreError } from './store.js';
export type { SandboxKey, TenantOptions, TenantView } from './tenants.js';
export type { AttemptReport as WebhookAttemptReport, WebhookRetryOptions } from './webhooks.js';

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
  /** Seed of the sandbox's randomness (tokens, PSP references, trace ids, delays, fault rules' `probability`). Default 1. */
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
   * How many entries of the request log each tenant keeps (the newest; older ones are dropped).
   * With `dataDir` they are kept across restarts. `0` turns the log off. Default 10 000.
   */
  requestLogSize?: number | undefined;
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
   * The address clients open the sandbox at, when it is not the one it listens on: a container's
   * published port (`http://localhost:8080`), a proxy, a compose service seen from a browser. Every
   * address the sandbox gives out (a session's `paymentUrl`, the dashboard's links, the OpenAPI
   * documents' `servers`) and {@link Sandbox.baseUrl} start with it, and its host is accepted in
   * `Host`. An `http:` or `https:` origin (a trailing `/` is dropped). Default: none; each request
   * then gets links on the origin it reached the sandbox by (its `Host`).
   */
  publicUrl?: string | undefined;
  /**
   * When set, the dashboard answers only a browser that opened it with `/?token=<dashboardToken>`
   * (it then keeps an HttpOnly, SameSite=Strict cookie); others get 401. For a sandbox listening
   * beyond loopback (the CLI sets a random one there). Default: none.
   */
  dashboardToken?: string | undefined;
}

/** A running sandbox. */
export interface Sandbox {
  /** Fetch-standard handler: answers any request to the service's paths or the payment page. */
  handle(request: Request, info?: HandleInfo): Promise<Response>;
  /** msw handlers that route requests for {@link Sandbox.baseUrl} to `handle` (needs `msw` installed). */
  readonly handlers: unknown[];
  /**
   * Starts a real HTTP server (default `127.0.0.1`, a free port). Resolves with {@link Sandbox.baseUrl}:
   * the public URL if one is set, else the address listened on (loopback's for `0.0.0.0` or `::`).
   */
  listen(options?: { port?: number; host?: string }): Promise<{ baseUrl: string }>;
  /**
   * The public URL if set; else `http://127.0.0.1:<port>` once listening (the address listened on;
   * loopback's for a wildcard one); before that `http://sandbox.localhost`, for in-process use.
   */
  readonly baseUrl: string;
  readonly webcode: string;
  readonly keys: { test: string; live: string };
  readonly clientSecrets: { test: string; live: string };
  /** Typed reads of the stored sessions, POS payments, modifications, webhook deliveries and idempotency entries. */
  readonly records: SandboxRecords;
  /**
   * The request log: what each request to the service API sent and got back, refused ones too.
   * A filter takes the fields of `GET /_sandbox/{environment}/requests` plus `environment` (default
   * `test`) and `tenant` (a webcode; default the sandbox's own).
   *
   * ```ts
   * expect(await sandbox.requests.count({ operation: 'refund', status: 202 })).toBe(1);
   * ```
   */
  readonly requests: SandboxRequests;
  /** Where the state is kept: `DIR/sandbox.db`, or `:memory:`. */
  readonly location: string;
  /** The webhook URLs; change it to add receivers. */
  webhookUrls: string[];
  /** Resolves when no webhook delivery attempt is in flight (scheduled retries may still follow). */
  webhooksSettled(): Promise<void>;
  /** The sandbox clock: the clock given (or the system clock), moved ahead by {@link Sandbox.advanceClock}. */
  readonly clock: SandboxClock;
  /**
   * The fault rules: what the sandbox gets wrong on purpose (latency, errors before or after the
   * commit, resets, cut bodies), deterministic under {@link SandboxOptions.seed}. The same as
   * `POST|GET|DELETE /_sandbox/faults`; every answer a rule changed carries `X-Sandbox-Fault: <rule id>`.
   */
  readonly faults: SandboxFaults;
  /** Every control operation, reads with paging and record timelines included (the control API and the dashboard use it). */
  readonly control: SandboxControl;
  /** Pays a pending session as `holderName` would on the hosted page (default a name that pays); resolves after its webhooks' first attempts. */
  paySession(environment: Environment, sessionId: string, options?: { holderName?: string | undefined }): Promise<ControlSession>;
  /** Expires a pending session now. */
  expireSession(environment: Environment, sessionId: string): ControlSession;
  /** Resolves a `pending` or `timeout` POS payment now; resolves after its webhooks' first attempts. */
  resolvePosPayment(environment: Environment, posPaymentId: string, outcome: 'success' | 'failed'): Promise<PosRecord>;
  /**
   * The simulated terminals of one environment, each with its processing time (`null`: the
   * sandbox's `posDelayMs`). The same as `GET /_sandbox/{environment}/terminals`.
   */
  terminals(environment: Environment): SandboxTerminal[];
  /**
   * Gives a simulated terminal its own processing time: its POS payments are answered `processingMs`
   * after they are sent (sandbox clock), instead of after `posDelayMs`; `null` goes back to the
   * default. Meanwhile a payment is in flight as any: listed `pending`, a resend with its
   * `Idempotency-Key` waits, a new payment on the terminal gets 409 / 13005. Kept per tenant and
   * environment (with `dataDir`, across restarts); {@link Sandbox.reset} keeps it. Throws a 404
   * failure for a `poiId` that is not a simulated terminal, 400 for a time outside 0 to 600 000.
   * `online: false` takes it offline (its POS payments answered 502 / 13004, nothing charged), `true`
   * brings it online, `null` back to the simulated state; a field left out keeps its setting. The
   * same as `PUT /_sandbox/{environment}/terminals/{poiId}`.
   *
   * ```ts
   * sandbox.setTerminal('test', 'V400m-TEST-000001', { processingMs: 35_000 });
   * sandbox.setTerminal('test', 'S1F2-TEST-000002', { online: false });
   * ```
   */
  setTerminal(
    environment: Environment,
    poiId: string,
    settings: { processingMs?: number | null | undefined; online?: boolean | null | undefined },
  ): SandboxTerminal;
  /** Delivers a recorded delivery's event again, as a new delivery to the same URL; resolves after its first attempt. */
  resendDelivery(environment: Environment, deliveryId: number): Promise<WebhookDelivery>;
  /** Emits `AUTHORISATION` (a completed session or a POS payment with its result) or `REFUND` (a resolved refund) for a record. */
  emitEvent(environment: Environment, eventCode: 'AUTHORISATION' | 'REFUND', reference: string): Promise<WebhookDelivery[]>;
  /** Moves the sandbox clock ahead by `ms`; scheduled work falls due in order, as if the time had passed. */
  advanceClock(ms: number): Promise<ClockState>;
  /** Deletes every record, stored response, delivery and scheduled job, and sets the clock back; keys, webhook URLs and terminal settings stay. */
  reset(): Promise<void>;
  /**
   * Makes a tenant: its own webcode, Test and Live keys, client secrets, records, idempotency
   * entries, webhook URLs (none at first) and clock. Its keys see only its data. In memory; with a
   * `dataDir`, in `DIR/tenants/{WEBCODE}/`, and the sandbox started next on that folder reopens it
   * with the same keys. Throws a 400 or 409 failure for a webcode of the wrong form or in use. The
   * same as `POST /_sandbox/tenants`.
   */
  createTenant(options?: TenantOptions): TenantView;
  /** The tenants made, in order (the sandbox's own is not among them). */
  tenants(): TenantView[];
  /**
   * Removes a made tenant: its keys stop working, its scheduled work stops, its records (and their
   * files) are gone. Its requests in flight, whatever they wait on (a latency rule, a terminal, a
   * webhook attempt), are answered 403 / 11008 as for an unknown key; none is left half-done.
   */
  removeTenant(webcode: string): Promise<void>;
  /**
   * Gives the sandbox's own tenant a new client secret for `environment` and returns it: payment
   * pages sign the tokens made from now on with it (`sandbox.clientSecrets` shows it), while tokens
   * made before carry the old one, so decode with both during the rotation
   * (`decodeRedirectData(token, [current, previous])`). It lasts until the sandbox stops. The same
   * as `POST /_sandbox/{environment}/client-secret/rotate`.
   */
  rotateClientSecret(environment: Environment): string;
  /**
   * Stops the server and timers and closes the stores; scheduled work stays stored for the next
   * start. Made tenants close with it: with a `dataDir` they reopen on the next start, in memory they are gone.
   * The server stops accepting at once; requests in flight finish (up to 1 s, then they are cut);
   * a POS payment still waiting on its terminal (or a resend waiting on it with the same
   * `Idempotency-Key`) is answered 503 (code 19503) at once, and stays
   * pending with its terminal's answer stored, to run at the next start on the same data.
   */
  close(): Promise<void>;
}

const IN_PROCESS_BASE_URL = 'http://sandbox.localhost';
const DAY_MS = 86_400_000;

/** Creates a sandbox of the service: in memory (or in `dataDir`), answering both the Test and Live path families. */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const idempotencyTtlMs = options.idempotencyTtlMs ?? DAY_MS;
  const settings = tenantSettings(options, idempotencyTtlMs, () => sandbox.baseUrl);
  const publicUrl = options.publicUrl === undefined ? undefined : publicOrigin(options.publicUrl, 'publicUrl');
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576;
  const main = openTenant(settings);
  const { webcode, keys, clientSecrets, store, scheduler, control, clock } = main;
  const tenants = openTenants(options, settings, main);
  const http: HttpState = { server: undefined, boundHosts: new Set() };
  const traceId = () =>
    `sbx-${Math.floor(main.random() * 2 ** 48)
      .toString(16)
      .padStart(12, '0')}`;
  const handle = requestHandler({
    options,
    tenants,
    main,
    publicUrl,
    maxBodyBytes,
    idempotencyTtlMs,
    traceId,
    http,
    baseUrl: () => sandbox.baseUrl,
  });
  let closing: Promise<void> | undefined;
  const fetchHandle: Sandbox['handle'] = (request, info) => handle({ request, info }).then(fetchResponse);
  // The server answers from Node's own request and response; through `sandbox.handle` (and fetch's
  // `Request` and `Response`) only when a caller has put another handler in its place, a test's
  // recorder of the traffic, say.
  const serve = (request: NodeRequest, info: HandleInfo | undefined) =>
    sandbox.handle === fetchHandle ? handle({ request, info }) : sandbox.handle(request.toRequest(), info);

  const sandbox: Sandbox = {
    handle: fetchHandle,
    get handlers() {
      return mswHandlers(() => sandbox.baseUrl, sandbox.handle);
    },
    async listen(listenOptions = {}) {
      if (http.server) return { baseUrl: sandbox.baseUrl };
      const { serveNode } = await import('./http/node.js');
      http.server = await serveNode(serve, {
        port: listenOptions.port ?? 0,
        host: listenOptions.host ?? '127.0.0.1',
        maxBodyBytes,
        failure: (status, message) => failureBody(new ServiceFailure(status, codeOfStatus(status), message), traceId()),
      });
      http.boundHosts = new Set(http.server.hosts);
      return { baseUrl: sandbox.baseUrl };
    },
    get baseUrl() {
      return publicUrl ?? http.server?.baseUrl ?? IN_PROCESS_BASE_URL;
    },
    webcode,
    keys,
    clientSecrets,
    records: store.records(),
    requests: sandboxRequests(
      (webcode) => (webcode === undefined ? main.requests : tenants.all().find((tenant) => tenant.webcode === webcode)?.requests),
      requestRoutes(tenants),
    ),
    location: store.location,
    get webhookUrls() {
      return main.webhooks.urls;
    },
    set webhookUrls(urls: string[]) {
      main.webhooks.urls = urls;
    },
    webhooksSettled: () => scheduler.settled(),
    clock,
    faults: main.faults,
    control,
    // The typed methods run the control routes' own actions, as the sandbox's own keys would.
    ...typedControls((environment = 'test') => ({ environment, tenant: main, control, tenants })),
    close() {
      closing ??= closeSandbox(http, tenants);
      return closing;
    },
  };
  return sandbox;
}

/** The sandbox's Node server, once it listens, and the `Host` names its address answers to. */
interface HttpState {
  server: NodeServer | undefined;
  boundHosts: Set<string>;
}

/** The sandbox's tenants: its own (`main`), and the made ones, which share its settings, start with no webhook URLs, and with a data folder keep their state under it. */
function openTenants(options: SandboxOptions, settings: TenantSettings, main: Tenant): Tenants {
  const registry = options.dataDir === undefined ? undefined : new TenantRegistry(options.dataDir);
  try {
    return new Tenants(
      main,
      options.extraKeys ?? [],
      (made) => openTenant({ ...settings, ...made, made: true, dataDir: registry?.storeDir(made.webcode), webhookUrls: [] }),
      registry,
    );
  } catch (error) {
    main.scheduler.close();
    main.store.close();
    throw error;
  }
}

/** The request pipeline of the sandbox, its pages (the dashboard, the payment pages) included. */
function requestHandler(parts: {
  options: SandboxOptions;
  tenants: Tenants;
  main: Tenant;
  publicUrl: string | undefined;
  maxBodyBytes: number;
  idempotencyTtlMs: number;
  traceId: () => string;
  http: HttpState;
  baseUrl: () => string;
}): ReturnType<typeof pipeline> {
  const { options, tenants, main, publicUrl, maxBodyBytes } = parts;
  const declared = declaredHosts([...(options.allowedHosts ?? []), ...(publicUrl === undefined ? [] : [new URL(publicUrl).host])]);
  const dashboard: DashboardSettings = { tenants, formToken: randomToken(), accessToken: options.dashboardToken, maxBodyBytes };
  // A payment page's token names the tenant that made it (see pageTokenPrefix).
  const pageTenant = (url: URL): Tenant => {
    const token = pageSessionToken(url);
    return (token && tenants.byPageToken(token.token)) || main;
  };
  return pipeline({
    tenants,
    hosts: { bound: () => parts.http.boundHosts, declared, baseUrl: parts.baseUrl },
    failures: {
      traceId: parts.traceId,
      damage(error) {
        const damage = main.store.damage(error);
        if (damage) main.report(error);
        return damage;
      },
    },
    runDue: () => {
      for (const tenant of tenants.all()) tenant.scheduler.runDue();
    },
    origin: (url) => publicUrl ?? url.origin,
    maxBodyBytes,
    idempotencyTtlMs: parts.idempotencyTtlMs,
    pages: [
      ({ request, url }) => handleDashboard(fetchRequest(request), url, { ...dashboard, origin: publicUrl ?? url.origin }),
      ({ request, url }) => handlePage(request, url, { ...pageTenant(url), maxBodyBytes }),
    ],
  });
}

/** The `Sandbox` methods that run a control route. */
type TypedControls = Pick<
  Sandbox,
  | 'paySession'
  | 'expireSession'
  | 'resolvePosPayment'
  | 'terminals'
  | 'setTerminal'
  | 'resendDelivery'
  | 'emitEvent'
  | 'advanceClock'
  | 'reset'
  | 'createTenant'
  | 'tenants'
  | 'removeTenant'
  | 'rotateClientSecret'
>;

/** The sandbox's typed control methods, each the control route's own action on the context `own` gives. */
function typedControls(own: (environment?: Environment) => ControlContext): TypedControls {
  return {
    paySession: (environment, sessionId, payOptions) =>
      invoke(routes.paySession, own(environment), { params: { sessionId }, body: { holderName: payOptions?.holderName } }),
    expireSession: (environment, sessionId) => invoke(routes.expireSession, own(environment), { params: { sessionId } }),
    resolvePosPayment: (environment, posPaymentId, outcome) =>
      invoke(routes.resolvePosPayment, own(environment), { params: { posPaymentId }, body: { outcome } }),
    terminals: (environment) => invoke(routes.listTerminals, own(environment)).terminals,
    setTerminal: (environment, poiId, settings) =>
      invoke(routes.setTerminal, own(environment), {
        params: { poiId },
        body: {
          ...(settings.processingMs === undefined ? {} : { processingMs: settings.processingMs }),
          ...(settings.online === undefined ? {} : { online: settings.online }),
        },
      }),
    resendDelivery: (environment, deliveryId) => invoke(routes.resendDelivery, own(environment), { params: { deliveryId } }),
    emitEvent: (environment, eventCode, reference) => invoke(routes.emitEvent, own(environment), { body: { eventCode, reference } }),
    advanceClock: (ms) => invoke(routes.advanceClock, own(), { body: { ms } }),
    reset: async () => {
      await invoke(routes.reset, own());
    },
    createTenant: (tenantOptions) => invoke(routes.createTenant, own(), { body: tenantOptions ?? {} }),
    tenants: () => invoke(routes.listTenants, own()).tenants,
    removeTenant: async (webcode) => {
      await invoke(routes.removeTenant, own(), { params: { webcode } });
    },
    rotateClientSecret: (environment) => invoke(routes.rotateClientSecret, own(environment)).clientSecret,
  };
}

/**
 * What a request still waiting on its terminal is told when the sandbox stops: its payment stays
 * pending and completes at the next start. With an `Idempotency-Key`, the same key and body read its
 * answer then; without one a resend is a new payment, so it is told to look the payment up instead.
 */
function stoppingFailure({ posPaymentId, keyed }: { posPaymentId?: string; keyed: boolean }): ServiceFailure {
  const payment = posPaymentId === undefined ? 'this payment' : `POS payment ${posPaymentId}`;
  const next = keyed
    ? 'retry with the same Idempotency-Key and body to read its outcome'
    : `it was sent without an Idempotency-Key, so sending it again would start a new payment: look it up instead (GET /pos/payments, or its posPaymentId${posPaymentId === undefined ? '' : ` ${posPaymentId}`})`;
  return new ServiceFailure(
    503,
    SANDBOX_CODES.stopping,
    `The sandbox stopped while the terminal processed ${payment}: it completes at the next start; ${next}`,
  );
}

/**
 * Stops accepting first (the requests in flight may still need the scheduler and the store), answers
 * POS payments waiting on their terminal 503, then closes the timers, the made tenants, the log and the store.
 */
async function closeSandbox(http: HttpState, tenants: Tenants): Promise<void> {
  const { main } = tenants;
  const drained = http.server?.close();
  for (const tenant of tenants.all()) tenant.api.releaseWaiting(stoppingFailure);
  await drained;
  http.server = undefined;
  main.scheduler.close();
  await tenants.closeMade();
  await main.scheduler.settled();
  main.requests.close();
  main.store.close();
}

/** `sandbox.requests`' way to the request log's control routes, on the tenant a webcode names (the sandbox's own by default). */
function requestRoutes(tenants: Tenants): RequestRoutes {
  const context = (webcode: string | undefined, environment: Environment): ControlContext => {
    const tenant = webcode === undefined ? tenants.main : tenants.all().find((candidate) => candidate.webcode === webcode);
    if (!tenant) throw new TypeError(`sandbox.requests: no tenant with webcode ${webcode}`);
    return { environment, tenant, control: tenant.control, tenants };
  };
  return {
    list: (webcode, environment, query) => invoke(routes.listRequests, context(webcode, environment), { query }),
    clear: (webcode, environment, filter) => invoke(routes.clearRequests, context(webcode, environment), { query: filter }).deleted,
  };
}

/** The sandbox's own tenant as the options describe it, with the documented defaults. */
function tenantSettings(options: SandboxOptions, idempotencyTtlMs: number, origin: () => string): TenantSettings {
  const clientSecrets = { test: options.clientSecrets?.test ?? 'cs_test_sandbox', live: options.clientSecrets?.live ?? 'cs_live_sandbox' };
  // An empty secret cannot sign: a payment would complete and its redirect then fail.
  if (clientSecrets.test === '' || clientSecrets.live === '') throw new TypeError('clientSecrets must not be empty strings');
  return {
    webcode: options.webcode ?? 'SANDBOX',
    made: false,
    keys: { test: options.keys?.test ?? 'sk_test_sandbox', live: options.keys?.live ?? 'sk_live_sandbox' },
    clientSecrets,
    dataDir: options.dataDir,
    clock: options.clock ?? systemClock(),
    seed: options.seed ?? 1,
    webhookUrls: [...(options.webhookUrls ?? [])],
    webhookRetry: options.webhookRetry,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    onWebhookAttempt: options.onWebhookAttempt,
    posDelay: options.posDelayMs,
    posTimeoutResolveMs: options.posTimeoutResolveMs ?? 10_000,
    modificationResolveMs: options.modificationResolveMs ?? 200,
    idempotencyTtlMs,
    requestLogSize: options.requestLogSize ?? DEFAULT_REQUEST_LOG_SIZE,
    onError:
      options.onError ??
      ((error) => console.error('payment-service-sdk sandbox:', error instanceof SandboxStoreError ? error.message : error)),
    origin,
  };
}

/** The code of a failure answered before the request reached the sandbox (Node's parser, the body limit). */
function codeOfStatus(status: number): number {
  if (status === 413) return SANDBOX_CODES.bodyTooLarge;
  return status === 431 ? SANDBOX_CODES.headersTooLarge : status === 500 ? SANDBOX_CODES.internal : 12001;
}

/** A secret of this process (not of the seeded stream: it must not be predictable). */
function randomToken(): string {
  const bytes = new Uint8Array(18);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_');
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
