import { APIPromise } from '../core/api-promise.js';
import type { PosRecoveryState } from '../core/errors.js';
import type { Paginator } from '../core/pagination.js';
import {
  type CreatePosPaymentOptions,
  chargeWithRecovery,
  type PosOperations,
  type RecoveredPosPayment,
  type RecoveryOptions,
  resumeRecovery,
  type WaitForFinalStatusOptions,
  waitForFinalStatus,
} from '../core/recovery.js';
import type { Endpoint, RequestOptions, Transport } from '../core/transport.js';
import { type ModificationRecord, ModificationsOfPaymentSchema } from '../schemas/modifications.js';
import {
  type CreatePosPaymentParams,
  CreatePosPaymentParamsSchema,
  type ListPosPaymentsParams,
  ListPosPaymentsParamsSchema,
  type PosPayment,
  PosPaymentListSchema,
  PosPaymentSchema,
} from '../schemas/pos.js';
import { APIResource } from './resource.js';

const createPayment = {
  method: 'POST',
  path: '/pos/payment',
  params: CreatePosPaymentParamsSchema,
  response: PosPaymentSchema,
  retryClass: 'charge',
  longRunning: true,
} satisfies Endpoint<CreatePosPaymentParams, PosPayment>;

const list = {
  method: 'GET',
  path: '/pos/payments',
  params: ListPosPaymentsParamsSchema,
  response: PosPaymentListSchema,
} satisfies Endpoint<ListPosPaymentsParams, unknown>;

const listModifications = {
  method: 'GET',
  path: '/pos/payment/{posPaymentId}/modifications',
  response: ModificationsOfPaymentSchema,
} satisfies Endpoint<never, ModificationRecord[]>;

/** Payments on physical terminals. */
export class Pos extends APIResource {
  readonly #operations: PosOperations;

  constructor(core: Transport) {
    super(core);
    this.#operations = {
      charge: (params, options) => this.core.request(createPayment, { params }, options),
      list: (params, options) => this.core.paginate(list, 'posPayments', params, options),
      logger: core.logger,
    };
  }

  /**
   * Sends a charge to the terminal `poiId` and waits for its result (the service may take 240 s;
   * each attempt may last the client's `posTimeout`, 270 s by default).
   *
   * A charge is never resent blindly. When its outcome is uncertain (a `timeout` status, a lost
   * connection, a 5xx, a client-side timeout), recovery (on by default, see `options.recover`)
   * waits, resends the same bytes with the same `Idempotency-Key` to read the stored response,
   * then polls `GET /pos/payments` until the payment is `success` or `failed`, resending again
   * each round while no answer to the charge has been read (the key keeps it one charge). The
   * result then has `recovered: true`. If `maxWaitMs` passes first, it throws
   * `PosPaymentPendingError`, whose `resume()` continues later.
   *
   * Once the charge may have left, it throws only `PosPaymentPendingError` (with `idempotencyKey`
   * and `state`; a failure recovery cannot outlive, or an abort of `options.signal`, is its
   * `cause`) or the service's refusal of the charge, which means nothing was charged (400, 409,
   * 502 with 13004) and carries `idempotencyKey` too: what was started can always be finished.
   */
  createPayment(params: CreatePosPaymentParams, options?: CreatePosPaymentOptions): APIPromise<RecoveredPosPayment> {
    return new APIPromise(chargeWithRecovery(this.#operations, params, options));
  }

  /**
   * Waits for the final status (`success` or `failed`) of a payment known only by its id, for
   * example after a restart, by polling `GET /pos/payments`. Throws `PosPaymentPendingError` after `maxWaitMs`.
   */
  waitForFinalStatus(posPaymentId: string, options?: WaitForFinalStatusOptions): APIPromise<RecoveredPosPayment> {
    return new APIPromise(waitForFinalStatus(this.#operations, posPaymentId, options));
  }

  /** Continues a recovery from `PosPaymentPendingError.state`, saved by this or another process. */
  resumeRecovery(
    state: PosRecoveryState,
    options?: RecoveryOptions & { signal?: AbortSignal | undefined },
  ): APIPromise<RecoveredPosPayment> {
    return new APIPromise(resumeRecovery(this.#operations, state, options));
  }

  /** Lists POS payments. `createdAtStart`/`createdAtEnd` take a `Date` (sent as UTC `YYYY-MM-DD HH:MM:SS`) or a string. */
  list(params?: ListPosPaymentsParams, options?: RequestOptions): Paginator<PosPayment> {
    return this.core.paginate(list, 'posPayments', params, options);
  }

  /**
   * Lists the modifications of a POS payment. The reference does not show this listing's body:
   * `data` as an array, or as `{ modifications: [...] }`, are both accepted.
   */
  listModifications(posPaymentId: string, options?: RequestOptions): APIPromise<ModificationRecord[]> {
    return this.core.request(listModifications, { pathParams: { posPaymentId } }, options);
  }
}
