/**
 * The request log's shapes: an entry (what one request to the service API sent and got back), the
 * filter of its listings, and the page they answer. The control API, the typed `sandbox.requests`
 * methods, the CLI's `--format json` and the dashboard all show entries in exactly this shape.
 */
import * as z from 'zod/mini';

/** Why a request was refused: the field at fault (`''` when the request as a whole was) and the message. */
export const RequestLogIssue = z.object({ path: z.string(), message: z.string() });
/** Why a request was refused: the field at fault (`''` when the request as a whole was) and the message. */
export type RequestLogIssue = z.infer<typeof RequestLogIssue>;

/** The records a request made or touched, by kind. */
export const RequestLogReferences = z.object({
  sessionIds: z.array(z.string()),
  paymentReferences: z.array(z.string()),
  posPaymentIds: z.array(z.string()),
  /** Refund, capture, cancel and extend operations (`operationReference`). */
  modificationReferences: z.array(z.string()),
});
/** The records a request made or touched, by kind. */
export type RequestLogReferences = z.infer<typeof RequestLogReferences>;

/** One request to the service API, as received and as answered. */
export const RequestLogEntry = z.object({
  /** `{webcode}-REQ-{n}`: the webcode of the log it is kept in, and a number that increases and is never given out twice. */
  id: z.string(),
  /** When it was received, ISO 8601 in UTC, by the sandbox clock. */
  at: z.string(),
  environment: z.enum(['test', 'live']),
  /** The webcode of the tenant it was made to; `null` when neither its key nor its `webcode` names one. */
  tenant: z.nullable(z.string()),
  method: z.string(),
  /** The endpoint's template, `POST /payment/refund`; `null` when no endpoint matched. */
  route: z.nullable(z.string()),
  /** The Live operation's `operationId` in `/openapi.json` (`refund`), in both environments; `null` when no endpoint matched. */
  operation: z.nullable(z.string()),
  /** The path as received, without the query. */
  path: z.string(),
  /** The query parameters; a repeated one has all its values, in order. */
  query: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
  /** Header names in lower case; `x-api-key`, `authorization` and other secrets masked (a prefix and the last four characters). */
  requestHeaders: z.record(z.string(), z.string()),
  /** The body as received, as text, up to 64 KB; `null` when there was none. */
  requestBody: z.nullable(z.string()),
  requestBodyTruncated: z.boolean(),
  idempotencyKey: z.nullable(z.string()),
  /** An idempotent replay: the stored answer of an earlier request with the same key was sent again. */
  replayed: z.boolean(),
  /** The HTTP status answered; `0` when a fault rule reset the connection and nothing was answered. */
  status: z.number(),
  /** The body as answered, as text, up to 64 KB; `null` when there was none. */
  responseBody: z.nullable(z.string()),
  responseBodyTruncated: z.boolean(),
  /** The failure envelope's `traceId`; `null` for a success. */
  traceId: z.nullable(z.string()),
  durationMs: z.number(),
  /** The id of the fault rule that changed the answer, or `null`. */
  faultRule: z.nullable(z.string()),
  references: RequestLogReferences,
  /** Why it was refused (a 4xx); empty otherwise. */
  issues: z.array(RequestLogIssue),
});
/** One request to the service API, as received and as answered. */
export type RequestLogEntry = z.infer<typeof RequestLogEntry>;

/** `200`, or a class: `4xx`, `5xx` (and `2xx`, `3xx`). */
const STATUS_MESSAGE = 'must be a status code (202) or a class (4xx, 5xx)';
export const StatusFilter = z.union(
  [
    z
      .number({ error: STATUS_MESSAGE })
      .check(z.int({ error: STATUS_MESSAGE }), z.gte(0, { error: STATUS_MESSAGE }), z.lte(599, { error: STATUS_MESSAGE })),
    z.string().check(z.regex(/^([1-5]xx|\d{3})$/, { error: STATUS_MESSAGE })),
  ],
  { error: STATUS_MESSAGE },
);

/** An ISO 8601 date-time with its offset, as RFC 3339 (JSON Schema's `date-time`) writes it: `2026-01-31T12:00:00Z`, `...T12:00:00.250+01:00`. */
export const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Whether a text of {@link ISO_DATE_TIME}'s form names a real instant (no 31 February, no hour 25). */
export function isDateTime(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})/.exec(text);
  if (!match || Number.isNaN(Date.parse(text.toUpperCase()))) return false;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 61;
}

/** When, by the sandbox clock: an ISO 8601 date-time (as the control API's `since` and `until` take it), or a `Date`. */
const Instant = z.union([
  z
    .string()
    .check(z.refine((text) => ISO_DATE_TIME.test(text) && isDateTime(text), 'must be an ISO 8601 date-time (2026-01-31T12:00:00Z)')),
  z.date(),
]);

/** What the listings of the log filter on; every field is optional, and all given must match. */
export const RequestLogFilter = z.object({
  /** The Live `operationId`: `createSession`, `refund`, ... */
  operation: z.optional(z.string()),
  method: z.optional(z.string()),
  status: z.optional(StatusFilter),
  idempotencyKey: z.optional(z.string()),
  traceId: z.optional(z.string()),
  /** A session id, payment reference, POS payment id or modification reference the request made or touched. */
  reference: z.optional(z.string()),
  /** At or after this time. */
  since: z.optional(Instant),
  /** At or before this time. */
  until: z.optional(Instant),
});
/** What the listings of the log filter on; every field is optional, and all given must match. */
export type RequestLogFilter = z.infer<typeof RequestLogFilter>;

/** A filter with the paging of a listing (`take` 1 to 100, default 20; `cursor` of the page before). */
export const RequestLogQuery = z.extend(RequestLogFilter, {
  take: z.optional(z.number().check(z.int(), z.gte(1), z.lte(100))),
  cursor: z.optional(z.string()),
});
/** A filter with the paging of a listing. */
export type RequestLogQuery = z.infer<typeof RequestLogQuery>;

/** One page of the log, newest first; `cursor` is `null` on the last page. */
export interface RequestLogPage {
  items: RequestLogEntry[];
  cursor: string | null;
  hasMore: boolean;
  total: number;
}

/** The typed methods' filter: the listing's, with the environment (default `test`) and the tenant (a webcode; default the sandbox's own). */
export const SandboxRequestFilter = z.extend(RequestLogQuery, {
  environment: z.optional(z.enum(['test', 'live'])),
  tenant: z.optional(z.string()),
});
/** The typed methods' filter. */
export type SandboxRequestFilter = z.infer<typeof SandboxRequestFilter>;

/** Where a tenant's log is kept: each method acts on one environment. */
export interface RequestLogStore {
  /** Newest first, a page at a time. */
  list(environment: 'test' | 'live', query?: RequestLogQuery): RequestLogPage;
  /** An entry of either environment by id; `undefined` when there is none. */
  get(id: string): RequestLogEntry | undefined;
  count(environment: 'test' | 'live', filter?: RequestLogFilter): number;
  /** Deletes the matching entries (all of the environment without a filter); how many were deleted. */
  clear(environment: 'test' | 'live', filter?: RequestLogFilter): number;
}

/** The typed `sandbox.requests` methods. */
export interface SandboxRequests {
  /** One page, newest first. */
  list(filter?: SandboxRequestFilter): Promise<RequestLogPage>;
  /** An entry by id, of whichever tenant and environment its id names; `undefined` when there is none. */
  get(id: string): Promise<RequestLogEntry | undefined>;
  count(filter?: SandboxRequestFilter): Promise<number>;
  /** Deletes the matching entries; how many were deleted. */
  clear(filter?: SandboxRequestFilter): Promise<number>;
}
