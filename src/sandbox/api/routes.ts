/** The service's endpoints: method, path and route template, and the operation each runs. */
import type { Environment } from '../../core/options.js';
import type { Answer, Deferred, SandboxApi } from './index.js';

/** What an operation is given of its request, once the pipeline has checked it. */
export interface OperationInput {
  environment: Environment;
  /** The path parameters, decoded. */
  params: string[];
  query: URLSearchParams;
  /** The JSON body of a POST; `{}` for a GET. */
  body: Record<string, unknown>;
  /** The sandbox's own origin, for the links it answers (the payment page). */
  origin: string;
  idempotencyKey: string | null;
}

export interface ApiRoute {
  /** The endpoint's name, as idempotency entries record it. */
  name: string;
  /** The Live operation's `operationId` in `/openapi.json`, the same in both environments (the request log's `operation`). */
  operationId: string;
  method: 'GET' | 'POST';
  /** Method and path template, as the reference names the endpoint: `GET /payment/session/{sessionId}`. */
  template: string;
  pattern: RegExp;
  run: (api: SandboxApi, input: OperationInput) => Answer | Deferred;
}

const param = (input: OperationInput) => input.params[0] ?? '';

/** In the order they are matched: the first whose pattern fits the path is the endpoint. */
export const API_ROUTES: readonly ApiRoute[] = [
  {
    name: 'createSession',
    operationId: 'createSession',
    method: 'POST',
    template: 'POST /payment/session',
    pattern: /^\/payment\/session$/,
    run: (api, input) => api.sessions.create(input.environment, input.body, input.origin),
  },
  {
    name: 'listSessions',
    operationId: 'listSessions',
    method: 'GET',
    template: 'GET /payment/sessions',
    pattern: /^\/payment\/sessions$/,
    run: (api, input) => api.sessions.list(input.environment, input.query),
  },
  {
    name: 'sessionModifications',
    operationId: 'listSessionModifications',
    method: 'GET',
    template: 'GET /payment/session/{sessionId}/modifications',
    pattern: /^\/payment\/session\/([^/]+)\/modifications$/,
    run: (api, input) => api.modifications.of(input.environment, 'session', param(input)),
  },
  {
    name: 'retrieveSession',
    operationId: 'retrieveSession',
    method: 'GET',
    template: 'GET /payment/session/{sessionId}',
    pattern: /^\/payment\/session\/([^/]+)$/,
    run: (api, input) => api.sessions.retrieve(input.environment, param(input)),
  },
  ...(['refund', 'capture', 'cancel', 'extend'] as const).map(
    (type): ApiRoute => ({
      name: type,
      operationId: type,
      method: 'POST',
      template: `POST /payment/${type}`,
      pattern: new RegExp(`^/payment/${type}$`),
      run: (api, input) => api.modifications.request(input.environment, type, input.body),
    }),
  ),
  {
    name: 'posModifications',
    operationId: 'listPosPaymentModifications',
    method: 'GET',
    template: 'GET /pos/payment/{posPaymentId}/modifications',
    pattern: /^\/pos\/payment\/([^/]+)\/modifications$/,
    run: (api, input) => api.modifications.of(input.environment, 'pos', param(input)),
  },
  {
    name: 'listModifications',
    operationId: 'listModifications',
    method: 'GET',
    template: 'GET /modifications',
    pattern: /^\/modifications$/,
    run: (api, input) => api.modifications.list(input.environment, input.query),
  },
  {
    name: 'listTerminals',
    operationId: 'listTerminals',
    method: 'GET',
    template: 'GET /pos/terminals',
    pattern: /^\/pos\/terminals$/,
    run: (api, input) => api.listTerminals(input.environment, input.query),
  },
  {
    name: 'createPosPayment',
    operationId: 'createPosPayment',
    method: 'POST',
    template: 'POST /pos/payment',
    pattern: /^\/pos\/payment$/,
    run: (api, input) => api.posPayments.create(input.environment, input.body, input.idempotencyKey),
  },
  {
    name: 'listPosPayments',
    operationId: 'listPosPayments',
    method: 'GET',
    template: 'GET /pos/payments',
    pattern: /^\/pos\/payments$/,
    run: (api, input) => api.posPayments.list(input.environment, input.query),
  },
];
