import type { CreatePosPaymentParams, PosPayment } from '../schemas/pos.js';

/**
 * Every error the SDK throws. The tree is flat enough to `instanceof` on the class that matters
 * (`TerminalBusyError`, `IdempotencyConflictError`) and deep enough to catch a family
 * (`ApiError`, `ConflictError`) at once.
 */

/** Where a failed call was going: attached to every error raised by a request. */
export interface RequestContext {
  /** HTTP method of the call. */
  method?: string | undefined;
  /** Request path without the query string (the query carries no secret, but stays out of logs). */
  path?: string | undefined;
  /** The `Idempotency-Key` the call sent, for writes. Reuse it to resume the same logical attempt. */
  idempotencyKey?: string | undefined;
  /** How many attempts were made before this error was thrown. */
  attempts?: number | undefined;
}

/** Documented service error codes. */
export const ErrorCode = {
  /** 400: missing required field or invalid value (also an unknown Test `poiId`). */
  INVALID_REQUEST: 12001,
  /** 400: `deliverAt` is not ISO 8601. */
  INVALID_DELIVER_AT: 12002,
  /** 400: `countryCode` has an invalid format. */
  INVALID_COUNTRY_CODE: 12006,
  /** 400: the country is not supported. */
  COUNTRY_NOT_SUPPORTED: 12009,
  /** 403: the API key lacks permission, or `webcode` does not match the key. */
  PERMISSION_DENIED: 11008,
  /** 502: the terminal could not be reached (for example the offline Test terminal). */
  TERMINAL_COMMUNICATION: 13004,
  /** 409: another payment is in progress on the terminal. */
  TERMINAL_BUSY: 13005,
} as const;

/** A documented service error code. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Base class of everything the SDK throws. */
export class PaymentServiceError extends Error {
  override name = 'PaymentServiceError';
  /** HTTP method of the request that failed, when a request was made. */
  method: string | undefined;
  /** Path of the request that failed, without query string. */
  path: string | undefined;
  /** The `Idempotency-Key` sent by the failed write, if any. */
  idempotencyKey: string | undefined;
  /** Number of attempts made, when a request was made. */
  attempts: number | undefined;

  constructor(message: string, options?: { cause?: unknown; context?: RequestContext }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    const context = options?.context;
    this.method = context?.method;
    this.path = context?.path;
    this.idempotencyKey = context?.idempotencyKey;
    this.attempts = context?.attempts;
  }

  /** Fills in request details the layer that created the error did not know. */
  withContext(context: RequestContext): this {
    this.method ??= context.method;
    this.path ??= context.path;
    this.idempotencyKey ??= context.idempotencyKey;
    if (context.attempts !== undefined) this.attempts = context.attempts;
    return this;
  }
}

/** A client option is missing or malformed. Thrown by the constructor. */
export class ConfigurationError extends PaymentServiceError {
  override name = 'ConfigurationError';
  /** The option at fault, for example `baseUrl`. */
  readonly option: string;

  constructor(option: string, message: string) {
    super(message);
    this.option = option;
  }
}

/** One problem found in a request or a response: where, and what. */
export interface ValidationIssue {
  /** Field path, for example `amount.value`; empty for the whole object. */
  path: string;
  /** What is wrong with it. */
  message: string;
}

function listIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ');
}

/** A request broke a documented rule. Nothing was sent. */
export class RequestValidationError extends PaymentServiceError {
  override name = 'RequestValidationError';
  /** Every problem found, each with its field path. */
  readonly issues: readonly ValidationIssue[];

  constructor(issues: readonly ValidationIssue[], context?: RequestContext) {
    super(`Invalid request, nothing was sent: ${listIssues(issues)}`, context ? { context } : undefined);
    this.issues = issues;
  }
}

/** The service answered something the SDK cannot rely on. */
export class ResponseValidationError extends PaymentServiceError {
  override name = 'ResponseValidationError';
  /** The raw response body, as text. */
  readonly body: string;
  /** HTTP status of the response. */
  readonly status: number | undefined;
  /** What did not match. */
  readonly issues: readonly ValidationIssue[];

  constructor(message: string, details: { body: string; status?: number; issues?: readonly ValidationIssue[]; context?: RequestContext }) {
    const issues = details.issues ?? [];
    super(issues.length ? `${message}: ${listIssues(issues)}` : message, details.context ? { context: details.context } : undefined);
    this.body = details.body;
    this.status = details.status;
    this.issues = issues;
  }
}

/** No response arrived: connection refused or reset, DNS or TLS failure. The original error is `cause`. */
export class ConnectionError extends PaymentServiceError {
  override name = 'ConnectionError';
  /**
   * True when the request is known not to have reached the service (refused, DNS failure),
   * so a resend cannot duplicate anything.
   */
  readonly notSent: boolean;
  /** The system error code under the failure, such as `ECONNREFUSED` or `ECONNRESET`, when there is one. */
  readonly code: string | undefined;
  /** True when the response had begun (status and headers arrived) and its body was cut off. */
  readonly afterResponse: boolean;

  constructor(
    message: string,
    options: { cause?: unknown; notSent: boolean; code?: string | undefined; afterResponse?: boolean; context?: RequestContext },
  ) {
    super(message, options);
    this.notSent = options.notSent;
    this.code = options.code;
    this.afterResponse = options.afterResponse ?? false;
  }
}

/** No complete response arrived within the timeout of an attempt. */
export class TimeoutError extends PaymentServiceError {
  override name = 'TimeoutError';
  /** The per-attempt timeout that elapsed, in milliseconds. */
  readonly timeoutMs: number;

  constructor(timeoutMs: number, context?: RequestContext) {
    super(`No response within ${timeoutMs} ms`, context ? { context } : undefined);
    this.timeoutMs = timeoutMs;
  }
}

/** Fields of an {@link ApiError}, as read from the failure envelope and the response. */
export interface ApiErrorDetails {
  /** HTTP status. */
  status: number;
  /** Service error code, when the failure envelope carried one. */
  code?: number | undefined;
  /** Service trace id, to quote to support. */
  traceId?: string | undefined;
  /** Raw response body, as text. */
  body: string;
  /** Response headers. */
  headers?: Headers | undefined;
  /** Request details. */
  context?: RequestContext | undefined;
}

/** The service answered with a failure envelope or an error status. */
export class ApiError extends PaymentServiceError {
  override name = 'ApiError';
  /** HTTP status. */
  readonly status: number;
  /** Service error code (see {@link ErrorCode}), when the failure envelope carried one. */
  readonly code: number | undefined;
  /** Service trace id, to quote to support. */
  readonly traceId: string | undefined;
  /** Raw response body, as text. */
  readonly body: string;
  /** Response headers. Not enumerable, so logs of the error stay short. */
  declare readonly headers: Headers | undefined;

  constructor(message: string, details: ApiErrorDetails) {
    super(message, details.context ? { context: details.context } : undefined);
    this.status = details.status;
    this.code = details.code;
    this.traceId = details.traceId;
    this.body = details.body;
    Object.defineProperty(this, 'headers', { value: details.headers, enumerable: false });
  }
}

/** 400: the service rejected a field (codes 12001, 12002, 12006, 12009). */
export class InvalidRequestError extends ApiError {
  override name = 'InvalidRequestError';
}

/**
 * 401: the service did not accept the API key at all (missing, unknown, revoked or regenerated).
 * The reference shows no 401; a gateway in front of the service may answer one.
 */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}

/** 403: the key lacks permission or the webcode does not match it (11008), or the IP is not allowed (no code). */
export class PermissionDeniedError extends ApiError {
  override name = 'PermissionDeniedError';
}

/**
 * 404: the record the request names does not exist in the key's environment and webcode (an
 * unknown `sessionId`, `paymentReference` or `posPaymentId`), or no such path. The reference shows
 * no 404; the sandbox answers 404 with its code 19404 and a message naming the field and the value.
 */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}

/** 409: the request conflicts with the service's state. */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}

/** Why an `Idempotency-Key` was refused. */
export type IdempotencyConflictReason = 'body-mismatch' | 'endpoint-mismatch';

/** 409: the `Idempotency-Key` was already used with another body or on another endpoint. Use a new key. */
export class IdempotencyConflictError extends ConflictError {
  override name = 'IdempotencyConflictError';
  /** `body-mismatch`: same key, different body; `endpoint-mismatch`: same key, other endpoint. */
  readonly reason: IdempotencyConflictReason;

  constructor(message: string, details: ApiErrorDetails & { reason: IdempotencyConflictReason }) {
    super(message, details);
    this.reason = details.reason;
  }
}

/** 409 / 13005: another payment is in progress on the terminal. Nothing was charged. */
export class TerminalBusyError extends ConflictError {
  override name = 'TerminalBusyError';
}

/** 429: too many requests. */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
  /** Delay the service asked for in `Retry-After`, in milliseconds, when it gave one. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: ApiErrorDetails & { retryAfterMs?: number | undefined }) {
    super(message, details);
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** 502 / 13004: the service could not talk to the terminal (disconnected, offline). */
export class TerminalCommunicationError extends ApiError {
  override name = 'TerminalCommunicationError';
}

/** Any other 5xx. */
export class ServerError extends ApiError {
  override name = 'ServerError';
}

/**
 * A POS charge's state, as plain JSON: what `pos.preparePayment` makes before anything is sent,
 * and what `PosPaymentPendingError` carries once it may have left. Store it with the order and
 * pass it to `pos.createPayment(state)`, `pos.checkPayment(state)`, `pos.resumeRecovery(state)`
 * or `followUps.track({ pos: state })`, in this process or another: each finishes the same
 * charge (same key, same bytes), never a second one.
 */
export interface PosRecoveryState {
  /** The charge's `Idempotency-Key`; resending with it reads the stored response and never charges again. */
  idempotencyKey?: string | undefined;
  /** The charge's parameters, resent byte for byte with the same key. */
  params?: CreatePosPaymentParams | undefined;
  /** The payment's id, once known. */
  posPaymentId?: string | undefined;
  /**
   * When the charge was prepared or first sent (ISO 8601): no record of it is older. It narrows the
   * listing window, and tells this charge from an earlier attempt alike (same terminal, amount and reference).
   */
  sentAt?: string | undefined;
}

/** Options of `PosPaymentPendingError.resume()`. */
export interface ResumeOptions {
  /** First interval between polls, in ms. Default 2 000. */
  pollIntervalMs?: number | undefined;
  /** Give up after this long, in ms. Default 300 000. */
  maxWaitMs?: number | undefined;
  /** Wait before the first step, in ms. Default 0. */
  initialDelayMs?: number | undefined;
  /** Resolves with an AUTHORISATION webhook, as a hint that ends a wait early. */
  webhook?: PromiseLike<unknown> | undefined;
  /** Cancels the resumed wait; it rejects with a new `PosPaymentPendingError` whose `cause` is the signal's reason. */
  signal?: AbortSignal | undefined;
  /** When the resumed wait must have returned (a `Date` or epoch ms), as `pos.resumeRecovery`'s `deadline`. */
  deadline?: Date | number | undefined;
}

/** Why a recovery stopped before `maxWaitMs`, in words: the failure's class and message, never a secret. */
function stopReason(cause: unknown): string {
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
  return `${typeof cause === 'string' ? cause : typeof cause}`;
}

/**
 * The outcome of a POS payment is unknown, and the SDK stopped looking: recovery gave up after
 * `maxWaitMs`, or a failure it cannot outlive stopped it (a 401 or 403 on the listing, the call's
 * `signal`; that failure is `cause`). Nothing was charged twice. The charge may have happened: call
 * `resume()` later, or save `state` and call `client.pos.resumeRecovery(state)` from another
 * process; either finishes the same charge (same `Idempotency-Key`, same bytes) and never starts
 * another. `pos.createPayment` throws no other error once its charge may have left, except a
 * refusal of the charge by the service, which means nothing was charged (a 400, a 409, a 502 with
 * 13004), and which carries the `idempotencyKey` too.
 */
export class PosPaymentPendingError extends PaymentServiceError {
  override name = 'PosPaymentPendingError';
  /** The payment's id, when it became known. */
  readonly posPaymentId: string | undefined;
  /** The last record seen (status `timeout` or `pending`), if any. */
  readonly lastKnown: PosPayment | undefined;
  /** Everything needed to continue, as plain JSON. */
  readonly state: PosRecoveryState;
  readonly #resume: (options?: ResumeOptions) => Promise<PosPayment & { recovered?: true }>;

  /**
   * @param options.cause - The failure that stopped the recovery before `maxWaitMs` (an error, or
   *   the reason of the call's `signal`); none when `maxWaitMs` passed.
   */
  constructor(
    state: PosRecoveryState,
    lastKnown: PosPayment | undefined,
    resume: (options?: ResumeOptions) => Promise<PosPayment & { recovered?: true }>,
    options?: { cause?: unknown },
  ) {
    const stopped = options && 'cause' in options ? ` Recovery stopped on ${stopReason(options.cause)}.` : '';
    super(
      `The POS payment ${state.posPaymentId ?? '(id unknown)'} has no final status yet; nothing was charged twice.${stopped} Call resume() later.`,
      { context: { idempotencyKey: state.idempotencyKey }, ...(options && 'cause' in options ? { cause: options.cause } : {}) },
    );
    this.posPaymentId = state.posPaymentId;
    this.lastKnown = lastKnown;
    this.state = state;
    this.#resume = resume;
  }

  /** Continues the same recovery: resolves with the final payment, or throws a new `PosPaymentPendingError`. */
  resume(options?: ResumeOptions): Promise<PosPayment & { recovered?: true }> {
    return this.#resume(options);
  }
}

/**
 * Why the `data` parameter of a redirect was refused: `missing`; `malformed` (not a JWS or JWE, or
 * an unexpected claim); `signature` or `decryption` (altered, or made with another secret);
 * `algorithm` (not allowed); `expired`; `not-before`; `too-large` (longer than
 * `REDIRECT_TOKEN_MAX_CHARS`, refused before any cryptography).
 */
export type RedirectDataErrorReason =
  | 'missing'
  | 'malformed'
  | 'signature'
  | 'algorithm'
  | 'expired'
  | 'not-before'
  | 'decryption'
  | 'too-large';

/** The redirect's `data` token is missing, malformed, tampered, expired or made with another key. Never includes the secret. */
export class RedirectDataError extends PaymentServiceError {
  override name = 'RedirectDataError';
  /** What was wrong with the token. */
  readonly reason: RedirectDataErrorReason;

  constructor(reason: RedirectDataErrorReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** One field of the redirect data that differs from what the merchant expected. */
export interface RedirectMismatch {
  /** The field, for example `amount`. */
  field: string;
  /** What the merchant expected. */
  expected: unknown;
  /** What the token says. */
  actual: unknown;
}

/** The redirect data decoded fine but does not match the order: the URL may have been manipulated. */
export class RedirectMismatchError extends PaymentServiceError {
  override name = 'RedirectMismatchError';
  /** Every field that differs. */
  readonly mismatches: readonly RedirectMismatch[];
  /** The names of the fields that differ. */
  readonly fields: readonly string[];

  constructor(mismatches: readonly RedirectMismatch[]) {
    super(`The redirect data does not match the expected ${mismatches.map((mismatch) => mismatch.field).join(', ')}`);
    this.mismatches = mismatches;
    this.fields = mismatches.map((mismatch) => mismatch.field);
  }
}

/** A webhook body is not a JSON object of the form `{ event_code, data }`. */
export class WebhookParseError extends PaymentServiceError {
  override name = 'WebhookParseError';
}

/** Why a webhook could not be confirmed against the API. */
export type WebhookNotConfirmedReason = 'not-found' | 'mismatch' | 'unsupported';

/** The API does not confirm what a webhook says (deliveries are not signed, so this matters). */
export class WebhookNotConfirmedError extends PaymentServiceError {
  override name = 'WebhookNotConfirmedError';
  /** `not-found`: no such record within the scan; `mismatch`: the record differs; `unsupported`: no way to check this event. */
  readonly reason: WebhookNotConfirmedReason;
  /** The record the API returned, when one was found. */
  readonly record: unknown;

  constructor(reason: WebhookNotConfirmedReason, message: string, record?: unknown) {
    super(message);
    this.reason = reason;
    this.record = record;
  }
}
