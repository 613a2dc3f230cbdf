import type { APIPromise } from '../core/api-promise.js';
import type { Paginator } from '../core/pagination.js';
import type { Endpoint, RequestOptions } from '../core/transport.js';
import { type ModificationRecord, ModificationsOfPaymentSchema } from '../schemas/modifications.js';
import {
  type CreateSessionParams,
  CreateSessionParamsSchema,
  type ListSessionsParams,
  ListSessionsParamsSchema,
  type PaymentSession,
  PaymentSessionSchema,
  type Session,
  type SessionListItem,
  SessionListSchema,
  SessionSchema,
} from '../schemas/sessions.js';
import { APIResource } from './resource.js';

const create = {
  method: 'POST',
  path: '/payment/session',
  params: CreateSessionParamsSchema,
  response: PaymentSessionSchema,
} satisfies Endpoint<CreateSessionParams, PaymentSession>;

const retrieve = { method: 'GET', path: '/payment/session/{sessionId}', response: SessionSchema } satisfies Endpoint<never, Session>;

const list = {
  method: 'GET',
  path: '/payment/sessions',
  params: ListSessionsParamsSchema,
  response: SessionListSchema,
} satisfies Endpoint<ListSessionsParams, unknown>;

const listModifications = {
  method: 'GET',
  path: '/payment/session/{sessionId}/modifications',
  response: ModificationsOfPaymentSchema,
} satisfies Endpoint<never, ModificationRecord[]>;

/** Online payment sessions: the hosted payment page flow. */
export class Sessions extends APIResource {
  /**
   * Creates a payment session. Redirect the customer to the returned `paymentUrl`.
   * Sends an `Idempotency-Key` (yours, or a fresh UUID) that every retry reuses.
   */
  create(params: CreateSessionParams, options?: RequestOptions): APIPromise<PaymentSession> {
    return this.core.request(create, { params }, options);
  }

  /** Reads one session by `sessionId`; payment fields appear once the customer has paid. */
  retrieve(sessionId: string, options?: RequestOptions): APIPromise<Session> {
    return this.core.request(retrieve, { pathParams: { sessionId } }, options);
  }

  /** Lists sessions, newest pages fetched lazily: `for await (const s of client.sessions.list())`. */
  list(params?: ListSessionsParams, options?: RequestOptions): Paginator<SessionListItem> {
    return this.core.paginate(list, 'payments', params, options);
  }

  /**
   * Lists the refunds, captures and cancels of an online session. The reference does not show this
   * listing's body: `data` as an array, or as `{ modifications: [...] }`, are both accepted.
   */
  listModifications(sessionId: string, options?: RequestOptions): APIPromise<ModificationRecord[]> {
    return this.core.request(listModifications, { pathParams: { sessionId } }, options);
  }
}
