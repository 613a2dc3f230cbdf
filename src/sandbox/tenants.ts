/**
 * A tenant is everything one business's requests work on: its webcode, keys and client secrets,
 * its store, clock, operations, scheduled work, webhooks and controls. Today a sandbox has one
 * (its own); {@link Tenants} finds the tenant of an API key.
 */
import type { Environment } from '../core/options.js';
import { createApi, type SandboxApi } from './api/index.js';
import { API_ROUTES } from './api/routes.js';
import { type OffsetClock, offsetClock, type SandboxClock, seededRandom } from './clock.js';
import { SandboxControl } from './control/control.js';
import { FaultRules } from './faults.js';
import { Scheduler } from './scheduler.js';
import { SandboxStore } from './store.js';
import { type AttemptReport, WEBHOOK_ATTEMPT, WebhookDispatcher, type WebhookRetryOptions } from './webhooks.js';

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
  readonly clientSecrets: { test: string; live: string };
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
  /** Reports a fault of the tenant's own work; a damaged database by name and with what to do, once. */
  report(error: unknown): void;
}

/** What a tenant is opened with. */
export interface TenantSettings {
  webcode: string;
  keys: { test: string; live: string };
  clientSecrets: { test: string; live: string };
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
  const store = new SandboxStore(settings.dataDir);
  const clock = offsetClock(settings.clock, store.counter('clockOffset'));
  // Each run of a stored sandbox draws from its own stream, so tokens never repeat those of earlier runs.
  const random = seededRandom(settings.seed + (store.runs - 1) * 0x9e3779b9);
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
  });
  const api = createApi({
    webcode,
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
  let damageReported = false;
  const report = (error: unknown): void => {
    const damage = store.damage(error);
    if (!damage) settings.onError(error);
    else if (!damageReported) {
      damageReported = true;
      settings.onError(damage);
    }
  };
  const scheduler = new Scheduler({ store, clock, handlers: { ...api.jobs, [WEBHOOK_ATTEMPT]: webhooks.handler }, onError: report });
  webhooks.attach(scheduler);
  const control = new SandboxControl({ store, api, webhooks, scheduler, clock, origin: settings.origin });
  try {
    store.purgeIdempotency(clock.now() - settings.idempotencyTtlMs);
    // Work scheduled before a restart is in the store: run what is due, arm the timer for the rest.
    scheduler.runDue();
  } catch (error) {
    scheduler.close();
    store.close();
    throw store.damage(error) ?? error;
  }
  const { keys, clientSecrets } = settings;
  return { webcode, keys, clientSecrets, store, clock, random, webhooks, api, scheduler, control, faults, report };
}

/** Who is calling: the tenant an API key belongs to, and the key's own entry. */
export interface Caller {
  tenant: Tenant;
  key: SandboxKey;
}

/** The tenants of a sandbox and their keys. Today there is one: the sandbox's own. */
export class Tenants {
  /** The sandbox's own tenant: the options' webcode and keys, what the `Sandbox` object shows. */
  readonly main: Tenant;
  readonly #keys: Map<string, SandboxKey>;

  constructor(main: Tenant, extraKeys: readonly SandboxKey[]) {
    this.main = main;
    this.#keys = new Map<string, SandboxKey>([
      [main.keys.test, { key: main.keys.test, environment: 'test' }],
      [main.keys.live, { key: main.keys.live, environment: 'live' }],
      ...extraKeys.map((entry): [string, SandboxKey] => [entry.key, entry]),
    ]);
  }

  /** The caller an API key names; `undefined` for a key the sandbox does not know. */
  byKey(key: string): Caller | undefined {
    const entry = this.#keys.get(key);
    return entry && { tenant: this.main, key: entry };
  }
}
