/**
 * The request log's step, the first of the API's: it sees every request to the service API as
 * received and its answer as sent, whichever step answered (a bad key, a wrong webcode, a body
 * refused, an unknown endpoint, a fault rule, the operation). Failures below it become their
 * envelopes here, so that the log records what the client got. The entry goes to the log of the
 * tenant of the key; for a key no tenant has, to the tenant the request's `webcode` names, else to
 * the sandbox's own log with `tenant: null`. Recording never changes the answer: a failure to
 * record is reported as the tenant's own.
 */

import { JsonAnswer, type SandboxAnswer } from '../answer.js';
import { API_ROUTES, type ApiRoute } from '../api/routes.js';
import { DECLARED_LENGTH, FAULT_HEADER, STRUCK_RULE } from '../faults.js';
import { NodeRequest, type Received } from '../http/incoming.js';
import {
  bodyText,
  cutBody,
  envelopeOf,
  issuesOf,
  type LoggedBody,
  NO_ENVELOPE,
  queryRecord,
  ReferenceSet,
  readUpTo,
  textBody,
} from '../request-log/entry.js';
import type { RequestLogReferences } from '../request-log/schema.js';
import { Scrubber } from '../request-log/secrets.js';
import type { NewEntry } from '../request-log/store.js';
import type { Tenant, Tenants } from '../tenants.js';
import type { Step } from './chain.js';
import { type FailureAnswers, respond } from './respond.js';
import type { ApiRequest, RequestNotes } from './route.js';

/** What an answer was, read once for the log and sent on unchanged. */
interface Answered {
  response: SandboxAnswer;
  /** Its body as the sandbox wrote it, or as bytes; `null` for none. */
  body: string | Uint8Array | null;
  /** The `data` of a success envelope, when the answer carried it as a value (a {@link JsonAnswer}'s). */
  data?: unknown;
  faultRule: string | null;
}

/** `maxBodyBytes` is the sandbox's limit: a body is read up to one byte past it, enough for the body step to refuse it (413). */
export function requestLog(tenants: Tenants, failures: FailureAnswers, maxBodyBytes: number): Step<ApiRequest> {
  const answer = respond<ApiRequest>(failures);
  return async (context, next) => {
    // The size is the sandbox's, the same for every tenant: off, the log costs nothing.
    if (!tenants.main.requests.enabled) return answer(context, next);
    const started = performance.now();
    const { request } = context;
    const presented = request.headers.get('x-api-key') ?? '';
    const caller = tenants.byKey(presented)?.tenant;
    const at = (caller ?? tenants.main).clock.now();
    // What the Node server received, when it made the request; else the body is read here once, and
    // the steps below get it as bytes: cheaper than a clone's two streams.
    const received = request instanceof NodeRequest ? request.received : undefined;
    const sent = received
      ? received.body && { bytes: received.body, complete: received.complete }
      : !(request instanceof NodeRequest) && request.body
        ? await readUpTo(request.body, maxBodyBytes + 1)
        : null;
    const notes: RequestNotes = {};
    const answered = await readAnswer(await answer({ ...context, received: sent?.bytes, notes }, next));
    const durationMs = performance.now() - started;
    try {
      const owner = caller ?? byWebcode(tenants, context, sent, notes);
      const tenant = owner ?? tenants.main;
      // What the entry is made of, taken now: the few values it needs rather than the request, the
      // answer and the context, which would otherwise outlive this turn with it (see `Raw`).
      const raw = rawOf(context, {
        tenant: owner?.webcode ?? null,
        notes,
        sent,
        headers: received?.headers ?? (request as Request).headers,
        answered,
        durationMs,
      });
      // Made once the answer is on its way: a tenant removed by then took its log with it.
      tenant.requests.later(() => (tenant.removed.aborted ? undefined : entryOf(raw, scrubberOf(tenant, presented))), at);
    } catch (error) {
      (caller ?? tenants.main).report(error);
    }
    return answered.response;
  };
}

/** What of a request's body the server or the step read: its bytes, and whether they are all it sent. */
type Sent = { bytes: Uint8Array; complete: boolean } | null;

/** A body as the step keeps it for its entry: the text already decoded where there is one, else the bytes. */
type RawBody = { text: string } | { bytes: Uint8Array; complete: boolean } | null;

/** The request's body to keep: the text the body step decoded, when it read the whole body (its bytes then die with the request). */
function rawRequestBody(sent: Sent, notes: RequestNotes): RawBody {
  if (sent === null) return null;
  if (notes.text !== undefined && sent.complete) return { text: notes.text };
  return sent;
}

/** A body as the log reads it, `reach` bytes past the cut (see {@link bodyText}). */
function loggedBody(body: RawBody, reach: number): LoggedBody {
  if (body === null) return bodyText(null);
  if ('text' in body) return textBody(body.text, reach);
  return bodyText(body.bytes, body.complete, reach);
}

/** A body with every secret masked, then cut: a secret that straddles the cut is masked whole. */
function scrubbedBody(body: LoggedBody, scrub: Scrubber): LoggedBody {
  return cutBody({ text: scrub.text(body.text), truncated: body.truncated });
}

/** Each tenant's scrubber, made once per list of its secrets (a client secret's rotation makes a new list). */
const scrubbers = new WeakMap<readonly string[], Scrubber>();

/** What masks the tenant's keys and client secrets (the current and the rotated ones), and the key presented if it is none of them. */
function scrubberOf(tenant: Tenant, presented: string): Scrubber {
  const { secrets } = tenant;
  if (presented !== '' && presented !== tenant.keys.test && presented !== tenant.keys.live) return new Scrubber([presented, ...secrets]);
  let scrubber = scrubbers.get(secrets);
  if (scrubber === undefined) {
    scrubber = new Scrubber(secrets);
    scrubbers.set(secrets, scrubber);
  }
  return scrubber;
}

/** The answer's body as the log keeps it, and the answer to send: as it was, or rebuilt around the bytes read. */
async function readAnswer(response: SandboxAnswer): Promise<Answered> {
  if (response instanceof JsonAnswer)
    return { response, body: response.bodyText, data: response.data, faultRule: response.headers.get(FAULT_HEADER) };
  if (response.type === 'error') {
    const rule = (response as { [STRUCK_RULE]?: string })[STRUCK_RULE];
    return { response, body: null, faultRule: rule ?? null };
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const rebuilt = new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
  const declared = (response as { [DECLARED_LENGTH]?: number })[DECLARED_LENGTH];
  if (declared !== undefined) Object.assign(rebuilt, { [DECLARED_LENGTH]: declared });
  return { response: rebuilt, body: bytes, faultRule: response.headers.get(FAULT_HEADER) };
}

/** A key no tenant has: the tenant its request's `webcode` (query, or a JSON body's) names, if any. */
function byWebcode(tenants: Tenants, context: ApiRequest, sent: Sent, notes: RequestNotes): Tenant | undefined {
  let webcode = context.url.searchParams.get('webcode');
  const body = webcode === null ? (notes.text ?? bodyText(sent?.bytes ?? null).text) : null;
  if (webcode === null && body !== null) {
    try {
      const parsed = JSON.parse(body) as { webcode?: unknown } | null;
      webcode = typeof parsed?.webcode === 'string' ? parsed.webcode : null;
    } catch {
      webcode = null;
    }
  }
  return webcode === null ? undefined : tenants.all().find((tenant) => tenant.webcode === webcode);
}

interface Recorded {
  /** The webcode of the tenant the request was attributed to, or `null`. */
  tenant: string | null;
  notes: RequestNotes;
  sent: Sent;
  /** The request's headers: as the Node server parsed them, else the `Request`'s. */
  headers: Headers | Received['headers'];
  answered: Answered;
  durationMs: number;
}

/**
 * What an entry is made from, once the answer is on its way: strings and the few small values the
 * request and the answer already hold, nothing that holds them. An entry waits a turn of the event
 * loop for its answer to be sent (see `RequestLog.later`); the `Request`, the `Response`, the URL
 * and the context kept for that turn survived the young generation's collections under load and
 * were promoted to the old one, which grew by several KB a request (garbage, collected later,
 * whose pages stayed committed: +29 MB of RSS with the log full).
 */
interface Raw {
  environment: ApiRequest['environment'];
  tenant: string | null;
  method: string;
  /** The URL's path as sent, and its query string. */
  pathname: string;
  search: string;
  /** The path within the environment, which the routes match. */
  path: string;
  route: ApiRoute | undefined;
  params: readonly string[] | undefined;
  headers: Headers | Received['headers'];
  idempotencyKey: string | null;
  requestBody: RawBody;
  /** The request's JSON body as the body step parsed it; `undefined` to parse it from its text. */
  parsed: unknown;
  status: number;
  replayed: boolean;
  faultRule: string | null;
  responseBody: string | Uint8Array | null;
  data: unknown;
  made: unknown;
  durationMs: number;
}

function rawOf(context: ApiRequest, recorded: Recorded): Raw {
  const { request, url, path, environment } = context;
  const { notes, answered } = recorded;
  const { response } = answered;
  return {
    environment,
    tenant: recorded.tenant,
    method: request.method,
    pathname: url.pathname,
    search: url.search,
    path,
    route: notes.route,
    params: notes.params,
    headers: recorded.headers,
    idempotencyKey: request.headers.get('idempotency-key'),
    requestBody: rawRequestBody(recorded.sent, notes),
    parsed: notes.body,
    status: response.type === 'error' ? 0 : response.status,
    replayed: response.headers.get('idempotent-replayed') === 'true',
    faultRule: answered.faultRule,
    responseBody: answered.body,
    data: answered.data,
    made: notes.made,
    durationMs: recorded.durationMs,
  };
}

/**
 * The entry of a request, every secret masked in every field (the bodies before they are cut, the
 * header names as well as their values, the issues, the references, the `Idempotency-Key`).
 */
function entryOf(raw: Raw, scrub: Scrubber): NewEntry {
  const { method, path, status } = raw;
  // Refused before the endpoint step noted it (a path whose parameter is not valid percent-encoding): matched here.
  const route = raw.route ?? API_ROUTES.find((candidate) => candidate.method === method && candidate.pattern.test(path));
  const requestBody = loggedBody(raw.requestBody, scrub.reach);
  const responseBody = answerBody(raw.responseBody, scrub.reach);
  const envelope = raw.data === undefined ? envelopeOf(responseBody.text) : { ...NO_ENVELOPE, data: raw.data };
  const references = new ReferenceSet();
  if (route) references.addParams(route.template, raw.params ?? (route.pattern.exec(path) ?? []).slice(1).map(decoded));
  references.addFieldsOf(raw.parsed ?? jsonOf(requestBody.text));
  references.addFieldsOf(envelope.data);
  // What a request made before a fault rule struck its answer (a 500 or a reset after the commit).
  references.addFieldsOf(raw.made);
  const kept = scrubbedBody(requestBody, scrub);
  const answeredBody = scrubbedBody(responseBody, scrub);
  const text = (value: string) => scrub.text(value);
  const nullable = (value: string | null) => scrub.text(value);
  return {
    environment: raw.environment,
    tenant: nullable(raw.tenant),
    method: text(method),
    route: route?.template ?? null,
    operation: route?.operationId ?? null,
    path: text(raw.pathname),
    query: raw.search === '' ? {} : queryRecord(new URLSearchParams(raw.search), text),
    requestHeaders: scrub.headers(raw.headers),
    requestBody: kept.text,
    requestBodyTruncated: kept.truncated,
    idempotencyKey: nullable(raw.idempotencyKey),
    replayed: raw.replayed,
    status,
    responseBody: answeredBody.text,
    responseBodyTruncated: answeredBody.truncated,
    traceId: nullable(envelope.traceId),
    durationMs: Math.round(raw.durationMs * 1000) / 1000,
    faultRule: nullable(raw.faultRule),
    references: scrubbedReferences(references.lists, scrub),
    issues: issuesOf(status, envelope).map((issue) => ({ path: text(issue.path), message: text(issue.message) })),
  };
}

/** An answer's body as the log reads it, `reach` bytes past the cut. */
function answerBody(body: string | Uint8Array | null, reach: number): LoggedBody {
  if (body === null) return bodyText(null);
  return typeof body === 'string' ? textBody(body, reach) : bodyText(body, true, reach);
}

/** The references with every secret masked: a path or a body may name a record by a key (`GET /payment/session/{key}`). */
function scrubbedReferences(lists: RequestLogReferences, scrub: Scrubber): RequestLogReferences {
  const masked = (list: string[]) => list.map((reference) => scrub.text(reference));
  return {
    sessionIds: masked(lists.sessionIds),
    paymentReferences: masked(lists.paymentReferences),
    posPaymentIds: masked(lists.posPaymentIds),
    modificationReferences: masked(lists.modificationReferences),
  };
}

function jsonOf(text: string | null): unknown {
  if (text === null || text[0] !== '{') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function decoded(param: string): string {
  try {
    return decodeURIComponent(param);
  } catch {
    return param;
  }
}
