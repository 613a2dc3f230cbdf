/** JSON responses in the service's envelopes. */

export const SANDBOX_BANNER = 'payment-service-sdk sandbox: not the real payment service, no money moves';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'x-payment-sandbox': SANDBOX_BANNER };

/** A failure the service would answer: status, optional code, message. */
export class ServiceFailure extends Error {
  readonly status: number;
  readonly code: number | undefined;

  constructor(status: number, code: number | undefined, message: string) {
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
    error: { message: failure.message, ...(failure.code === undefined ? {} : { code: failure.code }), statusCode: failure.status, traceId },
  });
}

export function jsonResponse(status: number, body: string, extra?: Record<string, string>): Response {
  return new Response(body, { status, headers: { ...JSON_HEADERS, ...extra } });
}

export function htmlResponse(status: number, html: string, extra?: Record<string, string>): Response {
  return new Response(html, {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'x-payment-sandbox': SANDBOX_BANNER, 'cache-control': 'no-store', ...extra },
  });
}
