/**
 * The request log's control routes, declared as the others (route.ts), on the tenant of the key:
 * `GET /_sandbox/{environment}/requests` (filtered, newest first, paged as the other listings),
 * `GET .../requests/{requestId}` and `DELETE .../requests` (the same filters; every entry of the
 * environment without one). `sandbox.requests` runs the same routes.
 */
import * as z from 'zod/mini';
import { notFound } from '../api/context.js';
import { ISO_DATE_TIME, isDateTime, RequestLogEntry } from '../request-log/schema.js';
import { controlRoute } from './route.js';
import { pageOf, queryInteger, whole } from './schemas.js';

const text = (description: string) => z.optional(z.string().check(z.describe(description)));
const STATUS = 'status must be a status code (202) or a class (4xx, 5xx)';

/** An instant of the sandbox clock: an ISO 8601 date-time with its offset, as the document's `date-time` says (RFC 3339). */
function instant(field: string, description: string) {
  const message = `${field} must be an ISO 8601 date-time (2026-01-31T12:00:00Z)`;
  return z.optional(
    z
      .string({ error: message })
      .check(z.regex(ISO_DATE_TIME, message), z.refine(isDateTime, message), z.meta({ format: 'date-time', description })),
  );
}

/** The filters of the listing and of the deletion, as query parameters. */
export const RequestFilterQuery = z.object({
  operation: text("The Live operation's `operationId` in `/openapi.json`: `createSession`, `refund`, ..."),
  method: text('The HTTP method: `GET`, `POST`, ...'),
  status: z.optional(
    z.string({ error: STATUS }).check(z.regex(/^([1-5]xx|\d{3})$/, STATUS), z.describe('A status code (`202`), or a class: `4xx`, `5xx`.')),
  ),
  idempotencyKey: text('The `Idempotency-Key` sent.'),
  traceId: text("The failure envelope's `traceId`."),
  reference: text('A session id, payment reference, POS payment id or modification reference the request made or touched.'),
  since: instant('since', 'At or after this time (ISO 8601, sandbox clock).'),
  until: instant('until', 'At or before this time (ISO 8601, sandbox clock).'),
});

export const REQUEST_ROUTES = {
  listRequests: controlRoute({
    method: 'get',
    path: '{environment}/requests',
    summary: 'The request log: what each request to the API sent and got back, newest first',
    description:
      "The key's tenant's requests to the service API of this environment, refused ones included, the last 10 000 by default (`--request-log-size`). `X-API-KEY` and other secrets are masked; bodies are kept up to 64 KB.",
    tag: 'Requests',
    query: z.extend(RequestFilterQuery, {
      take: z.optional(queryInteger(1, 100, 20, 'take must be an integer from 1 to 100').check(z.describe('Page size.'))),
      cursor: z.optional(
        z
          .string()
          .check(
            z.regex(/^(d\d{1,15})?$/, 'cursor is not valid: pass the cursor of the previous page'),
            z.describe('`cursor` of the previous page.'),
          ),
      ),
    }),
    answer: pageOf(RequestLogEntry),
    run: (c, { query }) => c.tenant.requests.list(c.environment, query),
  }),
  getRequest: controlRoute({
    method: 'get',
    path: '{environment}/requests/{requestId}',
    summary: 'One entry of the request log',
    tag: 'Requests',
    params: z.object({ requestId: z.string().check(z.describe('The entry id, `{webcode}-REQ-{n}`.')) }),
    answer: RequestLogEntry,
    run: (c, { params }) => {
      const entry = c.tenant.requests.get(params.requestId);
      if (entry?.environment !== c.environment) throw notFound('Request log entry');
      return entry;
    },
  }),
  clearRequests: controlRoute({
    method: 'delete',
    path: '{environment}/requests',
    summary: 'Delete entries of the request log: those matching the filters, all of the environment without one',
    tag: 'Requests',
    query: RequestFilterQuery,
    answer: z.object({ deleted: whole }),
    run: (c, { query }) => ({ deleted: c.tenant.requests.clear(c.environment, query) }),
  }),
} as const;
