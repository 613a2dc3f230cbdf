/**
 * An entry of the request log from what the sandbox received and answered: bodies as text, cut at
 * {@link MAX_LOGGED_BODY_BYTES}; the records named in the path, the request and the answer; why a
 * refused request was refused, from its failure envelope.
 */
import type { RequestLogIssue, RequestLogReferences } from './schema.js';

/** Longest body kept, in bytes of UTF-8: past it the text is cut and `…Truncated` set. */
export const MAX_LOGGED_BODY_BYTES = 65_536;

/** A body as the log reads it: `text`, and whether it is not the whole body (`truncated`). */
export interface LoggedBody {
  text: string | null;
  truncated: boolean;
}

/**
 * `bytes` as text, its first {@link MAX_LOGGED_BODY_BYTES} bytes and `reach` more (a character cut
 * in two is left out): the secrets are masked in that before {@link cutBody} cuts it, so that one
 * that straddles the cut is masked whole. Bytes that are not UTF-8 read as U+FFFD. `complete` is
 * false when more came than were read.
 */
export function bodyText(bytes: Uint8Array | null, complete = true, reach = 0): LoggedBody {
  if (bytes === null || bytes.byteLength === 0) return { text: null, truncated: !complete };
  const window = MAX_LOGGED_BODY_BYTES + reach;
  if (bytes.byteLength <= window && complete) return { text: new TextDecoder().decode(bytes), truncated: false };
  const cut = bytes.subarray(0, window);
  return { text: new TextDecoder().decode(cut, { stream: true }), truncated: bytes.byteLength > window || !complete };
}

/** Text already decoded (the body step's, an answer's as the sandbox wrote it): its first {@link MAX_LOGGED_BODY_BYTES} bytes and `reach` more, as {@link bodyText}. */
export function textBody(text: string, reach = 0): LoggedBody {
  // A UTF-16 unit is at least 1 byte of UTF-8: as many units as bytes covers the bytes wanted.
  const window = MAX_LOGGED_BODY_BYTES + reach;
  if (text.length <= window) return { text: text === '' ? null : text, truncated: false };
  return { text: text.slice(0, window), truncated: true };
}

/** A body with its secrets masked, cut at {@link MAX_LOGGED_BODY_BYTES} bytes of UTF-8 (a character cut in two left out). */
export function cutBody(body: LoggedBody): LoggedBody {
  const { text } = body;
  // A UTF-16 unit is at most 3 bytes of UTF-8: most bodies need no encoding to be measured.
  if (text === null || text.length * 3 <= MAX_LOGGED_BODY_BYTES) return body;
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength <= MAX_LOGGED_BODY_BYTES) return body;
  return { text: new TextDecoder().decode(bytes.subarray(0, MAX_LOGGED_BODY_BYTES), { stream: true }), truncated: true };
}

/** Up to `limit` bytes of a body stream, then no more is read; `complete` when it ended within them. */
export async function readUpTo(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<{ bytes: Uint8Array<ArrayBuffer>; complete: boolean }> {
  if (!stream) return { bytes: new Uint8Array(0), complete: true };
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let complete = true;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size > limit) {
        complete = false;
        break;
      }
    }
  } catch {
    // A body the client stopped sending: what came is what it sent.
  } finally {
    if (!complete) await reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, complete };
}

/** The query parameters: one value as a string, a repeated parameter's values in a list. */
export function queryRecord(params: URLSearchParams, scrub: (text: string) => string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, raw] of params) {
    const value = scrub(raw);
    const before = query[name];
    query[name] = before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value];
  }
  return query;
}

/** Which list of {@link RequestLogReferences} a field or path parameter that names a record belongs to. */
const KIND_OF_FIELD = new Map<string, keyof RequestLogReferences>([
  ['sessionId', 'sessionIds'],
  ['paymentReference', 'paymentReferences'],
  ['posPaymentId', 'posPaymentIds'],
  ['refundReference', 'modificationReferences'],
  ['captureReference', 'modificationReferences'],
  ['cancelReference', 'modificationReferences'],
  ['extendReference', 'modificationReferences'],
  ['operationReference', 'modificationReferences'],
]);

/** The parameter names of each route template, worked out once (there are a dozen templates). */
const PARAM_NAMES = new Map<string, string[]>();

/** Collects the records a request names or made, each once, by kind. */
export class ReferenceSet {
  readonly #lists: RequestLogReferences = { sessionIds: [], paymentReferences: [], posPaymentIds: [], modificationReferences: [] };

  /** A record named by `field` (`sessionId`, `refundReference`, ...); other fields are not records. */
  add(field: string, value: unknown): void {
    // A Map: a body's `constructor` or `__proto__` names no kind.
    const kind = KIND_OF_FIELD.get(field);
    if (kind === undefined || typeof value !== 'string' || value === '' || value.length > 200) return;
    const list = this.#lists[kind];
    if (!list.includes(value)) list.push(value);
  }

  /** The record fields at the top of a JSON object (a request body, an answer's `data`). */
  addFieldsOf(value: unknown): void {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
    // The eight record fields looked up, rather than every field of the object listed.
    for (const field of KIND_OF_FIELD.keys()) if (Object.hasOwn(value, field)) this.add(field, (value as Record<string, unknown>)[field]);
  }

  /** The path parameters, named by the route's template: `GET /payment/session/{sessionId}`. */
  addParams(template: string, params: readonly string[]): void {
    let names = PARAM_NAMES.get(template);
    if (names === undefined) {
      names = [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');
      PARAM_NAMES.set(template, names);
    }
    for (const [index, name] of names.entries()) this.add(name, params[index]);
  }

  get lists(): RequestLogReferences {
    return this.#lists;
  }
}

/** What a failure envelope says: its `traceId` and `message` (and `code`). */
export interface Envelope {
  traceId: string | null;
  message: string | null;
  code: number | null;
  /** The `data` of a success envelope. */
  data: unknown;
}

/** What an answer that is not an envelope says. */
export const NO_ENVELOPE: Envelope = Object.freeze({ traceId: null, message: null, code: null, data: undefined });

/** The envelope of an answer's text; all `null` for text that is not one. */
export function envelopeOf(text: string | null): Envelope {
  if (text === null || text.length === 0 || text[0] !== '{') return NO_ENVELOPE;
  try {
    const body = JSON.parse(text) as {
      success?: unknown;
      data?: unknown;
      error?: { traceId?: unknown; message?: unknown; code?: unknown };
    };
    const error = body.error;
    if (body.success === true) return { ...NO_ENVELOPE, data: body.data };
    return {
      traceId: typeof error?.traceId === 'string' ? error.traceId : null,
      message: typeof error?.message === 'string' ? error.message : null,
      code: typeof error?.code === 'number' ? error.code : null,
      data: undefined,
    };
  } catch {
    return NO_ENVELOPE;
  }
}

/** The request part a refusal of each code concerns, when its message does not begin with a field. */
const PATH_OF_CODE: Record<number, string> = {
  19403: 'remoteAddress',
  19409: 'Idempotency-Key',
  19410: 'Idempotency-Key',
  19413: 'body',
  19415: 'Content-Type',
};

/** A field path at the start of a message: `amount.value must be ...`, `webcode is required`. */
const LEADING_FIELD = /^([a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+|\[\d+\])*) (?:is|must|does|has|cannot|should|not)\b/;

/**
 * Why a 4xx was refused, as `[{ path, message }]`: the service's envelopes carry one message, whose
 * leading word names the field when a field is at fault (`amount.value must be ...`). A key the
 * sandbox does not know or that may not reach the path is `X-API-KEY`'s fault; a request as a whole
 * (an unknown endpoint, a body that is not JSON) has the path `''`.
 */
export function issuesOf(status: number, envelope: Envelope): RequestLogIssue[] {
  if (status < 400 || status >= 500 || envelope.message === null) return [];
  const { message, code } = envelope;
  const field = LEADING_FIELD.exec(message)?.[1];
  if (field !== undefined) return [{ path: field, message }];
  if (code === 11008) return [{ path: 'X-API-KEY', message }];
  return [{ path: (code !== null && PATH_OF_CODE[code]) || '', message }];
}
