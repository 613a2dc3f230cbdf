/** Refunds, captures, cancels and extends: requested through the API, resolved by a job, listed per payment or in all. */
import type { Environment } from '../../core/options.js';
import type { ModificationRecord, StoredAmount } from '../records.js';
import { recordTimestamp } from '../records.js';
import { invalid, SANDBOX_CODES, ServiceFailure } from '../responses.js';
import { amountOf, listingParams, optionalString, requiredString } from '../validation.js';
import { type Answer, type ApiContext, INFIX, JOB, meta, numberedId } from './context.js';
import { refundEvent } from './events.js';

type OperationType = ModificationRecord['operationType'];

/**
 * 404 / 19404 for a reference that names no record of the tenant in this environment: the field
 * first (so that the request log's issue names it), then the reference as sent.
 */
function unknownReference(field: string, what: string, environment: Environment, reference: string): ServiceFailure {
  return new ServiceFailure(
    404,
    SANDBOX_CODES.notFound,
    `${field} does not name ${what} of this webcode in ${environment === 'test' ? 'Test' : 'Live'}: ${reference} not found`,
  );
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

/**
 * A payment's modifications that did not fail, by type: their count and the sum of their amounts.
 * Summed by SQLite from the records' JSON, rather than every record read back and parsed: a payment
 * refunded many times made each refund slower than the one before. `+environment`: the payment's
 * index, not the environment's (which SQLite, without statistics, took, reading every modification).
 */
const TOTALS = `SELECT operation_type AS type, count(*) AS n, total(json_extract(record, '$.amount.value')) AS amount
  FROM modifications WHERE +environment = ? AND payment_reference = ? AND status <> 'failed' GROUP BY operation_type`;

type Totals = Partial<Record<OperationType, { count: number; amount: number }>>;

/** The modification operations; each runs inside the transaction of the request or job that calls it. */
export class Modifications {
  readonly #context: ApiContext;

  constructor(context: ApiContext) {
    this.#context = context;
  }

  /** The payment a modification acts on: an authorised session's payment or a successful POS payment. */
  #payment(environment: Environment, reference: string) {
    const { store } = this.#context;
    const session = store.sessions.findBy({ payment_reference: reference, environment });
    if (session)
      return {
        amount: session.amount,
        isPreAuth: session.isPreAuth,
        sessionId: session.sessionId,
        customReference: session.customReference,
      };
    const pos = store.posPayments.get(reference);
    if (pos?.environment !== environment) throw unknownReference('paymentReference', 'a payment', environment, reference);
    if (pos.status !== 'success') throw invalid(`Payment ${reference} is not authorised (status ${pos.status})`);
    return { amount: pos.amount, isPreAuth: pos.isPreAuth, sessionId: pos.posPaymentId, customReference: pos.customReference };
  }

  /** Requests a modification of a payment: checked against what earlier ones left, stored, and resolved later by a job. */
  request(environment: Environment, type: OperationType, body: Record<string, unknown>): Answer {
    const paymentReference = requiredString(body, 'paymentReference');
    const payment = this.#payment(environment, paymentReference);
    const amount = this.#amount(environment, type, paymentReference, payment, body);
    const reason = type === 'refund' ? optionalString(body, 'reason') : null;
    const now = this.#context.clock.now();
    const record: ModificationRecord = {
      environment,
      operationReference: numberedId(this.#context, INFIX[type][environment]),
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
    this.#context.store.modifications.save(record);
    this.#context.schedule(JOB.resolveModification, this.#context.modificationResolveMs, record.operationReference);

    const createdAt = recordTimestamp(now);
    const referenceField = `${type}Reference`;
    const data =
      type === 'cancel' || type === 'extend'
        ? { [referenceField]: record.operationReference, paymentReference, status: record.status, createdAt }
        : { [referenceField]: record.operationReference, paymentReference, amount, status: record.status, createdAt };
    return { status: type === 'extend' ? 200 : 202, data };
  }

  /** The amount a refund or capture may take (what is left of the payment), `null` for a cancel or extend of an open pre-authorisation. */
  #amount(
    environment: Environment,
    type: OperationType,
    paymentReference: string,
    payment: { amount: StoredAmount; isPreAuth: boolean },
    body: Record<string, unknown>,
  ): StoredAmount | null {
    const totals: Totals = {};
    for (const row of this.#context.store.statement(TOTALS).all(environment, paymentReference))
      totals[row.type as OperationType] = { count: row.n as number, amount: row.amount as number };
    const sum = (kind: OperationType) => totals[kind]?.amount ?? 0;
    const captured = sum('capture');
    const cancelled = (totals.cancel?.count ?? 0) > 0;
    if (type === 'cancel' || type === 'extend') {
      if (!payment.isPreAuth || cancelled || captured > 0)
        throw invalid(`Only an open pre-authorisation can be ${type === 'cancel' ? 'cancelled' : 'extended'}`);
      return null;
    }
    const given = amountOf(body, false);
    if (given && given.currency !== payment.amount.currency)
      throw invalid(`amount.currency must be ${payment.amount.currency}, the payment's currency`);
    const base = type === 'capture' ? payment.amount.value : payment.isPreAuth ? captured : payment.amount.value;
    const available = base - sum(type);
    if (type === 'capture' && (!payment.isPreAuth || cancelled)) throw invalid('Only an open pre-authorisation can be captured');
    if (type === 'refund' && payment.isPreAuth && captured === 0)
      throw invalid('A pre-authorisation must be captured before it is refunded');
    const value = given?.value ?? available;
    if (value <= 0 || value > available)
      throw invalid(`amount.value must be at most ${available}, the ${type === 'refund' ? 'refundable' : 'capturable'} amount`);
    return { value, currency: payment.amount.currency };
  }

  /** The modification resolves (the job): `success`, and a refund's webhook goes out. */
  resolve(operationReference: string): void {
    const { store } = this.#context;
    const record = store.modifications.get(operationReference);
    if (!record || (record.status !== 'pending' && record.status !== 'received')) return;
    record.status = 'success';
    record.resolvedAt = this.#context.clock.now();
    store.modifications.save(record);
    if (record.operationType !== 'refund') return;
    this.#context.webhooks.emit(record.environment, refundEvent(this.#context, record));
  }

  /** Modifications of one session or POS payment: `{ modifications, meta }`, all on one page. */
  of(environment: Environment, kind: 'session' | 'pos', id: string): Answer {
    const { store } = this.#context;
    const owner = kind === 'session' ? store.sessions.get(id) : store.posPayments.get(id);
    if (owner?.environment !== environment)
      throw kind === 'session'
        ? unknownReference('sessionId', 'a session', environment, id)
        : unknownReference('posPaymentId', 'a POS payment', environment, id);
    // By the session's index alone: with the environment as well, SQLite (without statistics) took the
    // environment's index and read every modification of it.
    const records = store.modifications.all({ session_id: id }).filter((record) => record.environment === environment);
    return {
      status: 200,
      data: { modifications: records.map(modificationView), meta: { cursor: null, hasMore: false, total: records.length } },
    };
  }

  list(environment: Environment, query: URLSearchParams): Answer {
    const params = listingParams(query);
    const page = this.#context.store.modifications.page(
      { environment, operation_type: query.get('type') ?? undefined, status: query.get('status') ?? undefined },
      params,
    );
    return { status: 200, data: { modifications: page.items.map(modificationView), meta: meta(page, params.order) } };
  }
}
