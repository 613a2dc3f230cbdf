import { APIPromise } from '../core/api-promise.js';
import type { PosRecoveryState } from '../core/errors.js';
import type { Paginator } from '../core/pagination.js';
import { type CheckPosPaymentOptions, checkPayment, type PosPaymentCheck } from '../core/pos-check.js';
import {
  type CreatePosPaymentOptions,
  chargeWithRecovery,
  type PosOperations,
  type PreparedPosPayment,
  preparePayment,
  type RecoveredPosPayment,
  type ResumeRecoveryOptions,
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
   * Makes a charge's state without sending anything: its `Idempotency-Key` (`options.idempotencyKey`,
   * for example `posPaymentKey(orderId, attempt)`, or a fresh UUID v4), a plain-JSON copy of the
   * params and the time it was made. Save it with the order before sending it with
   * `createPayment(state)`: whatever happens to the process after that, the saved state finishes
   * this charge (`checkPayment`, `resumeRecovery`, `followUps.track({ pos: state })`) and never
   * starts another. Throws `RequestValidationError` for params `createPayment` would refuse.
   */
  preparePayment(params: CreatePosPaymentParams, options?: { idempotencyKey?: string | undefined }): PreparedPosPayment {
    const check = (checked: CreatePosPaymentParams, idempotencyKey: string) =>
      this.core.check(createPayment, { params: checked }, { idempotencyKey });
    return preparePayment(check, params, options);
  }

  /**
   * Sends a charge to the terminal `poiId` and waits for its result (the service may take 240 s;
   * each attempt may last the client's `posTimeout`, 270 s by default). Given a state from
   * `preparePayment` (or a saved one), sends that charge with its own key.
   *
   * A charge is never resent blindly. When its outcome is uncertain (a `timeout` status, a lost
   * connection, a 5xx, a client-side timeout), recovery (on by default, see `options.recover`)
   * waits, resends the same bytes with the same `Idempotency-Key` to read the stored response,
   * then polls `GET /pos/payments` until the payment is `success` or `failed`, resending again
   * each round while no answer to the charge has been read (the key keeps it one charge). The
   * result then has `recovered: true`. If `maxWaitMs` passes first, it throws
   * `PosPaymentPendingError`, whose `resume()` continues later. With `options.deadline`, it
   * throws that error shortly before the deadline instead, whatever step it is in.
   *
   * Once the charge may have left, it throws only `PosPaymentPendingError` (with `idempotencyKey`
   * and `state`; a failure recovery cannot outlive, an abort of `options.signal` or the deadline is
   * its `cause`) or the service's refusal of the charge, which means nothing was charged (400,
   * 409, 502 with 13004) and carries `idempotencyKey` too: what was started can always be finished.
   */
  createPayment(params: CreatePosPaymentParams | PosRecoveryState, options?: CreatePosPaymentOptions): APIPromise<RecoveredPosPayment> {
    return new APIPromise(chargeWithRecovery(this.#operations, params, options));
  }

  /**
   * One short look at where a charge stands, reading `GET /pos/payments` only (it never sends the
   * charge): `success` / `failed` with the payment once final, `pending` while the service lists
   * it in progress, `unknown` while nothing is listed (see {@link PosPaymentCheck} for when that
   * calls for `resumeRecovery`). One request in the common case. For a status route that a
   * cashier's screen polls, with `options.deadline` as the other POS calls.
   */
  checkPayment(state: PosRecoveryState, options?: CheckPosPaymentOptions): Promise<PosPaymentCheck> {
    return checkPayment(this.#operations, state, options);
  }

  /**
   * Waits for the final status (`success` or `failed`) of a payment known only by its id, for
   * example after a restart, by polling `GET /pos/payments`. Throws `PosPaymentPendingError` after
   * `maxWaitMs`, or shortly before `options.deadline`.
   */
  waitForFinalStatus(posPaymentId: string, options?: WaitForFinalStatusOptions): APIPromise<RecoveredPosPayment> {
    return new APIPromise(waitForFinalStatus(this.#operations, posPaymentId, options));
  }

  /**
   * Continues a charge from its saved state (`PosPaymentPendingError.state`, or `preparePayment`'s,
   * in this or another process): resends it with its own key, which starts it at most once or reads
   * its stored answer, then polls as `createPayment`'s recovery does. With `options.deadline`, as
   * `createPayment`.
   */
  resumeRecovery(state: PosRecoveryState, options?: ResumeRecoveryOptions): APIPromise<RecoveredPosPayment> {
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
