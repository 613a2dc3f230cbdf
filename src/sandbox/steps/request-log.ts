/**
 * The request log's step, the first of the API's: it sees every request to the service API as
 * received and its answer as sent, whichever step answered (a bad key, a wrong webcode, a body
 * refused, an unknown endpoint, a fault rule, the operation). Failures below it become their
 * envelopes here, so that the log records what the client got. The entry goes to the log of the
 * tenant of the key; for a key no tenant has, to the tenant the request's `webcode` names, else to
 * the sandbox's own log with `tenant: null`. Recording never changes the answer: a failure to
 * record is reported as the tenant's own.
 */
import { API_ROUTES } from '../api/routes.js';
import { DECLARED_LENGTH, FAULT_HEADER, STRUCK_RULE } from '../faults.js';
import { type Received, receivedByServer } from '../http/received.js';
import {
  bodyText,
  envelopeOf,
  issuesOf,
  type LoggedBody,
  MAX_LOGGED_BODY_BYTES,
  NO_ENVELOPE,
  queryRecord,
  ReferenceSet,
  readUpTo,
  textBody,
} from '../request-log/entry.js';
import { Scrubber } from '../request-log/secrets.js';
import type { NewEntry } from '../request-log/store.js';
import { BODY_DATA, BODY_TEXT } from '../responses.js';
import type { Tenant, Tenants } from '../tenants.js';
import type { Step } from './chain.js';
import { type FailureAnswers, respond } from './respond.js';
import type { ApiRequest, RequestNotes } from './route.js';

/** What an answer was, read once for the log and sent on unchanged. */
interface Answered {
  response: Response;
  body: LoggedBody;
  /** The `data` of a success envelope, when the answer carried it as a value ({@link BODY_DATA}). */
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
    const received = receivedByServer.get(request);
    const sent = received
      ? received.body && { bytes: received.body, complete: true }
      : request.body
        ? await readUpTo(request.body, maxBodyBytes + 1)
        : null;
    const notes: RequestNotes = {};
    const answered = await readAnswer(await answer({ ...context, received: sent?.bytes, notes }, next));
    const durationMs = performance.now() - started;
    try {
      const requestBody = loggedBody(sent, notes);
      const owner = caller ?? byWebcode(tenants, context, requestBody.text);
      const tenant = owner ?? tenants.main;
      const headers = received?.headers ?? request.headers;
      // Made once the answer is on its way: a tenant removed by then took its log with it.
      tenant.requests.later(() => {
        if (tenant.removed.aborted) return undefined;
        const scrub = scrubberOf(tenant, presented);
        return entryOf(context, { tenant: owner?.webcode ?? null, notes, requestBody, headers, answered, scrub, durationMs });
      }, at);
    } catch (error) {
      (caller ?? tenants.main).report(error);
    }
    return answered.response;
  };
}

/** The request's body as the log keeps it: the text the body step decoded, when it read the whole body. */
function loggedBody(sent: { bytes: Uint8Array; complete: boolean } | null, notes: RequestNotes): LoggedBody {
  if (sent === null) return bodyText(null);
  if (notes.text !== undefined && sent.complete && sent.bytes.byteLength <= MAX_LOGGED_BODY_BYTES)
    return { text: notes.text === '' ? null : notes.text, truncated: false };
  return bodyText(sent.bytes.subarray(0, MAX_LOGGED_BODY_BYTES + 1), sent.complete);
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
async function readAnswer(response: Response): Promise<Answered> {
  if (response.type === 'error') {
    const rule = (response as { [STRUCK_RULE]?: string })[STRUCK_RULE];
    return { response, body: { text: null, truncated: false }, faultRule: rule ?? null };
  }
  const { [BODY_TEXT]: written, [BODY_DATA]: data } = response as { [BODY_TEXT]?: string; [BODY_DATA]?: unknown };
  if (written !== undefined) return { response, body: textBody(written), data, faultRule: response.headers.get(FAULT_HEADER) };
  const bytes = new Uint8Array(await response.arrayBuffer());
  const rebuilt = new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
  const declared = (response as { [DECLARED_LENGTH]?: number })[DECLARED_LENGTH];
  if (declared !== undefined) Object.assign(rebuilt, { [DECLARED_LENGTH]: declared });
  return { response: rebuilt, body: bodyText(bytes), faultRule: response.headers.get(FAULT_HEADER) };
}

/** A key no tenant has: the tenant its request's `webcode` (query, or a JSON body's) names, if any. */
function byWebcode(tenants: Tenants, context: ApiRequest, body: string | null): Tenant | undefined {
  let webcode = context.url.searchParams.get('webcode');
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
  requestBody: LoggedBody;
  /** The request's headers: as the Node server parsed them, else the `Request`'s. */
  headers: Headers | Received['headers'];
  answered: Answered;
  scrub: Scrubber;
  durationMs: number;
}

/** The entry of a request. */
function entryOf(context: ApiRequest, recorded: Recorded): NewEntry {
  const { request, url, path, environment } = context;
  const { notes, requestBody, answered, scrub } = recorded;
  // Refused before the endpoint step noted it (a path whose parameter is not valid percent-encoding): matched here.
  const route = notes.route ?? API_ROUTES.find((candidate) => candidate.method === request.method && candidate.pattern.test(path));
  const status = answered.response.type === 'error' ? 0 : answered.response.status;
  const envelope = answered.data === undefined ? envelopeOf(answered.body.text) : { ...NO_ENVELOPE, data: answered.data };
  const references = new ReferenceSet();
  if (route) references.addParams(route.template, notes.params ?? (route.pattern.exec(path) ?? []).slice(1).map(decoded));
  references.addFieldsOf(notes.body ?? jsonOf(requestBody.text));
  references.addFieldsOf(envelope.data);
  return {
    environment,
    tenant: recorded.tenant,
    method: request.method,
    route: route?.template ?? null,
    operation: route?.operationId ?? null,
    path: scrub.text(url.pathname),
    query: queryRecord(url.searchParams, (text) => scrub.text(text)),
    requestHeaders: scrub.headers(recorded.headers),
    requestBody: scrub.text(requestBody.text),
    requestBodyTruncated: requestBody.truncated,
    idempotencyKey: request.headers.get('idempotency-key'),
    replayed: answered.response.headers.get('idempotent-replayed') === 'true',
    status,
    responseBody: scrub.text(answered.body.text),
    responseBodyTruncated: answered.body.truncated,
    traceId: envelope.traceId,
    durationMs: Math.round(recorded.durationMs * 1000) / 1000,
    faultRule: answered.faultRule,
    references: references.lists,
    issues: issuesOf(status, envelope),
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
