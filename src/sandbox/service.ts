import type { Environment } from '../core/options.js';
import { REFERENCE_INFIXES } from '../helpers/references.js';
import { SESSION_STATUSES } from '../schemas/sessions.js';
import { TEST_TERMINALS } from '../testing/index.js';
import type { SandboxClock } from './clock.js';
import type { ModificationRecord, PosRecord, SandboxState, SessionRecord, StoredAmount } from './records.js';
import { recordTimestamp } from './records.js';
import { invalid, ServiceFailure } from './responses.js';
import {
  amountOf,
  countryCode,
  cursorAfter,
  dateFilter,
  deliverAt,
  httpUrl,
  listingParams,
  optionalBoolean,
  optionalString,
  requiredString,
  shopperLocale,
} from './validation.js';
import type { WebhookDispatcher } from './webhooks.js';

/** Seconds a customer has to pay once the payment page is open. */
export const PAYMENT_PAGE_SECONDS = 300;

/** What the API handlers need from the sandbox around them. */
export interface ServiceContext {
  webcode: string;
  clock: SandboxClock;
  random: () => number;
  state: () => SandboxState;
  webhooks: WebhookDispatcher;
  /** Simulated POS delay in ms for one payment. */
  posDelay: () => number;
  /** When a Test POS `timeout` payment completes, in ms after its answer. */
  posTimeoutResolveMs: number;
  /** When refunds, captures, cancels and extends resolve, in ms after their acknowledgement. */
  modificationResolveMs: number;
  /** Persists the state (with `dataDir`). */
  changed: () => void;
}

/** A handler's answer: status and the `data` of the success envelope. */
export interface Answer {
  status: number;
  data: unknown;
}

/** The documented infixes, and the sandbox's own for extend operations (the reference shows none). */
const INFIX = { ...REFERENCE_INFIXES, extend: { test: 'EXXT', live: 'EXX' } } as const;

const POS_STATUSES = ['pending', 'success', 'failed', 'timeout'];
const TERMINAL_TIMESTAMPS = { createdAt: '2025-01-15T09:00:00.000Z', updatedAt: '2025-06-01T12:00:00.000Z' };

function notFound(what: string): ServiceFailure {
  return new ServiceFailure(404, undefined, `${what} not found`);
}

function page<T>(items: T[], query: URLSearchParams): { items: T[]; meta: { cursor: string | null; hasMore: boolean; total: number } } {
  const { take, order, offset } = listingParams(query);
  const ordered = order === 'desc' ? [...items].reverse() : items;
  const slice = ordered.slice(offset, offset + take);
  const hasMore = offset + take < ordered.length;
  return { items: slice, meta: { cursor: hasMore ? cursorAfter(offset + take) : null, hasMore, total: ordered.length } };
}

/** The fields every view of a session shares. */
function sessionView(session: SessionRecord) {
  return {
    sessionId: session.sessionId,
    status: session.status,
    amount: session.amount,
    description: session.description,
    customReference: session.customReference,
    isPreAuth: session.isPreAuth,
    createdAt: recordTimestamp(session.createdAt),
  };
}

/** The service's endpoints over the sandbox state. */
export class SandboxService {
  readonly #context: ServiceContext;
  /** Terminals with a payment in progress: a second one answers 409 / 13005. */
  readonly #busyTerminals = new Set<string>();

  constructor(context: ServiceContext) {
    this.#context = context;
  }

  /** Schedules again what was pending before a restart from a saved state: resolutions and late POS completions. */
  resume(): void {
    const now = this.#now();
    for (const record of this.#state.modifications) {
      if (record.status !== 'pending' && record.status !== 'received') continue;
      const owner = this.#state.sessions.find((session) => session.paymentReference === record.paymentReference)?.customReference;
      const customReference =
        owner ?? this.#state.posPayments.find((payment) => payment.posPaymentId === record.paymentReference)?.customReference ?? null;
      const delay = Math.max(0, record.requestedAt + this.#context.modificationResolveMs - now);
      this.#context.clock.setTimeout(() => this.#resolve(record, customReference), delay);
    }
    for (const record of this.#state.posPayments) {
      if (record.status !== 'timeout') continue;
      this.#context.clock.setTimeout(
        () => this.#completeTimeout(record),
        Math.max(0, record.createdAt + this.#context.posTimeoutResolveMs - now),
      );
    }
  }

  get #state(): SandboxState {
    return this.#context.state();
  }

  #now(): number {
    return this.#context.clock.now();
  }

  /** A `{webcode}-{infix}-{timestamp}` id; timestamps are made unique and increasing. */
  #timestampId(infix: string): string {
    const counters = this.#state.counters;
    counters.lastTimestamp = Math.max(counters.lastTimestamp + 1, this.#now());
    return `${this.#context.webcode}-${infix}-${counters.lastTimestamp}`;
  }

  #numberedId(infix: string): string {
    return `${this.#context.webcode}-${infix}-${++this.#state.counters.reference}`;
  }

  #token(): string {
    let token = '';
    for (let index = 0; index < 32; index++) token += Math.floor(this.#context.random() * 16).toString(16);
    return token;
  }

  /** Applies the 300 s page expiry, measured on the sandbox clock. */
  refresh(session: SessionRecord): SessionRecord {
    if (session.status === 'pending' && session.openedAt !== null && this.#now() - session.openedAt >= PAYMENT_PAGE_SECONDS * 1000) {
      session.status = 'expired';
      this.#context.changed();
    }
    return session;
  }

  findSession(environment: Environment, predicate: (session: SessionRecord) => boolean): SessionRecord | undefined {
    const session = this.#state.sessions.find((candidate) => candidate.environment === environment && predicate(candidate));
    return session && this.refresh(session);
  }

  // Sessions

  createSession(environment: Environment, body: Record<string, unknown>, origin: string): Answer {
    const amount = amountOf(body, true) as StoredAmount;
    const session: SessionRecord = {
      environment,
      sessionId: this.#timestampId(INFIX.session[environment]),
      token: this.#token(),
      status: 'pending',
      amount,
      urlOk: httpUrl(body, 'urlOk'),
      urlKo: httpUrl(body, 'urlKo'),
      countryCode: countryCode(body),
      shopperLocale: shopperLocale(body),
      deliverAt: deliverAt(body),
      description: optionalString(body, 'description', 255),
      customReference: optionalString(body, 'customReference', 100),
      isPreAuth: optionalBoolean(body, 'isPreAuth'),
      createdAt: this.#now(),
      openedAt: null,
      completedAt: null,
      paymentReference: null,
      paymentStatus: null,
      attempts: [],
    };
    this.#state.sessions.push(session);
    this.#context.changed();
    const paymentUrl = `${origin}/${environment === 'test' ? 'pay-external-test' : 'pay-external'}/${session.token}`;
    return { status: 201, data: { ...sessionView(session), paymentUrl } };
  }

  retrieveSession(environment: Environment, sessionId: string): Answer {
    const session = this.findSession(environment, (candidate) => candidate.sessionId === sessionId);
    if (!session) throw notFound('Session');
    const paid =
      session.paymentReference === null
        ? {}
        : {
            paymentReference: session.paymentReference,
            completedAt: recordTimestamp(session.completedAt ?? 0),
            paymentStatus: session.paymentStatus,
          };
    return {
      status: 200,
      data: {
        ...sessionView(session),
        countryCode: session.countryCode,
        shopperLocale: session.shopperLocale,
        urlOk: session.urlOk,
        urlKo: session.urlKo,
        ...paid,
        ...(session.attempts.length === 0
          ? {}
          : {
              attempts: session.attempts.map((attempt) => ({
                paymentReference: attempt.paymentReference,
                status: attempt.status,
                createdAt: recordTimestamp(attempt.createdAt),
              })),
            }),
      },
    };
  }

  listSessions(environment: Environment, query: URLSearchParams): Answer {
    const status = query.get('status');
    if (status !== null && !(SESSION_STATUSES as readonly string[]).includes(status))
      throw invalid(`status must be one of ${SESSION_STATUSES.join(', ')}`);
    const sessions = this.#state.sessions
      .filter((session) => session.environment === environment)
      .map((session) => this.refresh(session))
      .filter((session) => status === null || session.status === status);
    const { items, meta } = page(sessions, query);
    return {
      status: 200,
      data: {
        payments: items.map((session) => ({
          ...sessionView(session),
          completedAt: session.completedAt === null ? null : recordTimestamp(session.completedAt),
          paymentReference: session.paymentReference,
          paymentStatus: session.paymentStatus,
        })),
        meta,
      },
    };
  }

  /** The customer paid on the hosted page: the session completes and the AUTHORISATION webhook goes out. */
  authorise(session: SessionRecord): string {
    const paymentReference = this.#numberedId(INFIX.payment[session.environment]);
    const now = this.#now();
    session.status = 'completed';
    session.completedAt = now;
    session.paymentReference = paymentReference;
    session.paymentStatus = 'AUTHORISED';
    session.attempts.push({ paymentReference, status: 'authorised', reason: null, createdAt: now });
    this.#context.webhooks.emit(session.environment, {
      event_code: 'AUTHORISATION',
      data: {
        amount: session.amount.value,
        currency: session.amount.currency,
        paymentReference,
        paymentStatus: 'AUTHORISED',
        description: session.description,
        customReference: session.customReference,
        paymentSource: 'external_api',
      },
    });
    this.#context.changed();
    return paymentReference;
  }

  /** A declined or failed attempt: the session fails (a new attempt needs a new session). */
  decline(session: SessionRecord, status: 'refused' | 'error', reason: string): void {
    session.attempts.push({ paymentReference: null, status, reason, createdAt: this.#now() });
    session.status = 'failed';
    this.#context.changed();
  }

  cancel(session: SessionRecord): void {
    session.status = 'cancelled';
    this.#context.changed();
  }

  opened(session: SessionRecord): void {
    if (session.openedAt === null) {
      session.openedAt = this.#now();
      this.#context.changed();
    }
  }

  // Modifications

  #payment(environment: Environment, reference: string) {
    const session = this.findSession(environment, (candidate) => candidate.paymentReference === reference);
    if (session)
      return {
        amount: session.amount,
        isPreAuth: session.isPreAuth,
        sessionId: session.sessionId,
        customReference: session.customReference,
      };
    const pos = this.#state.posPayments.find((payment) => payment.environment === environment && payment.posPaymentId === reference);
    if (!pos) throw notFound('Payment');
    if (pos.status !== 'success') throw invalid(`Payment ${reference} is not authorised (status ${pos.status})`);
    return { amount: pos.amount, isPreAuth: pos.isPreAuth, sessionId: pos.posPaymentId, customReference: pos.customReference };
  }

  #modificationsOf(environment: Environment, paymentReference: string): ModificationRecord[] {
    return this.#state.modifications.filter(
      (modification) =>
        modification.environment === environment && modification.paymentReference === paymentReference && modification.status !== 'failed',
    );
  }

  #sum(records: ModificationRecord[], type: ModificationRecord['operationType']): number {
    return records.filter((record) => record.operationType === type).reduce((total, record) => total + (record.amount?.value ?? 0), 0);
  }

  modify(environment: Environment, type: ModificationRecord['operationType'], body: Record<string, unknown>): Answer {
    const paymentReference = requiredString(body, 'paymentReference');
    const payment = this.#payment(environment, paymentReference);
    const history = this.#modificationsOf(environment, paymentReference);
    const captured = this.#sum(history, 'capture');
    const cancelled = history.some((record) => record.operationType === 'cancel');
    let amount: StoredAmount | null = null;

    if (type === 'refund' || type === 'capture') {
      const given = amountOf(body, false);
      if (given && given.currency !== payment.amount.currency)
        throw invalid(`amount.currency must be ${payment.amount.currency}, the payment's currency`);
      const base = type === 'capture' ? payment.amount.value : payment.isPreAuth ? captured : payment.amount.value;
      const used = this.#sum(history, type);
      const available = base - used;
      if (type === 'capture' && (!payment.isPreAuth || cancelled)) throw invalid('Only an open pre-authorisation can be captured');
      if (type === 'refund' && payment.isPreAuth && captured === 0)
        throw invalid('A pre-authorisation must be captured before it is refunded');
      const value = given?.value ?? available;
      if (value <= 0 || value > available)
        throw invalid(`amount.value must be at most ${available}, the ${type === 'refund' ? 'refundable' : 'capturable'} amount`);
      amount = { value, currency: payment.amount.currency };
    } else if (!payment.isPreAuth || cancelled || captured > 0) {
      throw invalid(`Only an open pre-authorisation can be ${type === 'cancel' ? 'cancelled' : 'extended'}`);
    }
    const reason = type === 'refund' ? optionalString(body, 'reason') : null;
    const now = this.#now();
    const record: ModificationRecord = {
      environment,
      operationReference: this.#numberedId(INFIX[type][environment]),
      operationType: type,
      paymentReference,
      sessionId: payment.sessionId,
      status: type === 'refund' ? 'pending' : 'received',
      requestedAt: now,
      createdAt: now,
      resolvedAt: null,
      amount,
      reason,
    };
    this.#state.modifications.push(record);
    this.#context.changed();
    this.#context.clock.setTimeout(() => this.#resolve(record, payment.customReference), this.#context.modificationResolveMs);

    const createdAt = recordTimestamp(now);
    const referenceField = `${type}Reference`;
    const data =
      type === 'cancel' || type === 'extend'
        ? { [referenceField]: record.operationReference, paymentReference, status: record.status, createdAt }
        : { [referenceField]: record.operationReference, paymentReference, amount, status: record.status, createdAt };
    return { status: type === 'extend' ? 200 : 202, data };
  }

  #resolve(record: ModificationRecord, customReference: string | null): void {
    record.status = 'success';
    record.resolvedAt = this.#now();
    if (record.operationType === 'refund') {
      this.#context.webhooks.emit(record.environment, {
        event_code: 'REFUND',
        data: {
          amount: record.amount?.value,
          currency: record.amount?.currency,
          paymentReference: record.paymentReference,
          refundReason: record.reason,
          refundReference: record.operationReference,
          status: 'success',
          customReference,
          paymentSource: 'external_api',
        },
      });
    }
    this.#context.changed();
  }

  #modificationView(record: ModificationRecord) {
    return {
      operationReference: record.operationReference,
      operationType: record.operationType,
      paymentReference: record.paymentReference,
      sessionId: record.sessionId,
      status: record.status,
      requestedAt: recordTimestamp(record.requestedAt),
      createdAt: recordTimestamp(record.createdAt),
      resolvedAt: record.resolvedAt === null ? null : recordTimestamp(record.resolvedAt),
      amount: record.amount,
      reason: record.reason,
    };
  }

  /** Modifications of one session or POS payment: `{ modifications, meta }`, all on one page. */
  modificationsOf(environment: Environment, kind: 'session' | 'pos', id: string): Answer {
    const owner =
      kind === 'session'
        ? this.findSession(environment, (session) => session.sessionId === id)
        : this.#state.posPayments.find((payment) => payment.environment === environment && payment.posPaymentId === id);
    if (!owner) throw notFound(kind === 'session' ? 'Session' : 'POS payment');
    const records = this.#state.modifications.filter((record) => record.environment === environment && record.sessionId === id);
    return {
      status: 200,
      data: {
        modifications: records.map((record) => this.#modificationView(record)),
        meta: { cursor: null, hasMore: false, total: records.length },
      },
    };
  }

  listModifications(environment: Environment, query: URLSearchParams): Answer {
    const type = query.get('type');
    const status = query.get('status');
    const records = this.#state.modifications.filter(
      (record) =>
        record.environment === environment &&
        (type === null || record.operationType === type) &&
        (status === null || record.status === status),
    );
    const { items, meta } = page(records, query);
    return { status: 200, data: { modifications: items.map((record) => this.#modificationView(record)), meta } };
  }

  // POS

  listTerminals(query: URLSearchParams): Answer {
    const sync = query.get('syncFromProvider');
    if (sync !== null && sync !== 'true' && sync !== 'false') throw invalid('syncFromProvider must be true or false');
    const terminals = TEST_TERMINALS.filter((terminal) => sync !== 'true' || terminal.online);
    return {
      status: 200,
      data: terminals.map((terminal) => ({
        poiId: terminal.poiId,
        status: 'boarded',
        name: terminal.name,
        model: terminal.model,
        ...TERMINAL_TIMESTAMPS,
      })),
    };
  }

  async createPosPayment(environment: Environment, body: Record<string, unknown>): Promise<Answer> {
    const poiId = requiredString(body, 'poiId');
    const amount = amountOf(body, true) as StoredAmount;
    const description = optionalString(body, 'description', 255);
    const customReference = optionalString(body, 'customReference', 100);
    const isPreAuth = optionalBoolean(body, 'isPreAuth');
    const terminal = TEST_TERMINALS.find((candidate) => candidate.poiId === poiId);
    if (!terminal) throw invalid(`Invalid terminal: device ${poiId} not found`);
    if (!terminal.online) throw new ServiceFailure(502, 13004, 'Error in POS payment response: Reject');
    if (this.#busyTerminals.has(poiId)) throw new ServiceFailure(409, 13005, 'Terminal busy: another payment is in progress');
    const ending = amount.value % 100;
    this.#busyTerminals.add(poiId);
    try {
      const record: PosRecord = {
        environment,
        posPaymentId: this.#timestampId(INFIX.posPayment[environment]),
        poiId,
        amount,
        status: 'pending',
        isPreAuth,
        pspReference: null,
        errorMessage: null,
        description,
        customReference,
        createdAt: this.#now(),
      };
      // Visible as `pending` in the listing while the terminal works.
      this.#state.posPayments.push(record);
      await this.#sleep(this.#context.posDelay());
      if (ending === 55) {
        this.#state.posPayments.splice(this.#state.posPayments.indexOf(record), 1);
        throw new ServiceFailure(409, 13005, 'Terminal busy (test simulation)');
      }
      if (ending === 77) {
        record.status = 'failed';
        record.errorMessage = 'Card declined (test simulation)';
        this.#posWebhook(record);
      } else if (ending === 99) {
        record.status = 'timeout';
        record.errorMessage =
          'Terminal did not respond in time; the payment may still be processed asynchronously via webhook (test simulation)';
        this.#context.clock.setTimeout(() => this.#completeTimeout(record), this.#context.posTimeoutResolveMs);
      } else {
        this.#succeed(record);
      }
      this.#context.changed();
      return { status: 200, data: this.#posView(record) };
    } finally {
      this.#busyTerminals.delete(poiId);
    }
  }

  #succeed(record: PosRecord): void {
    record.status = 'success';
    record.errorMessage = null;
    let digits = '';
    for (let index = 0; index < 16; index++) digits += Math.floor(this.#context.random() * 10);
    record.pspReference = `TEST${digits}`;
    this.#posWebhook(record);
  }

  /** A `timeout` payment that the terminal completed later: it succeeds and its webhook goes out. */
  #completeTimeout(record: PosRecord): void {
    if (record.status !== 'timeout') return;
    this.#succeed(record);
    this.#context.changed();
  }

  #posWebhook(record: PosRecord): void {
    this.#context.webhooks.emit(record.environment, {
      event_code: 'AUTHORISATION',
      data: {
        amount: record.amount.value,
        currency: record.amount.currency,
        paymentReference: record.posPaymentId,
        paymentStatus: record.status === 'success' ? 'AUTHORISED' : 'REFUSED',
        description: record.description,
        customReference: record.customReference,
        paymentSource: 'external_api',
      },
    });
  }

  #posView(record: PosRecord) {
    return {
      posPaymentId: record.posPaymentId,
      paymentReference: record.posPaymentId,
      poiId: record.poiId,
      amount: record.amount,
      status: record.status,
      isPreAuth: record.isPreAuth,
      ...(record.pspReference === null ? {} : { pspReference: record.pspReference }),
      ...(record.errorMessage === null ? {} : { errorMessage: record.errorMessage }),
      description: record.description,
      ...(record.customReference === null ? {} : { customReference: record.customReference }),
      createdAt: recordTimestamp(record.createdAt),
    };
  }

  listPosPayments(environment: Environment, query: URLSearchParams): Answer {
    const status = query.get('status');
    if (status !== null && !POS_STATUSES.includes(status)) throw invalid(`status must be one of ${POS_STATUSES.join(', ')}`);
    const start = dateFilter(query, 'created_at_start');
    const end = dateFilter(query, 'created_at_end');
    const records = this.#state.posPayments.filter(
      (record) =>
        record.environment === environment &&
        (status === null || record.status === status) &&
        (start === null || record.createdAt >= start) &&
        // Record timestamps have whole seconds: an end of 10:00:00 includes 10:00:00.999.
        (end === null || Math.floor(record.createdAt / 1000) * 1000 <= end),
    );
    const { items, meta } = page(records, query);
    return { status: 200, data: { posPayments: items.map((record) => this.#posView(record)), meta } };
  }

  #sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => this.#context.clock.setTimeout(resolve, ms));
  }
}
