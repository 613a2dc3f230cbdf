/**
 * The service's 13 endpoints as the OpenAPI document describes them: for each, the SDK's Zod
 * schemas of its query, body and answer, its success status, the documented failures it can
 * answer, and an example. The rules themselves live in the schemas (src/schemas/); this table
 * says which schema is which endpoint's, and what only prose in the reference says.
 */
import type * as z from 'zod/mini';
import { ErrorCode } from '../core/errors.js';
import {
  CancelAcknowledgementSchema,
  CancelParamsSchema,
  CaptureAcknowledgementSchema,
  CaptureParamsSchema,
  ExtendAcknowledgementSchema,
  ExtendParamsSchema,
  ListModificationsParamsSchema,
  ModificationListSchema,
  ModificationsOfPaymentSchema,
  RefundAcknowledgementSchema,
  RefundParamsSchema,
} from '../schemas/modifications.js';
import {
  CreatePosPaymentParamsSchema,
  ListPosPaymentsParamsSchema,
  POS_LIST_WIRE_NAMES,
  PosPaymentListSchema,
  PosPaymentSchema,
} from '../schemas/pos.js';
import {
  CreateSessionParamsSchema,
  ListSessionsParamsSchema,
  PaymentSessionSchema,
  SessionListSchema,
  SessionSchema,
} from '../schemas/sessions.js';
import { ListTerminalsParamsSchema, TerminalListSchema } from '../schemas/terminals.js';

/** A failure the reference documents: its status, its code (`null` where the reference shows none) and its cause. */
export interface DocumentedFailure {
  status: number;
  code: number | null;
  cause: string;
  /** The message of the example answer. */
  message: string;
  /**
   * Where the reference shows no code: the one the sandbox answers (19000-19999, its own range),
   * for the example answer; the envelope's `code` stays any integer.
   */
  sandboxCode?: number;
  /** The answer's name in `components.responses` where status and codes do not tell it from another (`Failure404_Payment`). */
  responseName?: string;
}

/** What the sandbox says of an answer the reference does not show (a 404). */
const NOT_SHOWN_404 = 'not shown in the reference, which shows no 404; the sandbox answers 404 with its code 19404';

/** The reference's error table, and the two failures it names without a code. */
export const FAILURES = {
  invalid: {
    status: 400,
    code: ErrorCode.INVALID_REQUEST,
    cause:
      'missing required field or invalid value (an unsupported currency, invalid POS parameters, a Test poiId outside the simulated list)',
    message: 'amount.currency must be one of EUR, GBP, USD',
  },
  deliverAt: {
    status: 400,
    code: ErrorCode.INVALID_DELIVER_AT,
    cause: '`deliverAt` not in ISO 8601 format',
    message: 'deliverAt must be an ISO 8601 date-time',
  },
  countryFormat: {
    status: 400,
    code: ErrorCode.INVALID_COUNTRY_CODE,
    cause: 'invalid `countryCode` format',
    message: 'countryCode must be an ISO 3166-1 alpha-2 code',
  },
  countryUnsupported: {
    status: 400,
    code: ErrorCode.COUNTRY_NOT_SUPPORTED,
    cause: 'country not supported',
    message: 'Country ZZ is not supported',
  },
  permission: {
    status: 403,
    code: ErrorCode.PERMISSION_DENIED,
    cause:
      'API key without permission, or `webcode` does not match the key; a missing or unknown key (or a key of the other environment) is a key without permission: 403 / 11008, not 401',
    message: 'The API key has no permission for this webcode',
  },
  sessionNotFound: {
    status: 404,
    code: null,
    responseName: 'Failure404_Session',
    cause: `no session with this \`sessionId\` for the key's webcode and environment (${NOT_SHOWN_404})`,
    message: 'Session not found',
    sandboxCode: 19404,
  },
  sessionOfListingNotFound: {
    status: 404,
    code: null,
    responseName: 'Failure404_SessionModifications',
    cause: `no session with this \`sessionId\` for the key's webcode and environment (${NOT_SHOWN_404})`,
    message: 'sessionId does not name a session of this webcode in Test: SHOP1-EXTT-1764064800000 not found',
    sandboxCode: 19404,
  },
  posPaymentNotFound: {
    status: 404,
    code: null,
    responseName: 'Failure404_PosPayment',
    cause: `no POS payment with this \`posPaymentId\` for the key's webcode and environment (${NOT_SHOWN_404})`,
    message: 'posPaymentId does not name a POS payment of this webcode in Test: SHOP1-POSXT-1764064800000 not found',
    sandboxCode: 19404,
  },
  paymentNotFound: {
    status: 404,
    code: null,
    responseName: 'Failure404_Payment',
    cause: `no payment (online or POS) with this \`paymentReference\` for the key's webcode and environment (${NOT_SHOWN_404})`,
    message: 'paymentReference does not name a payment of this webcode in Test: SHOP1-PXTT-1001 not found',
    sandboxCode: 19404,
  },
  ipNotAllowed: {
    status: 403,
    code: null,
    cause: "request from an IP address outside the key's allow-list (code not shown)",
    message: 'Forbidden',
  },
  idempotency: {
    status: 409,
    code: null,
    cause:
      'idempotency conflict (code not shown), with the message `Idempotency key reused with a different request body.` or `Idempotency key already used for a different endpoint.`',
    message: 'Idempotency key reused with a different request body.',
  },
  terminalBusy: {
    status: 409,
    code: ErrorCode.TERMINAL_BUSY,
    cause: 'terminal busy: another payment is in progress on it',
    message: 'Terminal busy',
  },
  terminal: {
    status: 502,
    code: ErrorCode.TERMINAL_COMMUNICATION,
    cause: 'terminal communication error (a disconnected terminal; in Test the offline terminal)',
    message: 'Error in POS payment response: Reject',
  },
} as const satisfies Record<string, DocumentedFailure>;

/** What every request can fail with: a wrong value, the key's permission or address. */
const EVERY = [FAILURES.invalid, FAILURES.permission, FAILURES.ipNotAllowed];
const WRITE = [...EVERY, FAILURES.idempotency];
/** A modification: a write that names a payment, which may not exist. */
const MODIFICATION = [...WRITE, FAILURES.paymentNotFound];

/** One endpoint of the service. */
export interface EndpointDoc {
  operationId: string;
  method: 'get' | 'post';
  /** After `/external/v1` (or `/external/v1/test`), with `{name}` path parameters. */
  path: string;
  summary: string;
  description?: string;
  tag: 'Sessions' | 'Modifications' | 'POS payments' | 'Terminals';
  /** Path parameters and what they hold. */
  pathParams?: Record<string, string>;
  /** The SDK's params schema of a GET; its fields are the query parameters besides `webcode`. */
  query?: z.core.$ZodType;
  /** Query parameters the SDK names otherwise, by the SDK's name. */
  queryNames?: Record<string, string>;
  /** The SDK's params schema of a POST; the body is its fields and `webcode`. */
  body?: z.core.$ZodType;
  /** Defaults the reference states, by wire name of a body field or query parameter. */
  defaults?: Record<string, unknown>;
  /** Schema of `data` in the success envelope, and its component's name. */
  response: z.core.$ZodType;
  responseName: string;
  /** `2XX` where the reference does not state it. */
  status: '200' | '201' | '202' | '2XX';
  failures: readonly DocumentedFailure[];
  /** Example request (body, or query without `webcode`) and `data` of the answer. */
  example: { request?: Record<string, unknown>; data: unknown };
}

const WEBCODE = 'SHOP1';
const SESSION_ID = `${WEBCODE}-EXTT-1764064800000`;
const PAYMENT_REFERENCE = `${WEBCODE}-PXTT-1001`;
const POS_PAYMENT_ID = `${WEBCODE}-POSXT-1764064800000`;
const AMOUNT = { value: 2590, currency: 'EUR' };
const CREATED = '2026-11-25 10:00:00';
const META_LAST = { cursor: null, hasMore: false, total: 1 };

const refundRecord = {
  operationReference: `${WEBCODE}-RFXT-1`,
  operationType: 'refund',
  paymentReference: PAYMENT_REFERENCE,
  sessionId: SESSION_ID,
  status: 'success',
  requestedAt: '2026-11-25 10:05:00',
  createdAt: '2026-11-25 10:05:00',
  resolvedAt: '2026-11-25 10:05:01',
  amount: { value: 1000, currency: 'EUR' },
  reason: 'Customer returned one item',
};

const posPayment = {
  posPaymentId: POS_PAYMENT_ID,
  paymentReference: POS_PAYMENT_ID,
  poiId: 'V400m-TEST-000001',
  amount: AMOUNT,
  status: 'success',
  isPreAuth: false,
  pspReference: 'TEST-PSP-8F3A2C',
  description: 'Table 4',
  customReference: 'order-1042',
  createdAt: CREATED,
};

export const ENDPOINTS: readonly EndpointDoc[] = [
  {
    operationId: 'createSession',
    method: 'post',
    path: '/payment/session',
    summary: 'Create a payment session',
    description:
      'Creates a session for the hosted payment page: redirect the customer to `paymentUrl`. The session has no server-side expiry until the customer opens `paymentUrl` (then 300 seconds).',
    tag: 'Sessions',
    body: CreateSessionParamsSchema,
    defaults: { countryCode: 'ES', shopperLocale: 'es-ES', isPreAuth: false },
    response: PaymentSessionSchema,
    responseName: 'PaymentSession',
    status: '201',
    failures: [...WRITE, FAILURES.deliverAt, FAILURES.countryFormat, FAILURES.countryUnsupported],
    example: {
      request: {
        amount: AMOUNT,
        urlOk: 'https://shop.example/payment/ok',
        urlKo: 'https://shop.example/payment/ko',
        countryCode: 'ES',
        shopperLocale: 'es-ES',
        description: 'Order 1042',
        customReference: 'order-1042',
        isPreAuth: false,
      },
      data: {
        sessionId: SESSION_ID,
        paymentUrl: 'https://payments.example/pay-external-test/8c1f0a7e',
        status: 'pending',
        amount: AMOUNT,
        description: 'Order 1042',
        customReference: 'order-1042',
        isPreAuth: false,
        createdAt: CREATED,
      },
    },
  },
  {
    operationId: 'retrieveSession',
    method: 'get',
    path: '/payment/session/{sessionId}',
    summary: 'Query one session',
    description: '`paymentReference`, `completedAt`, `paymentStatus` and `attempts` are present once a payment exists.',
    tag: 'Sessions',
    pathParams: { sessionId: 'The `sessionId` returned by create (`{webcode}-EXT-{timestamp}`, in Test `{webcode}-EXTT-{timestamp}`).' },
    response: SessionSchema,
    responseName: 'Session',
    status: '200',
    failures: [...EVERY, FAILURES.sessionNotFound],
    example: {
      data: {
        sessionId: SESSION_ID,
        status: 'completed',
        amount: AMOUNT,
        countryCode: 'ES',
        shopperLocale: 'es-ES',
        description: 'Order 1042',
        customReference: 'order-1042',
        isPreAuth: false,
        urlOk: 'https://shop.example/payment/ok',
        urlKo: 'https://shop.example/payment/ko',
        createdAt: CREATED,
        paymentReference: PAYMENT_REFERENCE,
        completedAt: '2026-11-25 10:01:30',
        paymentStatus: 'AUTHORISED',
        attempts: [{ paymentReference: PAYMENT_REFERENCE, status: 'authorised', createdAt: '2026-11-25 10:01:29' }],
      },
    },
  },
  {
    operationId: 'listSessions',
    method: 'get',
    path: '/payment/sessions',
    summary: 'List sessions',
    description:
      'Cursor pagination: pass `meta.cursor` as `cursor` while `meta.hasMore` is true. Filters beyond the ones named: not shown.',
    tag: 'Sessions',
    query: ListSessionsParamsSchema,
    defaults: { take: 20 },
    response: SessionListSchema,
    responseName: 'SessionList',
    status: '200',
    failures: EVERY,
    example: {
      request: { status: 'completed', take: 20 },
      data: {
        payments: [
          {
            sessionId: SESSION_ID,
            status: 'completed',
            amount: AMOUNT,
            description: 'Order 1042',
            customReference: 'order-1042',
            isPreAuth: false,
            createdAt: CREATED,
            completedAt: '2026-11-25 10:01:30',
            paymentReference: PAYMENT_REFERENCE,
            paymentStatus: 'AUTHORISED',
          },
        ],
        meta: META_LAST,
      },
    },
  },
  {
    operationId: 'refund',
    method: 'post',
    path: '/payment/refund',
    summary: 'Refund a payment',
    description:
      'Refunds an online or POS payment (for a POS payment `paymentReference` is the `posPaymentId`). Which fields are required and the rule on amounts: not shown. A REFUND webhook follows when the refund is resolved.',
    tag: 'Modifications',
    body: RefundParamsSchema,
    response: RefundAcknowledgementSchema,
    responseName: 'RefundAcknowledgement',
    status: '202',
    failures: MODIFICATION,
    example: {
      request: { paymentReference: PAYMENT_REFERENCE, amount: { value: 1000, currency: 'EUR' }, reason: 'Customer returned one item' },
      data: {
        refundReference: `${WEBCODE}-RFXT-1`,
        paymentReference: PAYMENT_REFERENCE,
        amount: { value: 1000, currency: 'EUR' },
        status: 'pending',
        createdAt: CREATED,
      },
    },
  },
  {
    operationId: 'capture',
    method: 'post',
    path: '/payment/capture',
    summary: 'Capture a pre-authorization (full or partial)',
    description: 'The amount may be lower than the pre-authorised amount. Applies to online and POS pre-authorizations.',
    tag: 'Modifications',
    body: CaptureParamsSchema,
    response: CaptureAcknowledgementSchema,
    responseName: 'CaptureAcknowledgement',
    status: '202',
    failures: MODIFICATION,
    example: {
      request: { paymentReference: PAYMENT_REFERENCE, amount: { value: 2000, currency: 'EUR' } },
      data: {
        captureReference: `${WEBCODE}-CTXT-1`,
        paymentReference: PAYMENT_REFERENCE,
        amount: { value: 2000, currency: 'EUR' },
        status: 'received',
        createdAt: CREATED,
      },
    },
  },
  {
    operationId: 'cancel',
    method: 'post',
    path: '/payment/cancel',
    summary: 'Cancel a pre-authorization',
    tag: 'Modifications',
    body: CancelParamsSchema,
    response: CancelAcknowledgementSchema,
    responseName: 'CancelAcknowledgement',
    status: '202',
    failures: MODIFICATION,
    example: {
      request: { paymentReference: PAYMENT_REFERENCE },
      data: { cancelReference: `${WEBCODE}-CAXT-1`, paymentReference: PAYMENT_REFERENCE, status: 'received', createdAt: CREATED },
    },
  },
  {
    operationId: 'extend',
    method: 'post',
    path: '/payment/extend',
    summary: 'Extend a pre-authorization before it expires',
    description:
      'Body, response and status code: not shown in the reference. `paymentReference` is sent and other fields pass through; the answer is read as an acknowledgement shaped like the other modifications (every field optional) or no data at all.',
    tag: 'Modifications',
    body: ExtendParamsSchema,
    response: ExtendAcknowledgementSchema,
    responseName: 'ExtendAcknowledgement',
    status: '2XX',
    failures: MODIFICATION,
    example: {
      request: { paymentReference: PAYMENT_REFERENCE },
      data: { paymentReference: PAYMENT_REFERENCE, status: 'received', createdAt: CREATED },
    },
  },
  {
    operationId: 'listSessionModifications',
    method: 'get',
    path: '/payment/session/{sessionId}/modifications',
    summary: 'Modifications of an online session',
    description:
      'The response body of this listing is not shown in the reference. The sandbox answers `data` as `{ modifications, meta }`, shaped like `GET /modifications` (every modification of the payment, one page); the SDK reads that (with or without `meta`) or a bare array of modification records.',
    tag: 'Modifications',
    pathParams: { sessionId: 'The `sessionId` of the online session.' },
    response: ModificationsOfPaymentSchema,
    responseName: 'ModificationsOfPayment',
    status: '200',
    failures: [...EVERY, FAILURES.sessionOfListingNotFound],
    example: { data: { modifications: [refundRecord], meta: META_LAST } },
  },
  {
    operationId: 'listPosPaymentModifications',
    method: 'get',
    path: '/pos/payment/{posPaymentId}/modifications',
    summary: 'Modifications of a POS payment',
    description:
      'The response body of this listing is not shown in the reference. The sandbox answers `data` as `{ modifications, meta }`, shaped like `GET /modifications` (every modification of the payment, one page); the SDK reads that (with or without `meta`) or a bare array of modification records.',
    tag: 'Modifications',
    pathParams: { posPaymentId: 'The `posPaymentId` (`{webcode}-POSX-{timestamp}`, in Test `{webcode}-POSXT-{timestamp}`).' },
    response: ModificationsOfPaymentSchema,
    responseName: 'ModificationsOfPayment',
    status: '200',
    failures: [...EVERY, FAILURES.posPaymentNotFound],
    example: {
      data: { modifications: [{ ...refundRecord, paymentReference: POS_PAYMENT_ID, sessionId: POS_PAYMENT_ID }], meta: META_LAST },
    },
  },
  {
    operationId: 'listModifications',
    method: 'get',
    path: '/modifications',
    summary: 'List all modifications',
    description: 'Further filters of the modifications listing: not shown.',
    tag: 'Modifications',
    query: ListModificationsParamsSchema,
    defaults: { take: 20 },
    response: ModificationListSchema,
    responseName: 'ModificationList',
    status: '200',
    failures: EVERY,
    example: { request: { type: 'refund', status: 'success' }, data: { modifications: [refundRecord], meta: META_LAST } },
  },
  {
    operationId: 'listTerminals',
    method: 'get',
    path: '/pos/terminals',
    summary: 'List terminals',
    description:
      'Only terminals with status `boarded` are returned: all of them with `syncFromProvider=false`, only the connected (online) ones with `true`.',
    tag: 'Terminals',
    query: ListTerminalsParamsSchema,
    defaults: { syncFromProvider: false },
    response: TerminalListSchema,
    responseName: 'TerminalList',
    status: '200',
    failures: EVERY,
    example: {
      request: { syncFromProvider: true },
      data: [
        {
          poiId: 'V400m-TEST-000001',
          status: 'boarded',
          name: 'Terminal Test 1 - Mostrador',
          model: 'V400m',
          createdAt: '2026-01-01T00:00:00.000Z',
          updatedAt: '2026-01-01T00:00:00.000Z',
        },
      ],
    },
  },
  {
    operationId: 'createPosPayment',
    method: 'post',
    path: '/pos/payment',
    summary: 'Send a charge to a terminal',
    description:
      'Synchronous: answers when the terminal has processed the payment or timed out (allow at least 240 seconds). On `timeout`, do not retry at once: resend with the same `Idempotency-Key`, check `GET /pos/payments`, or wait for the AUTHORISATION webhook.',
    tag: 'POS payments',
    body: CreatePosPaymentParamsSchema,
    defaults: { isPreAuth: false },
    response: PosPaymentSchema,
    responseName: 'PosPayment',
    status: '200',
    failures: [...WRITE, FAILURES.terminalBusy, FAILURES.terminal],
    example: {
      request: { poiId: 'V400m-TEST-000001', amount: AMOUNT, description: 'Table 4', customReference: 'order-1042' },
      data: posPayment,
    },
  },
  {
    operationId: 'listPosPayments',
    method: 'get',
    path: '/pos/payments',
    summary: 'List POS payments',
    description:
      'The date format of `created_at_start` and `created_at_end` is not shown; the SDK sends `YYYY-MM-DD HH:MM:SS` (UTC) for a `Date`.',
    tag: 'POS payments',
    query: ListPosPaymentsParamsSchema,
    queryNames: POS_LIST_WIRE_NAMES,
    defaults: { take: 20, order: 'asc' },
    response: PosPaymentListSchema,
    responseName: 'PosPaymentList',
    status: '200',
    failures: EVERY,
    example: { request: { status: 'success', take: 20, order: 'desc' }, data: { posPayments: [posPayment], meta: META_LAST } },
  },
];
