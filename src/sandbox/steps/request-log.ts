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
import {
  bodyText,
  envelopeOf,
  issuesOf,
  type LoggedBody,
  MAX_LOGGED_BODY_BYTES,
  queryRecord,
  ReferenceSet,
  readUpTo,
  textBody,
} from '../request-log/entry.js';
import { Scrubber } from '../request-log/secrets.js';
import type { NewEntry } from '../request-log/store.js';
import { BODY_TEXT } from '../responses.js';
import type { Tenant, Tenants } from '../tenants.js';
import type { Step } from './chain.js';
import { type FailureAnswers, respond } from './respond.js';
import type { ApiRequest } from './route.js';

/** What an answer was, read once for the log and sent on unchanged. */
interface Answered {
  response: Response;
  body: LoggedBody;
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
    // The body is read here once, and the steps below get it as bytes: cheaper than a clone's two streams.
    const sent = request.body ? await readUpTo(request.body, maxBodyBytes + 1) : null;
    const forwarded = sent ? { ...context, received: sent.bytes } : context;
    const answered = await readAnswer(await answer(forwarded, next));
    try {
      const requestBody = sent ? bodyText(sent.bytes.subarray(0, MAX_LOGGED_BODY_BYTES + 1), sent.complete) : bodyText(null);
      const owner = caller ?? byWebcode(tenants, context, requestBody.text);
      const tenant = owner ?? tenants.main;
      // A tenant removed while its request ran took its log with it: nothing left to write to.
      if (tenant.removed.aborted) return answered.response;
      const scrub = new Scrubber([presented, ...Object.values(tenant.keys), ...Object.values(tenant.clientSecrets)]);
      const durationMs = performance.now() - started;
      tenant.requests.add(entryOf(context, { tenant: owner?.webcode ?? null, requestBody, answered, scrub, at, durationMs }), at);
    } catch (error) {
      (caller ?? tenants.main).report(error);
    }
    return answered.response;
  };
}

/** The answer's body as the log keeps it, and the answer to send: as it was, or rebuilt around the bytes read. */
async function readAnswer(response: Response): Promise<Answered> {
  if (response.type === 'error') {
    const rule = (response as { [STRUCK_RULE]?: string })[STRUCK_RULE];
    return { response, body: { text: null, truncated: false }, faultRule: rule ?? null };
  }
  const written = (response as { [BODY_TEXT]?: string })[BODY_TEXT];
  if (written !== undefined) return { response, body: textBody(written), faultRule: response.headers.get(FAULT_HEADER) };
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
  requestBody: LoggedBody;
  answered: Answered;
  scrub: Scrubber;
  at: number;
  durationMs: number;
}

/** The entry of a request. */
function entryOf(context: ApiRequest, recorded: Recorded): NewEntry {
  const { request, url, path, environment } = context;
  const { requestBody, answered, scrub } = recorded;
  const route = API_ROUTES.find((candidate) => candidate.method === request.method && candidate.pattern.test(path));
  const status = answered.response.type === 'error' ? 0 : answered.response.status;
  const envelope = envelopeOf(answered.body.text);
  const references = new ReferenceSet();
  if (route) references.addParams(route.template, (route.pattern.exec(path) ?? []).slice(1).map(decoded));
  references.addFieldsOf(jsonOf(requestBody.text));
  references.addFieldsOf(envelope.data);
  return {
    at: new Date(recorded.at).toISOString(),
    environment,
    tenant: recorded.tenant,
    method: request.method,
    route: route?.template ?? null,
    operation: route?.operationId ?? null,
    path: scrub.text(url.pathname),
    query: queryRecord(url.searchParams, (text) => scrub.text(text)),
    requestHeaders: scrub.headers(request.headers),
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
