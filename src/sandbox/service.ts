import type { Environment } from '../core/options.js';
import { REFERENCE_INFIXES } from '../schemas/references.js';
import { SESSION_STATUSES } from '../schemas/sessions.js';
import { POS_TEST_ENDINGS, TEST_CARDHOLDER_NAMES, TEST_TERMINALS } from '../testing/index.js';
import type { SandboxClock } from './clock.js';
import type { ControlPayment, ModificationRecord, PosRecord, SessionRecord, StoredAmount, WebhookDelivery } from './records.js';
import { recordTimestamp } from './records.js';
import { invalid, SANDBOX_CODES, ServiceFailure, successBody } from './responses.js';
import type { JobHandler, Scheduler } from './scheduler.js';
import type { KeysetPage, SandboxStore } from './store.js';
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
  store: SandboxStore;
  webhooks: WebhookDispatcher;
  /** Simulated POS delay in ms for one payment. */
  posDelay: () => number;
  /** When a Test POS `timeout` payment completes, in ms after its answer. */
  posTimeoutResolveMs: number;
  /** When refunds, captures, cancels and extends resolve, in ms after their acknowledgement. */
  modificationResolveMs: number;
}

/** A handler's answer: status and the `data` of the success envelope. */
export interface Answer {
  status: number;
  data: unknown;
}

/** The answer of a request that waits on scheduled work (a POS payment at its terminal). */
export interface Deferred {
  deferred: Promise<Answer>;
}

/** The jobs of the service; each subject is the id of the record it acts on. */
const JOB = {
  expireSession: 'session.expire',
  posAnswer: 'pos.answer',
  posLateCompletion: 'pos.late-completion',
  resolveModification: 'modification.resolve',
} as const;

/** The documented infixes, and the sandbox's own for extend operations (the reference shows none). */
const INFIX = { ...REFERENCE_INFIXES, extend: { test: 'EXXT', live: 'EXX' } } as const;

const POS_STATUSES = ['pending', 'success', 'failed', 'timeout'];
const TERMINAL_TIMESTAMPS = { createdAt: '2025-01-15T09:00:00.000Z', updatedAt: '2025-06-01T12:00:00.000Z' };

/** A control action the record's state does not allow. */
function notAllowed(message: string): ServiceFailure {
  return new ServiceFailure(409, SANDBOX_CODES.actionNotAllowed, message);
}

function notFound(what: string): ServiceFailure {
  return new ServiceFailure(404, SANDBOX_CODES.notFound, `${what} not found`);
}

function meta<R>(page: KeysetPage<R>, order: 'asc' | 'desc') {
  return { cursor: page.next === null ? null : cursorAfter(order, page.next), hasMore: page.next !== null, total: page.total };
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

function modificationView(record: ModificationRecord) {
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

function posView(record: PosRecord) {
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

/** The subject of a `pos.answer` job: the payment, and the `Idempotency-Key` whose response it completes. */
interface PosAnswerSubject {
  posPaymentId: string;
  idempotencyKey: string | null;
}

/**
 * The service's endpoints over the store. Each method runs inside the transaction of the request
 * (or job) that calls it, so everything it writes, webhooks and scheduled work included, commits
 * together.
 */
export class SandboxService {
  readonly #context: ServiceContext;
  #scheduler: Scheduler | undefined;
  /** Requests waiting for their POS payment's terminal answer, by `posPaymentId`. */
  readonly #posWaiters = new Map<string, { resolve: (answer: Answer) => void; reject: (failure: ServiceFailure) => void }>();
  /** Requests waiting for a running request with their `Idempotency-Key` to finish, by environment and key. */
  readonly #keyWaiters = new Map<string, (() => void)[]>();

  constructor(context: ServiceContext) {
    this.#context = context;
  }

  /** The scheduler runs the service's jobs; it is created after the service, whose handlers it needs. */
  attach(scheduler: Scheduler): void {
    this.#scheduler = scheduler;
  }

  /** The job handlers of the service. */
  get jobs(): Record<string, JobHandler> {
    return {
      [JOB.expireSession]: { run: (sessionId) => this.#expire(sessionId) },
      [JOB.posAnswer]: { run: (subject) => this.#posAnswer(JSON.parse(subject) as PosAnswerSubject) },
      [JOB.posLateCompletion]: { run: (posPaymentId) => this.#completeLate(posPaymentId) },
      [JOB.resolveModification]: { run: (reference) => this.#resolve(reference) },
    };
  }

  get #store(): SandboxStore {
    return this.#context.store;
  }

  #now(): number {
    return this.#context.clock.now();
  }

  #schedule(kind: string, delayMs: number, subject: string): void {
    this.#scheduler?.add(kind, delayMs, subject);
  }

  /** A `{webcode}-{infix}-{timestamp}` id; timestamps are made unique and increasing. */
  #timestampId(infix: string): string {
    return `${this.#context.webcode}-${infix}-${this.#store.nextTimestamp(this.#now())}`;
  }

  #numberedId(infix: string): string {
    return `${this.#context.webcode}-${infix}-${this.#store.nextReference()}`;
  }

  #token(): string {
    let token = '';
    for (let index = 0; index < 32; index++) token += Math.floor(this.#context.random() * 16).toString(16);
    return token;
  }

  /** Resolves when the request running with this key has stored its response or given up. */
  keySettled(environment: Environment, key: string): Promise<void> {
    const slot = `${environment} ${key}`;
    return new Promise((resolve) => {
      const waiting = this.#keyWaiters.get(slot) ?? [];
      waiting.push(resolve);
      this.#keyWaiters.set(slot, waiting);
    });
  }

  #settleKey(environment: Environment, key: string): void {
    const slot = `${environment} ${key}`;
    for (const resolve of this.#keyWaiters.get(slot) ?? []) resolve();
    this.#keyWaiters.delete(slot);
  }

  // Sessions

  session(environment: Environment, sessionId: string): SessionRecord | undefined {
    const session = this.#store.sessions.get(sessionId);
    return session?.environment === environment ? session : undefined;
  }

  sessionByToken(environment: Environment, token: string): SessionRecord | undefined {
    return this.#store.sessions.findBy({ token, environment });
  }

  createSession(environment: Environment, body: Record<string, unknown>, origin: string): Answer {
    const amount = amountOf(body, true) as StoredAmount;
    const session: SessionRecord = {
      environment,
      sessionId: '',
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
      endedAt: null,
      controlPayment: null,
      paymentReference: null,
      paymentStatus: null,
      attempts: [],
    };
    session.sessionId = this.#timestampId(INFIX.session[environment]);
    this.#store.sessions.save(session);
    const paymentUrl = `${origin}/${environment === 'test' ? 'pay-external-test' : 'pay-external'}/${session.token}`;
    return { status: 201, data: { ...sessionView(session), paymentUrl } };
  }

  retrieveSession(environment: Environment, sessionId: string): Answer {
    const session = this.session(environment, sessionId);
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
    const params = listingParams(query);
    const page = this.#store.sessions.page({ environment, status: status ?? undefined }, params);
    return {
      status: 200,
      data: {
        payments: page.items.map((session) => ({
          ...sessionView(session),
          completedAt: session.completedAt === null ? null : recordTimestamp(session.completedAt),
          paymentReference: session.paymentReference,
          paymentStatus: session.paymentStatus,
        })),
        meta: meta(page, params.order),
      },
    };
  }

  /** The customer opened the page: the 300 s countdown starts, and the session's expiry is scheduled. */
  opened(session: SessionRecord): void {
    if (session.openedAt !== null) return;
    session.openedAt = this.#now();
    this.#store.sessions.save(session);
    this.#schedule(JOB.expireSession, PAYMENT_PAGE_SECONDS * 1000, session.sessionId);
  }

  /**
   * The page's time ran out. It ended at its deadline, not when the job ran: a job runs late when
   * the sandbox was stopped across the deadline or its timer fired late, and the page refused
   * payment from the deadline on.
   */
  #expire(sessionId: string): void {
    const session = this.#store.sessions.get(sessionId);
    if (session?.status !== 'pending') return;
    this.#end(session, 'expired', session.openedAt === null ? this.#now() : session.openedAt + PAYMENT_PAGE_SECONDS * 1000);
  }

  #end(session: SessionRecord, status: Exclude<SessionRecord['status'], 'pending'>, at = this.#now()): void {
    session.status = status;
    session.endedAt = at;
    this.#store.sessions.save(session);
  }

  /** The customer paid on the hosted page: the session completes and the AUTHORISATION webhook goes out. */
  authorise(session: SessionRecord): string {
    const paymentReference = this.#numberedId(INFIX.payment[session.environment]);
    const now = this.#now();
    session.completedAt = now;
    session.paymentReference = paymentReference;
    session.paymentStatus = 'AUTHORISED';
    session.attempts.push({ paymentReference, status: 'authorised', reason: null, createdAt: now });
    this.#end(session, 'completed', now);
    this.#context.webhooks.emit(session.environment, sessionAuthorisation(session));
    return paymentReference;
  }

  /**
   * Pays a pending session as a customer with `holderName` would on the hosted page: a scripted
   * failure for the names of the Test table, an authorisation for any other name. No page is
   * opened: the record says the sandbox's controls paid it.
   */
  payAs(environment: Environment, sessionId: string, payment: ControlPayment): SessionRecord {
    const session = this.session(environment, sessionId);
    if (!session) throw notFound('Session');
    if (session.status !== 'pending') throw notAllowed(`Session ${sessionId} is ${session.status}: only a pending session can be paid`);
    const holderName = payment.holderName.trim();
    session.controlPayment = { from: payment.from, holderName };
    const scripted = TEST_CARDHOLDER_NAMES[holderName.toUpperCase() as keyof typeof TEST_CARDHOLDER_NAMES];
    if (scripted) this.decline(session, scripted.result === 'error' ? 'error' : 'refused', scripted.description);
    else this.authorise(session);
    return session;
  }

  /** Expires a pending session now, as if its 300 s had passed. */
  expireNow(environment: Environment, sessionId: string): SessionRecord {
    const session = this.session(environment, sessionId);
    if (!session) throw notFound('Session');
    if (session.status !== 'pending') throw notAllowed(`Session ${sessionId} is ${session.status}: only a pending session can expire`);
    this.#end(session, 'expired');
    return session;
  }

  /**
   * A declined or failed attempt: it has a payment reference of its own, and the session fails (a
   * new attempt needs a new session).
   */
  decline(session: SessionRecord, status: 'refused' | 'error', reason: string): void {
    const paymentReference = this.#numberedId(INFIX.payment[session.environment]);
    const now = this.#now();
    session.attempts.push({ paymentReference, status, reason, createdAt: now });
    this.#end(session, 'failed', now);
  }

  cancel(session: SessionRecord): void {
    this.#end(session, 'cancelled');
  }

  // Modifications

  #payment(environment: Environment, reference: string) {
    const session = this.#store.sessions.findBy({ payment_reference: reference, environment });
    if (session)
      return {
        amount: session.amount,
        isPreAuth: session.isPreAuth,
        sessionId: session.sessionId,
        customReference: session.customReference,
      };
    const pos = this.#store.posPayments.get(reference);
    if (pos?.environment !== environment) throw notFound('Payment');
    if (pos.status !== 'success') throw invalid(`Payment ${reference} is not authorised (status ${pos.status})`);
    return { amount: pos.amount, isPreAuth: pos.isPreAuth, sessionId: pos.posPaymentId, customReference: pos.customReference };
  }

  #sum(records: ModificationRecord[], type: ModificationRecord['operationType']): number {
    return records.filter((record) => record.operationType === type).reduce((total, record) => total + (record.amount?.value ?? 0), 0);
  }

  modify(environment: Environment, type: ModificationRecord['operationType'], body: Record<string, unknown>): Answer {
    const paymentReference = requiredString(body, 'paymentReference');
    const payment = this.#payment(environment, paymentReference);
    const history = this.#store.modifications
      .all({ environment, payment_reference: paymentReference })
      .filter((record) => record.status !== 'failed');
    const captured = this.#sum(history, 'capture');
    const cancelled = history.some((record) => record.operationType === 'cancel');
    let amount: StoredAmount | null = null;

    if (type === 'refund' || type === 'capture') {
      const given = amountOf(body, false);
      if (given && given.currency !== payment.amount.currency)
        throw invalid(`amount.currency must be ${payment.amount.currency}, the payment's currency`);
      const base = type === 'capture' ? payment.amount.value : payment.isPreAuth ? captured : payment.amount.value;
      const available = base - this.#sum(history, type);
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
    this.#store.modifications.save(record);
    this.#schedule(JOB.resolveModification, this.#context.modificationResolveMs, record.operationReference);

    const createdAt = recordTimestamp(now);
    const referenceField = `${type}Reference`;
    const data =
      type === 'cancel' || type === 'extend'
        ? { [referenceField]: record.operationReference, paymentReference, status: record.status, createdAt }
        : { [referenceField]: record.operationReference, paymentReference, amount, status: record.status, createdAt };
    return { status: type === 'extend' ? 200 : 202, data };
  }

  #resolve(operationReference: string): void {
    const record = this.#store.modifications.get(operationReference);
    if (!record || (record.status !== 'pending' && record.status !== 'received')) return;
    record.status = 'success';
    record.resolvedAt = this.#now();
    this.#store.modifications.save(record);
    if (record.operationType !== 'refund') return;
    this.#context.webhooks.emit(record.environment, this.#refundEvent(record));
  }

  #refundEvent(record: ModificationRecord): WebhookEvent {
    const owner =
      this.#store.sessions.findBy({ payment_reference: record.paymentReference }) ?? this.#store.posPayments.get(record.paymentReference);
    return {
      event_code: 'REFUND',
      data: {
        amount: record.amount?.value,
        currency: record.amount?.currency,
        paymentReference: record.paymentReference,
        refundReason: record.reason,
        refundReference: record.operationReference,
        status: 'success',
        customReference: owner?.customReference ?? null,
        paymentSource: 'external_api',
      },
    };
  }

  /**
   * Sends a documented event again for a record, as the service would have: AUTHORISATION for a
   * completed session (by `sessionId` or `paymentReference`) or a POS payment that has its result,
   * REFUND for a resolved refund (by `refundReference`). Returns the ids of the new deliveries.
   */
  emitEvent(environment: Environment, eventCode: string, reference: string): number[] {
    let event: WebhookEvent;
    if (eventCode === 'AUTHORISATION') {
      const session = this.session(environment, reference) ?? this.#store.sessions.findBy({ payment_reference: reference, environment });
      const pos = session ? undefined : this.#store.posPayments.get(reference);
      if (session) {
        if (session.status !== 'completed') throw notAllowed(`Session ${session.sessionId} is ${session.status}: it has no authorisation`);
        event = sessionAuthorisation(session);
      } else if (pos?.environment === environment) {
        if (pos.status !== 'success' && pos.status !== 'failed')
          throw notAllowed(`POS payment ${reference} is ${pos.status}: it has no result yet`);
        event = posAuthorisation(pos);
      } else throw notFound('Payment');
    } else if (eventCode === 'REFUND') {
      const record = this.#store.modifications.get(reference);
      if (record?.environment !== environment || record.operationType !== 'refund') throw notFound('Refund');
      if (record.status !== 'success') throw notAllowed(`Refund ${reference} is ${record.status}: it is not resolved yet`);
      event = this.#refundEvent(record);
    } else {
      throw invalid(`event must be AUTHORISATION or REFUND, the documented event codes`);
    }
    return this.#context.webhooks.emit(environment, event);
  }

  /** Modifications of one session or POS payment: `{ modifications, meta }`, all on one page. */
  modificationsOf(environment: Environment, kind: 'session' | 'pos', id: string): Answer {
    const owner = kind === 'session' ? this.session(environment, id) : this.#store.posPayments.get(id);
    if (owner?.environment !== environment) throw notFound(kind === 'session' ? 'Session' : 'POS payment');
    const records = this.#store.modifications.all({ environment, session_id: id });
    return {
      status: 200,
      data: { modifications: records.map(modificationView), meta: { cursor: null, hasMore: false, total: records.length } },
    };
  }

  listModifications(environment: Environment, query: URLSearchParams): Answer {
    const params = listingParams(query);
    const page = this.#store.modifications.page(
      { environment, operation_type: query.get('type') ?? undefined, status: query.get('status') ?? undefined },
      params,
    );
    return { status: 200, data: { modifications: page.items.map(modificationView), meta: meta(page, params.order) } };
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

  /**
   * Sends a payment to a terminal: the record (listed as `pending`) and the terminal's answer, a
   * job due after the simulated delay, are committed with the request; the request then waits for
   * that job. After a crash the job runs on restart and completes the stored idempotent response.
   */
  createPosPayment(environment: Environment, body: Record<string, unknown>, idempotencyKey: string | null): Deferred {
    const poiId = requiredString(body, 'poiId');
    const amount = amountOf(body, true) as StoredAmount;
    const description = optionalString(body, 'description', 255);
    const customReference = optionalString(body, 'customReference', 100);
    const isPreAuth = optionalBoolean(body, 'isPreAuth');
    const terminal = TEST_TERMINALS.find((candidate) => candidate.poiId === poiId);
    if (!terminal) throw invalid(`Invalid terminal: device ${poiId} not found`);
    if (!terminal.online) throw new ServiceFailure(502, 13004, 'Error in POS payment response: Reject');
    // A terminal that is still processing a payment cannot take another, as a real busy terminal.
    if (this.#store.posPayments.findBy({ poi_id: poiId, status: 'pending' }))
      throw new ServiceFailure(409, 13005, 'Terminal busy: another payment is in progress');
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
    this.#store.posPayments.save(record);
    const subject: PosAnswerSubject = { posPaymentId: record.posPaymentId, idempotencyKey };
    this.#schedule(JOB.posAnswer, this.#context.posDelay(), JSON.stringify(subject));
    return {
      deferred: new Promise((resolve, reject) => this.#posWaiters.set(record.posPaymentId, { resolve, reject })),
    };
  }

  /** The terminal answers: the outcome follows the documented amount endings. */
  #posAnswer({ posPaymentId, idempotencyKey }: PosAnswerSubject, forced?: 'success' | 'failed'): void {
    const record = this.#store.posPayments.get(posPaymentId);
    if (record?.status !== 'pending') return;
    const ending = forced === 'failed' ? POS_TEST_ENDINGS.failed : forced === 'success' ? 0 : record.amount.value % 100;
    let outcome: Answer | ServiceFailure;
    if (ending === POS_TEST_ENDINGS.busy) {
      this.#store.posPayments.delete(posPaymentId);
      outcome = new ServiceFailure(409, 13005, 'Terminal busy (test simulation)');
    } else {
      if (ending === POS_TEST_ENDINGS.failed) {
        this.#fail(record);
      } else if (ending === POS_TEST_ENDINGS.timeout) {
        record.status = 'timeout';
        record.errorMessage =
          'Terminal did not respond in time; the payment may still be processed asynchronously via webhook (test simulation)';
        this.#schedule(JOB.posLateCompletion, this.#context.posTimeoutResolveMs, posPaymentId);
      } else {
        this.#succeed(record);
      }
      this.#store.posPayments.save(record);
      outcome = { status: 200, data: posView(record) };
    }
    if (idempotencyKey !== null) {
      // Only successes are stored: a failed request ran nothing, and may be sent again as it was.
      if (outcome instanceof ServiceFailure) this.#store.deleteIdempotency(record.environment, idempotencyKey);
      else this.#store.completeIdempotency(record.environment, idempotencyKey, outcome.status, successBody(outcome.data));
      this.#settleKey(record.environment, idempotencyKey);
    }
    const waiter = this.#posWaiters.get(posPaymentId);
    this.#posWaiters.delete(posPaymentId);
    if (outcome instanceof ServiceFailure) waiter?.reject(outcome);
    else waiter?.resolve(outcome);
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
  #completeLate(posPaymentId: string): void {
    const record = this.#store.posPayments.get(posPaymentId);
    if (record?.status !== 'timeout') return;
    this.#succeed(record);
    this.#store.posPayments.save(record);
  }

  #posWebhook(record: PosRecord): void {
    this.#context.webhooks.emit(record.environment, posAuthorisation(record));
  }

  /**
   * Resolves a POS payment now: a `pending` one as its terminal would answer (the request waiting
   * on it gets that answer), a `timeout` one as the late completion would, with `outcome` instead of
   * what the amount ending says.
   */
  resolvePosNow(environment: Environment, posPaymentId: string, outcome: 'success' | 'failed'): PosRecord {
    const record = this.#store.posPayments.get(posPaymentId);
    if (record?.environment !== environment) throw notFound('POS payment');
    if (record.status === 'pending') {
      this.#posAnswer(this.#pendingSubject(record), outcome);
    } else if (record.status === 'timeout') {
      if (outcome === 'success') this.#succeed(record);
      else this.#fail(record);
      this.#store.posPayments.save(record);
    } else {
      throw notAllowed(`POS payment ${posPaymentId} is ${record.status}: only a pending or timeout payment can be resolved`);
    }
    return this.#store.posPayments.get(posPaymentId) ?? record;
  }

  /** The subject of the pending payment's terminal-answer job, which holds the `Idempotency-Key` to complete. */
  #pendingSubject(record: PosRecord): PosAnswerSubject {
    for (const job of this.#store.jobsOf(JOB.posAnswer)) {
      const subject = JSON.parse(job.subject) as PosAnswerSubject;
      if (subject.posPaymentId === record.posPaymentId) return subject;
    }
    return { posPaymentId: record.posPaymentId, idempotencyKey: null };
  }

  #fail(record: PosRecord): void {
    record.status = 'failed';
    record.errorMessage = 'Card declined (test simulation)';
    this.#posWebhook(record);
  }

  listPosPayments(environment: Environment, query: URLSearchParams): Answer {
    const status = query.get('status');
    if (status !== null && !POS_STATUSES.includes(status)) throw invalid(`status must be one of ${POS_STATUSES.join(', ')}`);
    const start = dateFilter(query, 'created_at_start');
    const end = dateFilter(query, 'created_at_end');
    const params = listingParams(query);
    // Record timestamps have whole seconds: an end of 10:00:00 includes 10:00:00.999.
    const page = this.#store.posPayments.page({ environment, status: status ?? undefined }, params, {
      from: start,
      to: end === null ? null : Math.floor(end / 1000) * 1000 + 999,
    });
    return { status: 200, data: { posPayments: page.items.map(posView), meta: meta(page, params.order) } };
  }
}

type WebhookEvent = WebhookDelivery['event'];

/** The AUTHORISATION event of a completed session. */
function sessionAuthorisation(session: SessionRecord): WebhookEvent {
  return {
    event_code: 'AUTHORISATION',
    data: {
      amount: session.amount.value,
      currency: session.amount.currency,
      paymentReference: session.paymentReference,
      paymentStatus: 'AUTHORISED',
      description: session.description,
      customReference: session.customReference,
      paymentSource: 'external_api',
    },
  };
}

/** The AUTHORISATION event of a POS payment with its result (`REFUSED` for a failed one). */
function posAuthorisation(record: PosRecord): WebhookEvent {
  return {
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
  };
}
