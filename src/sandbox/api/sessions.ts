/** The payment sessions: created, read and listed through the API; opened, paid, declined, cancelled and expired by the page and the controls. */
import type { Environment } from '../../core/options.js';
import { SESSION_STATUSES } from '../../schemas/sessions.js';
import { TEST_CARDHOLDER_NAMES } from '../../testing/index.js';
import type { ControlPayment, SessionRecord, StoredAmount } from '../records.js';
import { recordTimestamp } from '../records.js';
import { invalid } from '../responses.js';
import { amountOf, countryCode, deliverAt, httpUrl, listingParams, optionalBoolean, optionalString, shopperLocale } from '../validation.js';
import { type Answer, type ApiContext, INFIX, JOB, meta, notAllowed, notFound, numberedId, randomDigits, timestampId } from './context.js';
import { sessionAuthorisation } from './events.js';

/** Seconds a customer has to pay once the payment page is open. */
export const PAYMENT_PAGE_SECONDS = 300;

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

/**
 * The session operations over the store. Each runs inside the transaction of the request (or job)
 * that calls it, so everything it writes, webhooks and scheduled work included, commits together.
 */
export class Sessions {
  readonly #context: ApiContext;

  constructor(context: ApiContext) {
    this.#context = context;
  }

  #now(): number {
    return this.#context.clock.now();
  }

  get(environment: Environment, sessionId: string): SessionRecord | undefined {
    const session = this.#context.store.sessions.get(sessionId);
    return session?.environment === environment ? session : undefined;
  }

  byToken(environment: Environment, token: string): SessionRecord | undefined {
    return this.#context.store.sessions.findBy({ token, environment });
  }

  /**
   * A payment-page token no session of the tenant has had: 32 hex digits from the seeded stream,
   * after the tenant's prefix. The prefix keeps tenants apart; the check, a repeat within one.
   */
  #newToken(): string {
    for (;;) {
      const token = `${this.#context.tokenPrefix}${randomDigits(this.#context, 32, 16)}`;
      if (!this.#context.store.sessions.has('token', token)) return token;
    }
  }

  create(environment: Environment, body: Record<string, unknown>, origin: string): Answer {
    const amount = amountOf(body, true) as StoredAmount;
    const session: SessionRecord = {
      environment,
      sessionId: '',
      token: this.#newToken(),
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
    session.sessionId = timestampId(this.#context, INFIX.session[environment]);
    this.#context.store.sessions.save(session);
    const paymentUrl = `${origin}/${environment === 'test' ? 'pay-external-test' : 'pay-external'}/${session.token}`;
    return { status: 201, data: { ...sessionView(session), paymentUrl } };
  }

  retrieve(environment: Environment, sessionId: string): Answer {
    const session = this.get(environment, sessionId);
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

  list(environment: Environment, query: URLSearchParams): Answer {
    const status = query.get('status');
    if (status !== null && !(SESSION_STATUSES as readonly string[]).includes(status))
      throw invalid(`status must be one of ${SESSION_STATUSES.join(', ')}`);
    const params = listingParams(query);
    const page = this.#context.store.sessions.page({ environment, status: status ?? undefined }, params);
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
    this.#context.store.sessions.save(session);
    this.#context.schedule(JOB.expireSession, PAYMENT_PAGE_SECONDS * 1000, session.sessionId);
  }

  /**
   * The page's time ran out (the expiry job). It ended at its deadline, not when the job ran: a job
   * runs late when the sandbox was stopped across the deadline or its timer fired late, and the
   * page refused payment from the deadline on.
   */
  expire(sessionId: string): void {
    const session = this.#context.store.sessions.get(sessionId);
    if (session?.status !== 'pending') return;
    this.#end(session, 'expired', session.openedAt === null ? this.#now() : session.openedAt + PAYMENT_PAGE_SECONDS * 1000);
  }

  #end(session: SessionRecord, status: Exclude<SessionRecord['status'], 'pending'>, at = this.#now()): void {
    session.status = status;
    session.endedAt = at;
    this.#context.store.sessions.save(session);
  }

  /** The customer paid on the hosted page: the session completes and the AUTHORISATION webhook goes out. */
  authorise(session: SessionRecord): string {
    const paymentReference = numberedId(this.#context, INFIX.payment[session.environment]);
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
    const session = this.get(environment, sessionId);
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
    const session = this.get(environment, sessionId);
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
    const paymentReference = numberedId(this.#context, INFIX.payment[session.environment]);
    const now = this.#now();
    session.attempts.push({ paymentReference, status, reason, createdAt: now });
    this.#end(session, 'failed', now);
  }

  cancel(session: SessionRecord): void {
    this.#end(session, 'cancelled');
  }
}
