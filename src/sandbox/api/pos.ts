/** POS payments: sent to a test terminal, answered by a job after its processing time (or the simulated delay), resolved late or by the controls, listed. */
import type { Environment } from '../../core/options.js';
import { POS_TEST_ENDINGS, TEST_TERMINALS } from '../../testing/index.js';
import type { PosRecord, StoredAmount } from '../records.js';
import { recordTimestamp } from '../records.js';
import { invalid, ServiceFailure, successBody } from '../responses.js';
import { amountOf, dateFilter, listingParams, optionalBoolean, optionalString, requiredString } from '../validation.js';
import {
  type Answer,
  type ApiContext,
  type Deferred,
  INFIX,
  JOB,
  meta,
  notAllowed,
  notFound,
  randomDigits,
  timestampId,
} from './context.js';
import { posAuthorisation } from './events.js';
import { isOnline } from './terminals.js';
import type { KeyWaits } from './waits.js';

const POS_STATUSES = ['pending', 'success', 'failed', 'timeout'];

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
export interface PosAnswerSubject {
  posPaymentId: string;
  idempotencyKey: string | null;
}

/** The POS payment operations; each runs inside the transaction of the request or job that calls it. */
export class PosPayments {
  readonly #context: ApiContext;
  readonly #keys: KeyWaits;
  /** Requests waiting for their POS payment's terminal answer, by `posPaymentId`; `keyed`: sent with an `Idempotency-Key`. */
  readonly #waiters = new Map<string, { resolve: (answer: Answer) => void; reject: (failure: ServiceFailure) => void; keyed: boolean }>();

  constructor(context: ApiContext, keys: KeyWaits) {
    this.#context = context;
    this.#keys = keys;
  }

  /**
   * Sends a payment to a terminal: the record (listed as `pending`) and the terminal's answer, a
   * job due after the terminal's own processing time or else the simulated delay, are committed with the request; the request then waits for
   * that job. After a crash the job runs on restart and completes the stored idempotent response.
   */
  create(environment: Environment, body: Record<string, unknown>, idempotencyKey: string | null): Deferred {
    const { store } = this.#context;
    const poiId = requiredString(body, 'poiId');
    const amount = amountOf(body, true) as StoredAmount;
    const description = optionalString(body, 'description', 255);
    const customReference = optionalString(body, 'customReference', 100);
    const isPreAuth = optionalBoolean(body, 'isPreAuth');
    const terminal = TEST_TERMINALS.find((candidate) => candidate.poiId === poiId);
    if (!terminal) throw invalid(`Invalid terminal: device ${poiId} not found`);
    if (!isOnline(store, environment, poiId)) throw new ServiceFailure(502, 13004, 'Error in POS payment response: Reject');
    // A terminal that is still processing a payment cannot take another, as a real busy terminal.
    if (store.posPayments.findBy({ poi_id: poiId, status: 'pending' }))
      throw new ServiceFailure(409, 13005, 'Terminal busy: another payment is in progress');
    const record: PosRecord = {
      environment,
      posPaymentId: timestampId(this.#context, INFIX.posPayment[environment]),
      poiId,
      amount,
      status: 'pending',
      isPreAuth,
      pspReference: null,
      errorMessage: null,
      description,
      customReference,
      createdAt: this.#context.clock.now(),
    };
    store.posPayments.save(record);
    const subject: PosAnswerSubject = { posPaymentId: record.posPaymentId, idempotencyKey };
    // The default delay is drawn either way, so that a terminal's own time leaves the seeded stream
    // (the ids and references that follow) as it would be without it.
    const drawn = this.#context.posDelay();
    const delay = store.terminals.processingMs(environment, poiId) ?? drawn;
    this.#context.schedule(JOB.posAnswer, delay, JSON.stringify(subject));
    const deferred = new Promise<Answer>((resolve, reject) =>
      this.#waiters.set(record.posPaymentId, { resolve, reject, keyed: idempotencyKey !== null }),
    );
    // A waiter whose request went away (its transaction rolled back after this) may still be released
    // by a stop or a removal: that rejection must not surface as an unhandled one.
    deferred.catch(() => undefined);
    return { deferred };
  }

  /** The terminal answers (the job): the outcome follows the documented amount endings, or `forced`. */
  answer({ posPaymentId, idempotencyKey }: PosAnswerSubject, forced?: 'success' | 'failed'): void {
    const { store } = this.#context;
    const record = store.posPayments.get(posPaymentId);
    if (record?.status !== 'pending') return;
    const ending = forced === 'failed' ? POS_TEST_ENDINGS.failed : forced === 'success' ? 0 : record.amount.value % 100;
    let outcome: Answer | ServiceFailure;
    if (ending === POS_TEST_ENDINGS.busy) {
      store.posPayments.delete(posPaymentId);
      outcome = new ServiceFailure(409, 13005, 'Terminal busy (test simulation)');
    } else {
      if (ending === POS_TEST_ENDINGS.failed) {
        this.#fail(record);
      } else if (ending === POS_TEST_ENDINGS.timeout) {
        record.status = 'timeout';
        record.errorMessage =
          'Terminal did not respond in time; the payment may still be processed asynchronously via webhook (test simulation)';
        this.#context.schedule(JOB.posLateCompletion, this.#context.posTimeoutResolveMs, posPaymentId);
      } else {
        this.#succeed(record);
      }
      store.posPayments.save(record);
      outcome = { status: 200, data: posView(record) };
    }
    if (idempotencyKey !== null) {
      // Only successes are stored: a failed request ran nothing, and may be sent again as it was.
      if (outcome instanceof ServiceFailure) store.idempotency.delete(record.environment, idempotencyKey);
      else store.idempotency.complete(record.environment, idempotencyKey, outcome.status, successBody(outcome.data));
      this.#keys.settle(record.environment, idempotencyKey);
    }
    const waiter = this.#waiters.get(posPaymentId);
    this.#waiters.delete(posPaymentId);
    if (outcome instanceof ServiceFailure) waiter?.reject(outcome);
    else waiter?.resolve(outcome);
  }

  #succeed(record: PosRecord): void {
    record.status = 'success';
    record.errorMessage = null;
    record.pspReference = `TEST${randomDigits(this.#context, 16, 10)}`;
    this.#context.webhooks.emit(record.environment, posAuthorisation(record));
  }

  #fail(record: PosRecord): void {
    record.status = 'failed';
    record.errorMessage = 'Card declined (test simulation)';
    this.#context.webhooks.emit(record.environment, posAuthorisation(record));
  }

  /**
   * The sandbox is stopping: each request still waiting for its terminal is answered `failure` now
   * rather than holding the stop up. Its payment stays `pending`, stored with its terminal's answer
   * (a scheduled job), which runs at the next start on the same data and completes the stored
   * idempotent response: the client's retry with the same `Idempotency-Key` then gets the result.
   */
  releaseWaiting(failure: ServiceFailure | ((waiting: { posPaymentId: string; keyed: boolean }) => ServiceFailure)): number {
    const waiting = [...this.#waiters];
    this.#waiters.clear();
    for (const [posPaymentId, waiter] of waiting)
      waiter.reject(typeof failure === 'function' ? failure({ posPaymentId, keyed: waiter.keyed }) : failure);
    return waiting.length;
  }

  /** A `timeout` payment that the terminal completed later (the job): it succeeds and its webhook goes out. */
  completeLate(posPaymentId: string): void {
    const record = this.#context.store.posPayments.get(posPaymentId);
    if (record?.status !== 'timeout') return;
    this.#succeed(record);
    this.#context.store.posPayments.save(record);
  }

  /**
   * Resolves a POS payment now: a `pending` one as its terminal would answer (the request waiting
   * on it gets that answer), a `timeout` one as the late completion would, with `outcome` instead of
   * what the amount ending says.
   */
  resolveNow(environment: Environment, posPaymentId: string, outcome: 'success' | 'failed'): PosRecord {
    const { store } = this.#context;
    const record = store.posPayments.get(posPaymentId);
    if (record?.environment !== environment) throw notFound('POS payment');
    if (record.status === 'pending') {
      this.answer(this.#pendingSubject(record), outcome);
    } else if (record.status === 'timeout') {
      if (outcome === 'success') this.#succeed(record);
      else this.#fail(record);
      store.posPayments.save(record);
    } else {
      throw notAllowed(`POS payment ${posPaymentId} is ${record.status}: only a pending or timeout payment can be resolved`);
    }
    return store.posPayments.get(posPaymentId) ?? record;
  }

  /** The subject of the pending payment's terminal-answer job, which holds the `Idempotency-Key` to complete. */
  #pendingSubject(record: PosRecord): PosAnswerSubject {
    for (const job of this.#context.store.jobs.of(JOB.posAnswer)) {
      const subject = JSON.parse(job.subject) as PosAnswerSubject;
      if (subject.posPaymentId === record.posPaymentId) return subject;
    }
    return { posPaymentId: record.posPaymentId, idempotencyKey: null };
  }

  list(environment: Environment, query: URLSearchParams): Answer {
    const status = query.get('status');
    if (status !== null && !POS_STATUSES.includes(status)) throw invalid(`status must be one of ${POS_STATUSES.join(', ')}`);
    const start = dateFilter(query, 'created_at_start');
    const end = dateFilter(query, 'created_at_end');
    const params = listingParams(query);
    // Record timestamps have whole seconds: an end of 10:00:00 includes 10:00:00.999.
    const page = this.#context.store.posPayments.page({ environment, status: status ?? undefined }, params, {
      from: start,
      to: end === null ? null : Math.floor(end / 1000) * 1000 + 999,
    });
    return { status: 200, data: { posPayments: page.items.map(posView), meta: meta(page, params.order) } };
  }
}
