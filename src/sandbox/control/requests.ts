/**
 * The request log in the control API, on the tenant of the key: `GET /_sandbox/{environment}/requests`
 * (filtered, newest first, paged as the other listings), `GET .../requests/{id}` and
 * `DELETE .../requests` (the same filters; all entries of the environment without one); and the
 * three operations of the control document.
 */
import type { Environment } from '../../core/options.js';
import { jsonSchema } from '../../openapi/json-schema.js';
import { notFound } from '../api/context.js';
import { RequestLogEntry, type RequestLogQuery } from '../request-log/schema.js';
import type { RequestLog } from '../request-log/store.js';
import { invalid } from '../responses.js';

/** What the request routes are given: the caller's tenant's log, the environment and the query. */
export interface RequestRouteContext {
  environment: Environment;
  params: string[];
  query: URLSearchParams;
  requests: RequestLog;
}

/** A request route, as the control router's tables hold them. */
export interface RequestRoute {
  method: 'GET' | 'DELETE';
  pattern: RegExp;
  run: (context: RequestRouteContext) => unknown;
}

const FILTERS = ['operation', 'method', 'status', 'idempotencyKey', 'traceId', 'reference', 'since', 'until'] as const;

/** The listing's query as the log's filter: its fields as given, `take` a number. */
function queryOf(params: URLSearchParams): RequestLogQuery {
  const query: RequestLogQuery = {};
  for (const name of FILTERS) {
    const value = params.get(name);
    if (value !== null && value !== '') query[name] = value;
  }
  const take = params.get('take');
  if (take !== null && take !== '') {
    if (!/^\d{1,3}$/.test(take)) throw invalid('take must be an integer from 1 to 100');
    query.take = Number(take);
  }
  const cursor = params.get('cursor');
  if (cursor !== null && cursor !== '') query.cursor = cursor;
  return query;
}

/** Routes under `/_sandbox/{test|live}/`. */
export const REQUEST_ROUTES: readonly RequestRoute[] = [
  { method: 'GET', pattern: /^requests$/, run: (x) => x.requests.list(x.environment, queryOf(x.query)) },
  {
    method: 'GET',
    pattern: /^requests\/([^/]+)$/,
    run: (x) => {
      const entry = x.requests.get(x.params[0] ?? '');
      if (entry?.environment !== x.environment) throw notFound('Request log entry');
      return entry;
    },
  },
  {
    method: 'DELETE',
    pattern: /^requests$/,
    run: (x) => {
      const { take: _take, cursor: _cursor, ...filter } = queryOf(x.query);
      return { deleted: x.requests.clear(x.environment, filter) };
    },
  },
];

/** The query parameters of the listing and of the deletion. */
const FILTER_QUERY = {
  operation: { type: 'string', description: "The Live operation's `operationId` in `/openapi.json`: `createSession`, `refund`, ..." },
  method: { type: 'string', description: 'The HTTP method: `GET`, `POST`, ...' },
  status: { type: 'string', pattern: '^([1-5]xx|\\d{3})$', description: 'A status code (`202`), or a class: `4xx`, `5xx`.' },
  idempotencyKey: { type: 'string', description: 'The `Idempotency-Key` sent.' },
  traceId: { type: 'string', description: "The failure envelope's `traceId`." },
  reference: {
    type: 'string',
    description: 'A session id, payment reference, POS payment id or modification reference the request made or touched.',
  },
  since: { type: 'string', format: 'date-time', description: 'At or after this time (ISO 8601, sandbox clock).' },
  until: { type: 'string', format: 'date-time', description: 'At or before this time (ISO 8601, sandbox clock).' },
};

/** The log's schemas in the control document. */
export function requestLogSchemas(): Record<string, Record<string, unknown>> {
  return { RequestLogEntry: jsonSchema(RequestLogEntry, 'response') };
}

const entryRef = { $ref: '#/components/schemas/RequestLogEntry' };

/** An operation of the control document (the shape of `ControlOperationDoc`, which the document checks its operations against). */
interface RequestOperationDoc {
  operationId: string;
  method: 'get' | 'delete';
  path: string;
  summary: string;
  description?: string;
  tag: 'Requests';
  pathParams?: Record<string, string>;
  query?: Record<string, { type: string; description: string; [keyword: string]: unknown }>;
  data: Record<string, unknown>;
}

/** The request log's operations in the control document. */
export const REQUEST_OPERATIONS: readonly RequestOperationDoc[] = [
  {
    operationId: 'listRequests',
    method: 'get',
    path: '{environment}/requests',
    summary: 'The request log: what each request to the API sent and got back, newest first',
    description:
      "The key's tenant's requests to the service API of this environment, refused ones included, the last 10 000 by default (`--request-log-size`). `X-API-KEY` and other secrets are masked; bodies are kept up to 64 KB.",
    tag: 'Requests',
    query: {
      ...FILTER_QUERY,
      take: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size.' },
      cursor: { type: 'string', description: '`cursor` of the previous page.' },
    },
    data: {
      type: 'object',
      properties: {
        items: { type: 'array', items: entryRef },
        cursor: { type: ['string', 'null'] },
        hasMore: { type: 'boolean' },
        total: { type: 'integer' },
      },
      required: ['items', 'cursor', 'hasMore', 'total'],
    },
  },
  {
    operationId: 'getRequest',
    method: 'get',
    path: '{environment}/requests/{requestId}',
    summary: 'One entry of the request log',
    tag: 'Requests',
    pathParams: { requestId: 'The entry id, `{webcode}-REQ-{n}`.' },
    data: entryRef,
  },
  {
    operationId: 'clearRequests',
    method: 'delete',
    path: '{environment}/requests',
    summary: 'Delete entries of the request log: those matching the filters, all of the environment without one',
    tag: 'Requests',
    query: FILTER_QUERY,
    data: { type: 'object', properties: { deleted: { type: 'integer' } }, required: ['deleted'] },
  },
];
