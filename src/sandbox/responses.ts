/** JSON answers in the service's envelopes, the failures they carry, and the sandbox's own failure codes. */
import { JsonAnswer } from './answer.js';

export const SANDBOX_BANNER = 'payment-service-sdk sandbox: not the real payment service, no money moves';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'x-payment-sandbox': SANDBOX_BANNER };

/**
 * Codes the sandbox answers with where the reference shows none, all in 19000-19999 so that none
 * can be mistaken for a documented one (docs/sandbox.md lists them, with the reasons).
 */
export const SANDBOX_CODES = {
  /** 403: the client's address is outside the key's allow-list. */
  ipNotAllowed: 19403,
  /** 404: no such endpoint, page or record. */
  notFound: 19404,
  /** 405: the endpoint exists with another method. */
  methodNotAllowed: 19405,
  /** 409: `Idempotency-Key` reused with a different request body. */
  idempotencyBodyMismatch: 19409,
  /** 409: `Idempotency-Key` already used on a different endpoint. */
  idempotencyEndpointMismatch: 19410,
  /** 409: a control action the record's state does not allow (paying a session that is not pending, say). */
  actionNotAllowed: 19411,
  /** 409: a tenant with the webcode asked for exists already. */
  tenantExists: 19412,
  /** 413: the request body is larger than `maxBodyBytes`. */
  bodyTooLarge: 19413,
  /** 415: a POST whose `Content-Type` is not JSON. */
  unsupportedMediaType: 19415,
  /** 421: the request's `Host` does not name this sandbox (a DNS-rebinding page, say). */
  misdirected: 19421,
  /** 431: the URL or the headers are too long. */
  headersTooLarge: 19431,
  /** 500: a fault of the sandbox itself. */
  internal: 19500,
  /** 503: the sandbox is stopping (a request that came in, or a POS payment still at its terminal, as it stopped). */
  stopping: 19503,
  /** 429, 500, 502, 503, 504: an error injected by a fault rule (`X-Sandbox-Fault` names it). */
  injectedFault: 19600,
} as const;

/** A failure the service would answer: status, code, message. */
export class ServiceFailure extends Error {
  readonly status: number;
  readonly code: number;

  constructor(status: number, code: number, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Raised for a request that breaks a documented rule, with the documented code. */
export function invalid(message: string, code = 12001): ServiceFailure {
  return new ServiceFailure(400, code, message);
}

export function successBody(data: unknown): string {
  return JSON.stringify({ success: true, data });
}

export function failureBody(failure: ServiceFailure, traceId: string): string {
  return JSON.stringify({
    success: false,
    error: { message: failure.message, code: failure.code, statusCode: failure.status, traceId },
  });
}

/** A JSON answer with the sandbox's headers (see {@link JsonAnswer}). */
export function jsonResponse(status: number, body: string, extra?: Record<string, string>): JsonAnswer {
  return new JsonAnswer(status, extra === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...extra }, body);
}

/** A success answer: `text` is {@link successBody} of `data`, made by the caller (which may store it too). */
export function successResponse(status: number, data: unknown, text = successBody(data)): JsonAnswer {
  return new JsonAnswer(status, JSON_HEADERS, text, data);
}

/** The answer to a key the sandbox does not know, or no longer knows (its tenant was removed). */
export function unknownKey(): ServiceFailure {
  return new ServiceFailure(403, 11008, 'API key without permission for this resource');
}
