import type { APIPromise } from '../core/api-promise.js';
import type { Paginator } from '../core/pagination.js';
import type { Endpoint, RequestOptions } from '../core/transport.js';
import {
  type CancelAcknowledgement,
  CancelAcknowledgementSchema,
  type CancelParams,
  CancelParamsSchema,
  type CaptureAcknowledgement,
  CaptureAcknowledgementSchema,
  type CaptureParams,
  CaptureParamsSchema,
  type ExtendAcknowledgement,
  ExtendAcknowledgementSchema,
  type ExtendParams,
  ExtendParamsSchema,
  type ListModificationsParams,
  ListModificationsParamsSchema,
  ModificationListSchema,
  type ModificationRecord,
  type RefundAcknowledgement,
  RefundAcknowledgementSchema,
  type RefundParams,
  RefundParamsSchema,
} from '../schemas/modifications.js';
import { APIResource } from './resource.js';

const refund = {
  method: 'POST',
  path: '/payment/refund',
  params: RefundParamsSchema,
  response: RefundAcknowledgementSchema,
} satisfies Endpoint<RefundParams, RefundAcknowledgement>;

const capture = {
  method: 'POST',
  path: '/payment/capture',
  params: CaptureParamsSchema,
  response: CaptureAcknowledgementSchema,
} satisfies Endpoint<CaptureParams, CaptureAcknowledgement>;

const cancel = {
  method: 'POST',
  path: '/payment/cancel',
  params: CancelParamsSchema,
  response: CancelAcknowledgementSchema,
} satisfies Endpoint<CancelParams, CancelAcknowledgement>;

const extend = {
  method: 'POST',
  path: '/payment/extend',
  params: ExtendParamsSchema,
  response: ExtendAcknowledgementSchema,
} satisfies Endpoint<ExtendParams, ExtendAcknowledgement>;

const list = {
  method: 'GET',
  path: '/modifications',
  params: ListModificationsParamsSchema,
  response: ModificationListSchema,
} satisfies Endpoint<ListModificationsParams, unknown>;

/**
 * Refund, capture, cancel and extend an existing payment, online or POS. Address the payment by its
 * `paymentReference` (for a POS payment, its `posPaymentId`), never by `sessionId`.
 */
export class Modifications extends APIResource {
  /** Refunds a payment, fully or partly. Acknowledged with `status: 'pending'`; a REFUND webhook follows. */
  refund(params: RefundParams, options?: RequestOptions): APIPromise<RefundAcknowledgement> {
    return this.core.request(refund, { params }, options);
  }

  /** Captures a pre-authorisation, for its amount or less. Acknowledged with `status: 'received'`. */
  capture(params: CaptureParams, options?: RequestOptions): APIPromise<CaptureAcknowledgement> {
    return this.core.request(capture, { params }, options);
  }

  /** Cancels a pre-authorisation. Acknowledged with `status: 'received'`. */
  cancel(params: CancelParams, options?: RequestOptions): APIPromise<CancelAcknowledgement> {
    return this.core.request(cancel, { params }, options);
  }

  /**
   * Extends the period before a pre-authorisation expires. The reference shows neither body nor
   * response: `paymentReference` is sent with any other fields you give, and any 2xx is accepted.
   */
  extend(params: ExtendParams, options?: RequestOptions): APIPromise<ExtendAcknowledgement> {
    return this.core.request(extend, { params }, options);
  }

  /** Lists modifications of every payment, filtered by `type` and `status`. */
  list(params?: ListModificationsParams, options?: RequestOptions): Paginator<ModificationRecord> {
    return this.core.paginate(list, 'modifications', params, options);
  }
}
