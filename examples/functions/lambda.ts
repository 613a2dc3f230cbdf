/**
 * An AWS Lambda handler behind API Gateway (REST or HTTP API, payload 1.0 or 2.0) for a till's POS
 * charges: `POST /orders/{id}/charge` and `GET /orders/{id}/status`, the flow of ./pos-charge.ts.
 *
 * API Gateway cuts a request at 29 s, whatever the function's timeout; the function itself stops at
 * its timeout. `context.getRemainingTimeInMillis()` says how much of the function's time is left,
 * and the request's own start (`requestContext.requestTimeEpoch` / `timeEpoch`) how much of API
 * Gateway's: the deadline is the earlier of the two, less `marginMs` to save the outcome and answer.
 * The SDK stops waiting 100 ms before it and throws `PosPaymentPendingError`; the answer is then
 * 202 and the cashier's screen polls the status route.
 *
 * The client comes from PAYMENT_SERVICE_API_KEY, PAYMENT_SERVICE_WEBCODE, PAYMENT_SERVICE_BASE_URL
 * (and PAYMENT_SERVICE_ENVIRONMENT); the orders from `ordersStore()` below: your database. Only
 * the types of the event and context that the handler reads are declared here (no `aws-lambda`
 * types needed). Why a retry or a status check never charges twice: see ./pos-charge.ts (every
 * later step resends the charge saved before sending, with its own Idempotency-Key).
 */
import { PaymentClient } from 'payment-service-sdk';
import { type Answer, answerBody, answering, type ChargeContext, chargeOrder, orderStatus, route } from './pos-charge.ts';
import { sqliteOrderStore } from './sqlite-order-store.ts';

/** The fields of an API Gateway proxy event this handler reads (payload 1.0 and 2.0). */
export interface ApiGatewayEvent {
  httpMethod?: string;
  path?: string;
  rawPath?: string;
  requestContext?: { requestTimeEpoch?: number; timeEpoch?: number; http?: { method?: string } };
}

/** The part of the Lambda context this handler reads. */
export interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

export interface LambdaResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** API Gateway's integration timeout. */
export const API_GATEWAY_LIMIT_MS = 29_000;

export interface LambdaOptions extends Omit<ChargeContext, 'deadline'> {
  /** Kept free before the limit, to save the outcome and answer. Default 1 000 ms. */
  marginMs?: number | undefined;
  /** API Gateway's timeout (default 29 s). */
  gatewayLimitMs?: number | undefined;
}

/** The handler, for a client and a store of your choosing (the tests give theirs). */
export function createLambdaHandler(options: LambdaOptions) {
  const { marginMs = 1_000, gatewayLimitMs = API_GATEWAY_LIMIT_MS, ...charge } = options;
  return async (event: ApiGatewayEvent, context: LambdaContext): Promise<LambdaResult> => {
    const now = Date.now();
    const requestStart = event.requestContext?.requestTimeEpoch ?? event.requestContext?.timeEpoch ?? now;
    const limit = Math.min(now + context.getRemainingTimeInMillis(), requestStart + gatewayLimitMs);
    const deadline = limit - marginMs;
    const method = event.requestContext?.http?.method ?? event.httpMethod ?? '';
    const matched = route(method, event.rawPath ?? event.path ?? '');
    const reply = (result: Answer): LambdaResult => ({
      statusCode: result.status,
      headers: { 'content-type': 'application/json' },
      body: answerBody(result),
    });
    if (!matched) return { statusCode: 404, headers: { 'content-type': 'application/json' }, body: '{"status":"not-found"}' };
    const { action, orderId } = matched;
    const run = action === 'charge' ? chargeOrder : orderStatus;
    return reply(await answering(orderId, () => run({ ...charge, deadline }, orderId)));
  };
}

let handle: ReturnType<typeof createLambdaHandler> | undefined;

/** The Lambda's entry point (`handler` in the function's settings). The client and store are made on the first invocation. */
export const handler = (event: ApiGatewayEvent, context: LambdaContext): Promise<LambdaResult> => {
  // Your database goes here: an `OrderStore` every instance reaches (DynamoDB, PostgreSQL...). A
  // file in /tmp, as below, is each instance's own: enough to try the handler, not for production.
  handle ??= createLambdaHandler({ client: new PaymentClient(), store: sqliteOrderStore(process.env.ORDERS_DB ?? '/tmp/orders.db') });
  return handle(event, context);
};
