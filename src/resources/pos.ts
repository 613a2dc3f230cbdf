import type { APIPromise } from '../core/api-promise.js';
import type { Paginator } from '../core/pagination.js';
import type { Endpoint, RequestOptions } from '../core/transport.js';
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
  /**
   * Sends a charge to the terminal `poiId` and waits for its result (the service may take 240 s;
   * the per-attempt timeout is the client's `posTimeout`, 270 s by default). The result's `status`
   * is `success`, `failed` or `timeout`. The charge is never resent unless the request provably
   * did not reach the service.
   */
  createPayment(params: CreatePosPaymentParams, options?: RequestOptions): APIPromise<PosPayment> {
    return this.core.request(createPayment, { params }, options);
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
