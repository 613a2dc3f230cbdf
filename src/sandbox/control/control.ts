/** What a developer does to the sandbox from outside its API, with the types of what the controls answer. */
import type { Environment } from '../../core/options.js';
import { notFound } from '../api/context.js';
import type { SandboxApi } from '../api/index.js';
import { setTerminal, type TerminalChange, type TerminalSettings, terminalSettings } from '../api/terminals.js';
import type { OffsetClock } from '../clock.js';
import { referencesIn } from '../faults.js';
import type { ControlPayment, FaultEntry, ModificationRecord, PosRecord, SessionRecord, WebhookDelivery } from '../records.js';
import type { RequestLog } from '../request-log/store.js';
import { invalid } from '../responses.js';
import type { Scheduler } from '../scheduler.js';
import type { SandboxStore } from '../store.js';
import type { KeysetPage } from '../store-records.js';
import { cursorAfter, listingParams } from '../validation.js';
import type { WebhookDispatcher } from '../webhooks.js';

/** The sandbox clock as the control API reports it. */
export interface ClockState {
  /** Sandbox time, Unix ms. */
  epochMs: number;
  /** Sandbox time, ISO 8601 in UTC. */
  iso: string;
  /** How far the sandbox clock runs ahead of the clock it was created with, in ms. */
  offsetMs: number;
}

/** A session as the control API shows it: the stored record and the link of its payment page. */
export type ControlSession = SessionRecord & { paymentUrl: string };

/** A record and what happened around it: its modifications, the webhook deliveries about it, and the fault rules that struck it. */
export interface RecordTimeline<R> {
  record: R;
  modifications: ModificationRecord[];
  deliveries: WebhookDelivery[];
  /** Where fault rules struck calls that named or made this record, or its webhook events; oldest first. */
  faults: FaultEntry[];
}

/** One page of a control listing; `cursor` is `null` on the last page. */
export interface ControlPage<R> {
  items: R[];
  cursor: string | null;
  hasMore: boolean;
  total: number;
}

/** Filters of the control listings. */
export interface ControlListParams {
  status?: string | undefined;
  take?: number | undefined;
  cursor?: string | undefined;
  order?: 'asc' | 'desc' | undefined;
}

/** Longest clock advance accepted at once: a year. */
export const MAX_ADVANCE_MS = 366 * 86_400_000;
/** Scheduled jobs run by one advance at most (a bound against a job that reschedules itself forever). */
const MAX_ADVANCE_STEPS = 10_000;

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration in ms: a number of ms, `"90s"`, `"5m"`, `"2h"`, `"1d"` (units may be combined:
 * `"1h30m"`), or ISO 8601 (`"PT5M"`, `"P1DT2H"`). `undefined` when it is none of these.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string' || value === '') return undefined;
  const iso = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(value);
  if (iso && value !== 'P' && !value.endsWith('T')) {
    const [days, hours, minutes, seconds] = iso.slice(1).map((part) => Number(part ?? 0));
    return Math.round(((days ?? 0) * 86_400 + (hours ?? 0) * 3_600 + (minutes ?? 0) * 60 + (seconds ?? 0)) * 1_000);
  }
  if (!/^(\d+(ms|s|m|h|d))+$/.test(value)) return undefined;
  let total = 0;
  for (const [, amount, unit] of value.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(amount) * (DURATION_UNITS[unit ?? 'ms'] ?? 1);
  return total;
}

function pageOf<R, T>(page: KeysetPage<R>, order: 'asc' | 'desc', view: (record: R) => T): ControlPage<T> {
  return {
    items: page.items.map(view),
    cursor: page.next === null ? null : cursorAfter(order, page.next),
    hasMore: page.next !== null,
    total: page.total,
  };
}

function queryOf(params: ControlListParams): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, String(value));
  return query;
}

/**
 * What a developer does to the sandbox from outside its API: pay or expire a session, resolve a POS
 * payment, resend a webhook or emit an event, move time, start over. The `Sandbox` object, the
 * control API (`/_sandbox/...`) and the dashboard all go through here.
 */
export class SandboxControl {
  readonly #store: SandboxStore;
  readonly #api: SandboxApi;
  readonly #webhooks: WebhookDispatcher;
  readonly #scheduler: Scheduler;
  readonly #clock: OffsetClock;
  readonly #requests: RequestLog;
  readonly #origin: () => string;

  constructor(options: {
    store: SandboxStore;
    api: SandboxApi;
    webhooks: WebhookDispatcher;
    scheduler: Scheduler;
    clock: OffsetClock;
    requests: RequestLog;
    origin: () => string;
  }) {
    this.#store = options.store;
    this.#requests = options.requests;
    this.#api = options.api;
    this.#webhooks = options.webhooks;
    this.#scheduler = options.scheduler;
    this.#clock = options.clock;
    this.#origin = options.origin;
  }

  /**
   * The same controls, giving out links on `origin` (the one a request reached the sandbox by)
   * instead of the sandbox's base URL. They share every store and timer with this one.
   */
  forOrigin(origin: string): SandboxControl {
    return new SandboxControl({
      store: this.#store,
      api: this.#api,
      webhooks: this.#webhooks,
      scheduler: this.#scheduler,
      clock: this.#clock,
      requests: this.#requests,
      origin: () => origin,
    });
  }

  // Reads

  /** A session with its payment page link. */
  sessionView(session: SessionRecord): ControlSession {
    return {
      ...session,
      paymentUrl: `${this.#origin()}/${session.environment === 'test' ? 'pay-external-test' : 'pay-external'}/${session.token}`,
    };
  }

  listSessions(environment: Environment, params: ControlListParams = {}): ControlPage<ControlSession> {
    const query = queryOf(params);
    const listing = listingParams(query);
    const page = this.#store.sessions.page({ environment, status: params.status }, listing);
    return pageOf(page, listing.order, (session) => this.sessionView(session));
  }

  listPosPayments(environment: Environment, params: ControlListParams = {}): ControlPage<PosRecord> {
    const listing = listingParams(queryOf(params));
    return pageOf(this.#store.posPayments.page({ environment, status: params.status }, listing), listing.order, (record) => record);
  }

  listModifications(
    environment: Environment,
    params: ControlListParams & { type?: string | undefined } = {},
  ): ControlPage<ModificationRecord> {
    const listing = listingParams(queryOf(params));
    const page = this.#store.modifications.page({ environment, status: params.status, operation_type: params.type }, listing);
    return pageOf(page, listing.order, (record) => record);
  }

  listDeliveries(environment: Environment, params: ControlListParams = {}): ControlPage<WebhookDelivery> {
    const listing = listingParams(queryOf(params));
    return pageOf(this.#store.deliveries.page({ environment, status: params.status }, listing), listing.order, (record) => record);
  }

  /** A session, its modifications and the webhook deliveries about its payment. */
  session(environment: Environment, sessionId: string): RecordTimeline<ControlSession> {
    const session = this.#api.sessions.get(environment, sessionId);
    if (!session) throw notFound('Session');
    const references = [sessionId, ...session.attempts.map((attempt) => attempt.paymentReference)];
    return {
      record: this.sessionView(session),
      modifications: this.#store.modifications.all({ environment, session_id: sessionId }),
      deliveries: session.paymentReference === null ? [] : this.#deliveriesAbout(environment, session.paymentReference),
      faults: this.#store.faultEntries.about(environment, references),
    };
  }

  posPayment(environment: Environment, posPaymentId: string): RecordTimeline<PosRecord> {
    const record = this.#store.posPayments.get(posPaymentId);
    if (record?.environment !== environment) throw notFound('POS payment');
    return {
      record,
      modifications: this.#store.modifications.all({ environment, session_id: posPaymentId }),
      deliveries: this.#deliveriesAbout(environment, posPaymentId),
      faults: this.#store.faultEntries.about(environment, [posPaymentId]),
    };
  }

  modification(environment: Environment, operationReference: string): RecordTimeline<ModificationRecord> {
    const record = this.#store.modifications.get(operationReference);
    if (record?.environment !== environment) throw notFound('Modification');
    return {
      record,
      modifications: [],
      deliveries: this.#deliveriesAbout(environment, record.paymentReference).filter(
        (delivery) => delivery.event.event_code === 'REFUND' && delivery.event.data.refundReference === operationReference,
      ),
      faults: this.#store.faultEntries.about(environment, [operationReference]),
    };
  }

  delivery(environment: Environment, id: number): WebhookDelivery {
    const delivery = this.#store.deliveries.get(String(id));
    if (delivery?.environment !== environment) throw notFound('Webhook delivery');
    return delivery;
  }

  /** The fault entry of the webhook rule that made a delivery (duplicated, delayed, dropped or held it back), if one did. */
  deliveryFault(delivery: WebhookDelivery): FaultEntry | undefined {
    if (!delivery.fault) return undefined;
    const references = referencesIn(delivery.event.data);
    return this.#store.faultEntries.about(delivery.environment, references).find((entry) => entry.deliveries.includes(delivery.id));
  }

  /** The session or POS payment a payment reference belongs to. */
  paymentOwner(environment: Environment, paymentReference: string): { kind: 'session' | 'posPayment'; id: string } | undefined {
    const session = this.#store.sessions.findBy({ payment_reference: paymentReference, environment });
    if (session) return { kind: 'session', id: session.sessionId };
    const pos = this.#store.posPayments.get(paymentReference);
    return pos?.environment === environment ? { kind: 'posPayment', id: pos.posPaymentId } : undefined;
  }

  /** How many records of each kind one environment holds. */
  counts(environment: Environment): { sessions: number; posPayments: number; modifications: number; deliveries: number } {
    return {
      sessions: this.#store.sessions.count({ environment }),
      posPayments: this.#store.posPayments.count({ environment }),
      modifications: this.#store.modifications.count({ environment }),
      deliveries: this.#store.deliveries.count({ environment }),
    };
  }

  /** Calls `listener` after each change of the stored state; returns the function that stops it. */
  watch(listener: () => void): () => void {
    return this.#store.watch(listener);
  }

  #deliveriesAbout(environment: Environment, paymentReference: string): WebhookDelivery[] {
    return this.#store.deliveries.all({ environment, payment_reference: paymentReference });
  }

  // Actions

  /**
   * Pays a pending session as `holderName` would on the hosted page (default: a name that pays).
   * `from` is what the session's timeline names as the payer: `control` (the default) or `dashboard`.
   */
  async paySession(
    environment: Environment,
    sessionId: string,
    options: { holderName?: string | undefined; from?: ControlPayment['from'] | undefined } = {},
  ): Promise<ControlSession> {
    const holderName = options.holderName ?? 'Jane Tester';
    if (typeof holderName !== 'string' || holderName.trim().length < 3) throw invalid('holderName must be a name of at least 3 characters');
    const from = options.from ?? 'control';
    const session = this.#store.transaction(() => this.#api.sessions.payAs(environment, sessionId, { from, holderName }));
    await this.#settle();
    return this.sessionView(session);
  }

  /** Expires a pending session now, as if its payment page had timed out. */
  expireSession(environment: Environment, sessionId: string): ControlSession {
    const session = this.#store.transaction(() => this.#api.sessions.expireNow(environment, sessionId));
    this.#scheduler.reschedule();
    return this.sessionView(session);
  }

  /** Resolves a `pending` or `timeout` POS payment now, to `success` or `failed`. */
  async resolvePosPayment(environment: Environment, posPaymentId: string, outcome: 'success' | 'failed'): Promise<PosRecord> {
    if (outcome !== 'success' && outcome !== 'failed') throw invalid('outcome must be success or failed');
    const record = this.#store.transaction(() => this.#api.posPayments.resolveNow(environment, posPaymentId, outcome));
    await this.#settle();
    return record;
  }

  /** The simulated terminals with their settings (processing time) in one environment. */
  terminals(environment: Environment): TerminalSettings[] {
    return terminalSettings(this.#store, environment);
  }

  /** Gives a simulated terminal its own processing time or connectivity (`processingMs`, `online`; `null` each the default); 404 for another `poiId`. */
  setTerminal(environment: Environment, poiId: string, change: TerminalChange): TerminalSettings {
    return this.#store.transaction(() => setTerminal(this.#store, environment, poiId, change));
  }

  /** Delivers a recorded delivery's event again, to the same URL, as a new delivery; resolves after its first attempt. */
  async resendDelivery(environment: Environment, id: number): Promise<WebhookDelivery> {
    const original = this.delivery(environment, id);
    const resent = this.#store.transaction(() => this.#webhooks.resend(original));
    await this.#settle();
    return this.delivery(environment, resent);
  }

  /**
   * Emits a documented event for a record, as the service would have: `AUTHORISATION` for a
   * completed session or a POS payment with its result, `REFUND` for a resolved refund. Resolves
   * with the new deliveries (one per webhook URL) after their first attempts.
   */
  async emitEvent(environment: Environment, eventCode: string, reference: string): Promise<WebhookDelivery[]> {
    if (typeof reference !== 'string' || reference === '') throw invalid('reference is required');
    const ids = this.#store.transaction(() => this.#api.emitEvent(environment, eventCode, reference));
    await this.#settle();
    return ids.map((id) => this.delivery(environment, id));
  }

  clock(): ClockState {
    const epochMs = this.#clock.now();
    return { epochMs, iso: new Date(epochMs).toISOString(), offsetMs: this.#clock.offsetMs };
  }

  /**
   * Moves the sandbox clock ahead by `ms`. Scheduled work falls due in order, each at its own time,
   * as if the time had passed: page expiry, POS answers and late completions, modifications
   * resolving, and webhook attempts with their retries (each attempt is made, at the moment the
   * sandbox clock shows, before the clock moves on).
   */
  async advanceClock(ms: number): Promise<ClockState> {
    if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_ADVANCE_MS) throw invalid(`the advance must be 0 to ${MAX_ADVANCE_MS} ms (a year)`);
    // The offset, not the time, is what moves by exactly `ms`: real time passes meanwhile too.
    const targetOffset = this.#clock.offsetMs + ms;
    const target = this.#clock.now() + ms;
    for (let step = 0; step < MAX_ADVANCE_STEPS; step++) {
      await this.#scheduler.settled();
      const next = this.#scheduler.nextDueAt();
      if (next === undefined || next > target) break;
      this.#moveAhead(Math.min(next - this.#clock.now(), targetOffset - this.#clock.offsetMs));
      this.#scheduler.reschedule();
    }
    await this.#scheduler.settled();
    this.#moveAhead(targetOffset - this.#clock.offsetMs);
    this.#scheduler.reschedule();
    return this.clock();
  }

  #moveAhead(ms: number): void {
    if (ms <= 0) return;
    this.#clock.moveAhead(ms);
    this.#store.transaction(() => this.#store.setCounter('clockOffset', this.#clock.offsetMs));
  }

  /** Deletes every record, stored response, delivery and scheduled job, and sets the clock back; the webhook URLs and terminal settings stay. */
  async reset(): Promise<void> {
    await this.#scheduler.settled();
    // The entries of requests already answered are written first, so that the reset deletes them too.
    this.#requests.flush();
    this.#store.transaction(() => {
      this.#store.clear();
      this.#store.setCounter('clockOffset', 0);
    });
    this.#clock.resetOffset();
    this.#scheduler.reschedule();
  }

  get webhookUrls(): readonly string[] {
    return [...this.#webhooks.urls];
  }

  /** Adds a webhook URL (an absolute http(s) URL); adding one already there changes nothing. */
  addWebhookUrl(url: string): readonly string[] {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw invalid('url must be an absolute http(s) URL');
    if (!this.#webhooks.urls.includes(url)) this.#webhooks.urls.push(url);
    return this.webhookUrls;
  }

  removeWebhookUrl(url: string): readonly string[] {
    if (!this.#webhooks.urls.includes(url)) throw notFound('Webhook URL');
    this.#webhooks.urls = this.#webhooks.urls.filter((candidate) => candidate !== url);
    return this.webhookUrls;
  }

  /** Runs what an action scheduled for now, and waits for the webhook attempts it started. */
  async #settle(): Promise<void> {
    this.#scheduler.reschedule();
    await this.#scheduler.settled();
  }
}
