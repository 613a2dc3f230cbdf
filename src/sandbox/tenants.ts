/**
 * A tenant is everything one business's requests work on: its webcode, keys and client secrets,
 * its store, clock, operations, scheduled work, webhooks and controls. A sandbox has its own and
 * those made for test workers; {@link Tenants} finds the tenant of an API key.
 */
import type { Environment } from '../core/options.js';
import { createApi, type SandboxApi } from './api/index.js';
import { API_ROUTES } from './api/routes.js';
import { keyedRandom, type OffsetClock, offsetClock, type SandboxClock, seededRandom } from './clock.js';
import { SandboxControl } from './control/control.js';
import { FaultRules } from './faults.js';
import { RequestLog } from './request-log/store.js';
import { invalid, SANDBOX_CODES, ServiceFailure, unknownKey } from './responses.js';
import { Scheduler } from './scheduler.js';
import { SandboxStore, SandboxStoreError } from './store.js';
import { type MadeTenant, type TenantRegistry, WEBCODE } from './tenant-registry.js';
import { type AttemptReport, WEBHOOK_ATTEMPT, WEBHOOK_COPIES, WebhookDispatcher, type WebhookRetryOptions } from './webhooks.js';

/** An API key the sandbox accepts. */
export interface SandboxKey {
  key: string;
  environment: Environment;
  /** Defaults to the sandbox's webcode. */
  webcode?: string | undefined;
  /** Client addresses allowed to use the key; other addresses get 403 without a code. Default: any. */
  ipAllowList?: readonly string[] | undefined;
}

/** The state and the workings of one tenant. */
export interface Tenant {
  readonly webcode: string;
  readonly keys: { test: string; live: string };
  /** The current client secrets; {@link setClientSecret} changes them in place. */
  readonly clientSecrets: { test: string; live: string };
  /**
   * Every secret the request log masks: the keys, the client secrets, and those a rotation
   * replaced (tokens made with them are still about). A new array after each rotation.
   */
  readonly secrets: readonly string[];
  /** Makes `secret` the client secret of `environment` (for {@link Tenants.rotateClientSecret}). */
  setClientSecret(environment: Environment, secret: string): void;
  readonly store: SandboxStore;
  readonly clock: OffsetClock;
  /** The seeded stream of the tenant's tokens, references, delays and trace ids. */
  readonly random: () => number;
  readonly webhooks: WebhookDispatcher;
  readonly api: SandboxApi;
  readonly scheduler: Scheduler;
  readonly control: SandboxControl;
  /** The tenant's fault rules. */
  readonly faults: FaultRules;
  /** What the requests to the tenant's API sent and got back, the last `requestLogSize` of them. */
  readonly requests: RequestLog;
  /** Reports a fault of the tenant's own work; a damaged database by name and with what to do, once. */
  report(error: unknown): void;
  /**
   * Aborted once the tenant's removal begins: its waits end (latency holds, POS terminals, key
   * waits, webhook attempts, the dashboard's live stream) and each of its requests still in flight
   * is answered 403, as for an unknown key.
   */
  readonly removed: AbortSignal;
  /** Aborts {@link removed} and answers the requests waiting on the tenant's work; for {@link Tenants.remove}. */
  markRemoved(): void;
}

/** What a tenant is opened with. */
export interface TenantSettings {
  webcode: string;
  keys: { test: string; live: string };
  clientSecrets: { test: string; live: string };
  /**
   * A tenant made for a test worker: its payment-page tokens begin with {@link pageTokenPrefix}, and
   * its stream is keyed by its webcode ({@link keyedRandom}). `false` for the sandbox's own.
   */
  made: boolean;
  /** Folder of the tenant's store; `undefined`: memory only. */
  dataDir: string | undefined;
  clock: SandboxClock;
  seed: number;
  webhookUrls: string[];
  webhookRetry: WebhookRetryOptions | undefined;
  fetch: typeof fetch;
  onWebhookAttempt: ((report: AttemptReport) => void) | undefined;
  /** Simulated terminal time of one POS payment, in ms. */
  posDelay: number | readonly [number, number] | undefined;
  posTimeoutResolveMs: number;
  modificationResolveMs: number;
  idempotencyTtlMs: number;
  /** Entries of the request log kept; 0 turns it off. */
  requestLogSize: number;
  onError: (error: unknown) => void;
  /** The sandbox's base URL, for the payment links the controls answer. */
  origin: () => string;
}

function delayPicker(option: TenantSettings['posDelay'], random: () => number): () => number {
  if (typeof option === 'number') return () => option;
  const [min, max] = option ?? [2_000, 3_000];
  return () => Math.round(min + (max - min) * random());
}

/** Opens a tenant's store and wires its parts; work it had scheduled before a restart runs if due. */
export function openTenant(settings: TenantSettings): Tenant {
  const { webcode } = settings;
  const removal = new AbortController();
  // A made tenant's store lies beside its keys (`tenants.json`): its owner's only, as they are.
  const store = new SandboxStore(settings.dataDir, { ownerOnly: settings.made });
  const clock = offsetClock(settings.clock, store.counter('clockOffset'));
  // Each run of a stored sandbox draws from its own stream, so tokens never repeat those of earlier runs.
  const runSeed = settings.seed + (store.runs - 1) * 0x9e3779b9;
  const random = settings.made ? keyedRandom(runSeed, webcode) : seededRandom(runSeed);
  const faults = new FaultRules(
    API_ROUTES.map((route) => route.template),
    settings.seed,
  );
  const webhooks = new WebhookDispatcher({
    faults,
    store,
    clock,
    fetch: settings.fetch,
    urls: settings.webhookUrls,
    retry: settings.webhookRetry,
    onAttempt: settings.onWebhookAttempt,
    // Only a made tenant is ever removed: the sandbox's own attempts keep their plain timeout.
    stop: settings.made ? removal.signal : undefined,
  });
  const report = reporter(store, removal.signal, settings.onError);
  const api = createApi({
    webcode,
    tokenPrefix: settings.made ? pageTokenPrefix(webcode) : '',
    clock,
    random,
    store,
    webhooks,
    // The scheduler is made next, from the operations' job handlers; nothing schedules before it exists.
    schedule: (kind, delayMs, subject) => scheduler.add(kind, delayMs, subject),
    posDelay: delayPicker(settings.posDelay, random),
    posTimeoutResolveMs: settings.posTimeoutResolveMs,
    modificationResolveMs: settings.modificationResolveMs,
  });
  const scheduler = new Scheduler({
    store,
    clock,
    handlers: { ...api.jobs, [WEBHOOK_ATTEMPT]: webhooks.handler, [WEBHOOK_COPIES]: webhooks.copier },
    onError: report,
  });
  webhooks.attach(scheduler);
  let requests: RequestLog;
  try {
    requests = new RequestLog(store, { webcode, size: settings.requestLogSize, onError: report });
    store.idempotency.purge(clock.now() - settings.idempotencyTtlMs);
    // Work scheduled before a restart is in the store: run what is due, arm the timer for the rest.
    scheduler.runDue();
  } catch (error) {
    scheduler.close();
    store.close();
    throw store.damage(error) ?? error;
  }
  const control = new SandboxControl({ store, api, webhooks, scheduler, clock, requests, origin: settings.origin });
  const { keys, clientSecrets } = settings;
  let secrets: readonly string[] = Object.freeze([...Object.values(keys), ...Object.values(clientSecrets)]);
  const setClientSecret = (environment: Environment, secret: string) => {
    clientSecrets[environment] = secret;
    secrets = Object.freeze([...new Set([...secrets, secret])]);
  };
  const markRemoved = () => {
    removal.abort();
    // As the sandbox's stop does (503 there): a request waiting here is answered now.
    api.releaseWaiting(unknownKey());
  };
  const parts = { store, clock, random, webhooks, api, scheduler, control, faults, requests, report };
  return {
    webcode,
    keys,
    clientSecrets,
    get secrets() {
      return secrets;
    },
    setClientSecret,
    ...parts,
    removed: removal.signal,
    markRemoved,
  };
}

/**
 * Where a tenant's background failures go: to `onError`, a damaged store once (restated with its
 * file and what to do), nothing once the tenant is removed (work cut short by the removal, a closed
 * store or an aborted attempt, is how a removal ends, not a fault).
 */
function reporter(store: SandboxStore, removed: AbortSignal, onError: (error: unknown) => void): (error: unknown) => void {
  let damageReported = false;
  return (error) => {
    if (removed.aborted) return;
    const damage = store.damage(error);
    if (!damage) onError(error);
    else if (!damageReported) {
      damageReported = true;
      onError(damage);
    }
  };
}

/** Who is calling: the tenant an API key belongs to, and the key's own entry. */
export interface Caller {
  tenant: Tenant;
  key: SandboxKey;
}

/** A tenant made through `POST /_sandbox/tenants` or `sandbox.createTenant()`, as it is answered. */
export interface TenantView {
  webcode: string;
  /** The name given at creation; the webcode when none was. */
  name: string;
  keys: { test: string; live: string };
  clientSecrets: { test: string; live: string };
}

/** What a new tenant may be given: anything left out is generated. */
export interface TenantOptions {
  /** 1 to 32 characters `A`-`Z`, `0`-`9` and `_`, unique in the sandbox. Default: `T` and 10 random characters. */
  webcode?: string | undefined;
  /** A label for people (the dashboard, listings), 1 to 100 characters. Default: the webcode. */
  name?: string | undefined;
}

/** Opens a made tenant; the rest is the sandbox's. */
export type OpenMade = (made: MadeTenant) => Tenant;

/** What begins a made tenant's payment-page tokens: its webcode, which no other tenant has and no `-` ends. */
export function pageTokenPrefix(webcode: string): string {
  return `${webcode}-`;
}

/**
 * The tenants of a sandbox and their keys: its own (`main`), and those made for test workers, each
 * with its own store, clock and keys. `byKey` is the only way from a key to a tenant. With a
 * registry (a data folder), made tenants are kept on disk and reopened by the next sandbox.
 */
export class Tenants {
  /** The sandbox's own tenant: the options' webcode and keys, what the `Sandbox` object shows. */
  readonly main: Tenant;
  readonly #keys: Map<string, Caller>;
  readonly #made = new Map<string, { tenant: Tenant; made: MadeTenant }>();
  readonly #open: OpenMade;
  readonly #registry: TenantRegistry | undefined;

  /** Reopens the tenants the registry keeps; throws (having closed them) when one cannot be opened. */
  constructor(main: Tenant, extraKeys: readonly SandboxKey[], open: OpenMade, registry?: TenantRegistry) {
    this.main = main;
    this.#open = open;
    this.#registry = registry;
    const entries: SandboxKey[] = [
      { key: main.keys.test, environment: 'test' },
      { key: main.keys.live, environment: 'live' },
      ...extraKeys,
    ];
    this.#keys = new Map(entries.map((entry) => [entry.key, { tenant: main, key: entry }]));
    try {
      for (const made of registry?.load() ?? []) {
        if (made.webcode === main.webcode) {
          throw new SandboxStoreError(
            registry?.storeDir(made.webcode) ?? '',
            `A made tenant of the data folder has the sandbox's own webcode ${made.webcode}: start with another webcode, or remove the tenant first`,
          );
        }
        this.#add(made, open(made));
      }
    } catch (error) {
      for (const { tenant } of this.#made.values()) closeNow(tenant);
      throw error;
    }
  }

  /** The caller an API key names; `undefined` for a key the sandbox does not know. */
  byKey(key: string): Caller | undefined {
    return this.#keys.get(key);
  }

  /**
   * The tenant a payment page's token belongs to: the made tenant its prefix names, the sandbox's
   * own for a token without one; `undefined` when the prefix names no tenant.
   */
  byPageToken(token: string): Tenant | undefined {
    const dash = token.indexOf('-');
    return dash < 0 ? this.main : this.#made.get(token.slice(0, dash))?.tenant;
  }

  /** The sandbox's own tenant first, then the made ones in the order they were made. */
  all(): Tenant[] {
    return [this.main, ...[...this.#made.values()].map((entry) => entry.tenant)];
  }

  /** Makes a tenant: 400 for a webcode or name of the wrong form, 409 for a webcode already in use. */
  create(options: TenantOptions = {}): TenantView {
    const { webcode = `T${randomText(10, UPPER)}`, name = webcode } = options;
    if (typeof webcode !== 'string' || !WEBCODE.test(webcode)) {
      throw invalid('webcode must be 1 to 32 characters A-Z, 0-9 or _');
    }
    if (typeof name !== 'string' || name.trim() === '' || name.length > 100) throw invalid('name must be 1 to 100 characters');
    if (webcode === this.main.webcode || this.#made.has(webcode)) {
      throw new ServiceFailure(409, SANDBOX_CODES.tenantExists, `A tenant with webcode ${webcode} exists already`);
    }
    const secret = () => randomText(24, URL_SAFE);
    const made: MadeTenant = {
      webcode,
      name,
      keys: { test: `sk_test_${secret()}`, live: `sk_live_${secret()}` },
      clientSecrets: { test: `cs_test_${secret()}`, live: `cs_live_${secret()}` },
      seed: Math.floor(this.main.random() * 2 ** 32),
    };
    // A folder left by a removal cut short must not lend its records to the new tenant.
    this.#registry?.removeFiles(webcode);
    const tenant = this.#open(made);
    try {
      this.#registry?.save([...this.#list(), made]);
    } catch (error) {
      closeNow(tenant);
      this.#registry?.removeFiles(webcode);
      throw error;
    }
    this.#add(made, tenant);
    return view(made);
  }

  /**
   * Gives `tenant` a new client secret for `environment`, as the service's dashboard does: tokens
   * made from now on are signed with it; the old one stays masked in the request log. A made
   * tenant's is kept in the registry (written first: a failed write changes nothing); the sandbox's
   * own lasts until it stops, since its secrets come from its options.
   */
  rotateClientSecret(tenant: Tenant, environment: Environment): string {
    const secret = `cs_${environment}_${randomText(24, URL_SAFE)}`;
    const entry = this.#made.get(tenant.webcode);
    if (entry?.tenant === tenant) {
      const rotated = { ...entry.made, clientSecrets: { ...entry.made.clientSecrets, [environment]: secret } };
      this.#registry?.save(this.#list().map((made) => (made === entry.made ? rotated : made)));
    }
    // A made tenant's client secrets are its registry entry's object: both change together.
    tenant.setClientSecret(environment, secret);
    return secret;
  }

  /** The made tenants, in the order they were made (the sandbox's own is not among them). */
  list(): TenantView[] {
    return this.#list().map(view);
  }

  /**
   * Removes a made tenant: its keys stop working at once, its scheduled work stops, its store
   * closes and its files are deleted. 404 for an unknown webcode. Its requests in flight are
   * answered 403, as for an unknown key (see {@link retireTenant}).
   */
  async remove(webcode: string): Promise<void> {
    const entry = this.#made.get(webcode);
    if (!entry) throw new ServiceFailure(404, SANDBOX_CODES.notFound, `No tenant with webcode ${webcode}`);
    this.#made.delete(webcode);
    const { tenant } = entry;
    this.#keys.delete(tenant.keys.test);
    this.#keys.delete(tenant.keys.live);
    // Off the list first: a crash before the files are gone leaves a folder the next start deletes.
    this.#registry?.save(this.#list());
    await retireTenant(tenant);
    this.#registry?.removeFiles(webcode);
  }

  /** Closes every made tenant (the sandbox closes its own); with a registry they reopen on the next start. */
  async closeMade(): Promise<void> {
    await Promise.all([...this.#made.values()].map(({ tenant }) => closeTenant(tenant)));
  }

  #add(made: MadeTenant, tenant: Tenant): void {
    const { webcode } = made;
    this.#made.set(webcode, { tenant, made });
    this.#keys.set(made.keys.test, { tenant, key: { key: made.keys.test, environment: 'test', webcode } });
    this.#keys.set(made.keys.live, { tenant, key: { key: made.keys.live, environment: 'live', webcode } });
  }

  #list(): MadeTenant[] {
    return [...this.#made.values()].map((entry) => entry.made);
  }
}

/** Closes a tenant that has not answered anything yet: nothing can be in flight. */
function closeNow(tenant: Tenant): void {
  tenant.scheduler.close();
  tenant.requests.close();
  tenant.store.close();
}

/** Stops a tenant's scheduled work, waits for the webhook attempts in flight, and closes its store. */
async function closeTenant(tenant: Tenant): Promise<void> {
  if (tenant.scheduler.closed) return;
  tenant.scheduler.close();
  await tenant.scheduler.settled();
  tenant.requests.close();
  tenant.store.close();
}

/**
 * Ends a tenant whose requests may be in flight. Marked removed first: its waits end and its
 * webhook attempts are cut. Its store then closes at once: transactions are synchronous, so none
 * is under way, and none can begin after this one; a write either committed before the removal or
 * never happens, and a request that touches the store afterwards is answered 403 by the tenant step.
 */
async function retireTenant(tenant: Tenant): Promise<void> {
  tenant.markRemoved();
  tenant.scheduler.close();
  tenant.store.close();
  // The attempts cut by the removal end without writing (the scheduler is closed): the files can go after them.
  await tenant.scheduler.settled();
}

function view(made: MadeTenant): TenantView {
  return { webcode: made.webcode, name: made.name, keys: { ...made.keys }, clientSecrets: { ...made.clientSecrets } };
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Secret text from the platform's cryptographic source: a tenant's keys must not be guessable from the seed. */
function randomText(length: number, alphabet: string): string {
  const bytes = new Uint8Array(length);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => alphabet[byte % alphabet.length]).join('');
}
