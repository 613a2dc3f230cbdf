import type * as z from 'zod/mini';
import { ConfigurationError, WebhookNotConfirmedError, WebhookParseError } from '../core/errors.js';
import { parseWith } from '../core/response.js';
import type { ConfirmedPosPayment, ConfirmedRefund, ConfirmedSessionPayment, ConfirmedWebhook } from '../schemas/confirmed-webhooks.js';
import {
  type AuthorisationEvent,
  AuthorisationEventSchema,
  type RefundEvent,
  RefundEventSchema,
  type UnknownWebhookEvent,
  type WebhookEvent,
} from '../schemas/webhooks.js';
import { storedKey, webhookEventKey } from './webhook-key.js';
import { claimTransaction, type WebhookStore, type WebhookTransaction } from './webhook-store.js';

export {
  type AuthorisationEvent,
  type AuthorisationWebhookData,
  PAYMENT_OUTCOMES,
  PAYMENT_SOURCES,
  type PaymentOutcome,
  REFUND_OUTCOMES,
  REFUND_WEBHOOK_STATUSES,
  type RefundEvent,
  type RefundOutcome,
  type RefundWebhookData,
  type UnknownWebhookEvent,
  WEBHOOK_EVENT_CODES,
  type WebhookEvent,
  type WebhookOutcome,
} from '../schemas/webhooks.js';

// ---------------------------------------------------------------------------------------------
// parseWebhook
// ---------------------------------------------------------------------------------------------

/** Objects nested deeper than this are refused: webhook bodies are flat, and recursion must stay bounded. */
const MAX_DEPTH = 64;

/** Internal failures, each turned into one `WebhookParseError`. A WeakSet, so that no trap of a thrown proxy runs. */
const failures = new WeakSet<object>();

function malformed(message: string): never {
  const failure = new WebhookParseError(message);
  failures.add(failure);
  throw failure;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'a non-plain object' : `a ${typeof value}`;
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  // The last test admits plain objects of another realm (a vm context, an iframe).
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null;
}

/**
 * A copy of `value` made of JSON values only: plain objects, arrays, strings, finite numbers,
 * booleans and null. Properties set to `undefined` are left out, as `JSON.stringify` would; `__proto__`
 * keys are dropped; anything else (functions, cycles, class instances, `undefined` in an array) is refused.
 */
function toJson(value: unknown, path: string, depth: number, ancestors: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : malformed(`${path} is ${value}, which is not a JSON number`);
    case 'object':
      break;
    default:
      return malformed(`${path} is ${describe(value)}, which is not a JSON value`);
  }
  if (value === null) return null;
  if (depth > MAX_DEPTH) malformed(`${path} is nested more than ${MAX_DEPTH} levels deep`);
  if (ancestors.has(value)) malformed(`${path} refers back to itself (a cyclic object is not JSON)`);
  ancestors.add(value);
  let copy: unknown;
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      if (item === undefined) malformed(`${path}[${index}] is undefined, which is not a JSON value`);
      items.push(toJson(item, `${path}[${index}]`, depth + 1, ancestors));
    }
    copy = items;
  } else {
    if (!isPlainObject(value)) malformed(`${path} is ${describe(value)}, which is not a JSON object`);
    const fields: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      if (key === '__proto__') continue;
      const field: unknown = (value as Record<string, unknown>)[key];
      if (field !== undefined) fields[key] = toJson(field, `${path}.${key}`, depth + 1, ancestors);
    }
    copy = fields;
  }
  ancestors.delete(value);
  return copy;
}

function decode(body: unknown): unknown {
  let bytes: Uint8Array | undefined;
  if (body instanceof Uint8Array) bytes = body;
  else if (ArrayBuffer.isView(body)) bytes = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  else if (body instanceof ArrayBuffer) bytes = new Uint8Array(body);
  let text: string;
  if (bytes) {
    try {
      text = decoder.decode(bytes);
    } catch {
      return malformed('The webhook body is not valid UTF-8');
    }
  } else if (typeof body === 'string') {
    text = body.startsWith('\uFEFF') ? body.slice(1) : body;
  } else {
    return body;
  }
  if (text.trim() === '') malformed('The webhook body is empty');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    return malformed(`The webhook body is not valid JSON (${(error as Error).message})`);
  }
}

function issuesOf(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  return error.issues.map((issue) => `${issue.path.map(String).join('.')} ${issue.message}`).join('; ');
}

function parse(body: unknown): WebhookEvent {
  if (body === undefined || body === null) malformed('The webhook body is empty');
  const value = decode(body);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    malformed(`The webhook body must be a JSON object { event_code, data }, not ${describe(value)}`);
  }
  const event = toJson(value, 'body', 0, new Set()) as Record<string, unknown>;
  const code = event.event_code;
  if (typeof code !== 'string' || code === '') malformed('The webhook body has no event_code (a non-empty string)');
  const { data } = event;
  if (data === undefined) malformed(`The ${code} webhook has no data (a JSON object)`);
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    malformed(`The ${code} webhook's data must be a JSON object, not ${describe(data)}`);
  }
  const schema: z.core.$ZodType<AuthorisationEvent | RefundEvent> | undefined =
    code === 'AUTHORISATION' ? AuthorisationEventSchema : code === 'REFUND' ? RefundEventSchema : undefined;
  if (!schema) return event as UnknownWebhookEvent;
  const parsed = parseWith(schema, event);
  if (!parsed.success) malformed(`Malformed ${code} webhook: ${issuesOf(parsed.error)}`);
  return parsed.data;
}

/**
 * Reads a webhook delivery. `body` is the raw body (a string, or bytes: `Uint8Array`, `Buffer`,
 * `ArrayBuffer`) or a body already parsed from JSON (for example Express's `req.body`).
 *
 * Returns the event, discriminated on `event_code`: `AUTHORISATION` and `REFUND` with typed `data`;
 * any other code is returned as an {@link UnknownWebhookEvent} with its `data` as it arrived. The
 * result is a fresh copy holding only what the body holds (unknown fields are kept, `__proto__` keys
 * are dropped). Use {@link isAuthorisationEvent} and {@link isRefundEvent} to narrow it.
 *
 * Throws {@link WebhookParseError}, and nothing else, when the body is not a JSON object
 * `{ event_code, data }` (invalid UTF-8 or JSON, an array, a cycle, a getter that throws, ...) or
 * when the data of a known event breaks its type (for example a fractional `amount`, or no
 * `paymentReference`); the message names the field.
 *
 * Deliveries are not signed: a parsed event is a claim, not a proof. Confirm it with
 * `client.webhooks.confirm(event)` before acting on it.
 */
export function parseWebhook(body: unknown): WebhookEvent {
  try {
    return parse(body);
  } catch (error) {
    if (failures.has(error as object)) throw error;
    let detail = 'unexpected value';
    try {
      detail = error instanceof Error ? error.message : String(error);
    } catch {
      // The thrown value cannot even be described: keep the generic detail.
    }
    throw new WebhookParseError(`The webhook body could not be read (${detail.slice(0, 200)})`, { cause: error });
  }
}

/** Whether `event` is an AUTHORISATION webhook (the result of a payment: authorised, or refused). */
export function isAuthorisationEvent(event: WebhookEvent): event is AuthorisationEvent {
  return event.event_code === 'AUTHORISATION';
}

/** Whether `event` is a REFUND webhook (a refund was resolved). */
export function isRefundEvent(event: WebhookEvent): event is RefundEvent {
  return event.event_code === 'REFUND';
}

// ---------------------------------------------------------------------------------------------
// createWebhookHandler
// ---------------------------------------------------------------------------------------------

/** What `confirm` gives the callback of an event: the confirmation of its kind (none for codes that cannot be confirmed). */
export type ConfirmedFor<Event> = Event extends AuthorisationEvent
  ? ConfirmedPosPayment | ConfirmedSessionPayment
  : Event extends RefundEvent
    ? ConfirmedRefund
    : never;

/** What a callback of {@link createWebhookHandler} learns besides the event. */
export interface WebhookContext<Confirmed = ConfirmedWebhook> {
  /** The event's key as the store holds it: `eventKey(event)` (by default {@link webhookEventKey}), escaped and hashed when long (see `storedKey`). */
  key: string;
  /**
   * With the `confirm` option: what `client.webhooks.confirm(event)` resolved to, the record the API
   * holds and the confirmed `outcome` (`authorised` or `refused`, `refunded` or `failed`). Absent
   * without `confirm`, and for event codes the API cannot confirm (`onUnknown`).
   */
  confirmed?: Confirmed | undefined;
  /**
   * Writes rows of the store's own database in a transaction that also marks the event done
   * (PostgreSQL and SQLite stores): exactly once whatever is killed when. See {@link WebhookTransaction}.
   */
  transaction: WebhookTransaction;
}

/**
 * A callback of {@link createWebhookHandler}. `request` is the delivery's `Request`; under `.node`
 * it carries the method, URL and headers of the Node request, but not its body (already read).
 * `context` holds the event's key and, with `confirm`, its confirmation. The return value is
 * awaited and otherwise ignored.
 */
export type WebhookCallback<Event> = (event: Event, request: Request, context: WebhookContext<ConfirmedFor<Event>>) => unknown;

/** What the `confirm` option of {@link createWebhookHandler} needs: a `PaymentClient`, or anything with `webhooks.confirm`. */
export interface WebhookConfirmer {
  /** The client's webhooks namespace. */
  webhooks: {
    /** Confirms an AUTHORISATION or REFUND event through the API (see `client.webhooks.confirm`). */
    confirm(event: AuthorisationEvent | RefundEvent): Promise<ConfirmedWebhook>;
  };
}

/** Options of {@link createWebhookHandler}. At least one of the event callbacks is required. */
export interface WebhookHandlerOptions {
  /**
   * Called with each AUTHORISATION event, the result of a payment: authorised, or refused when its
   * `paymentStatus` is not `AUTHORISED`. Without it, such events are acknowledged and dropped.
   */
  onAuthorisation?: WebhookCallback<AuthorisationEvent> | undefined;
  /** Called with each REFUND event. Without it, such events are acknowledged and dropped. */
  onRefund?: WebhookCallback<RefundEvent> | undefined;
  /** Called with events of any other code. Without it, they are acknowledged and dropped. */
  onUnknown?: WebhookCallback<UnknownWebhookEvent> | undefined;
  /**
   * Called when a callback throws or rejects, before the handler answers 500 (so that the service
   * can redeliver). Its own errors are ignored. Without it, the failure is not reported anywhere
   * but in the status code: pass it to log.
   */
  onError?: ((error: unknown, event: WebhookEvent) => unknown) | undefined;
  /** Bodies larger than this many bytes are refused with 413 before parsing. Default 1 MiB. */
  maxBodyBytes?: number | undefined;
  /**
   * Where events are claimed before their callback runs, so that each event's callback runs to
   * success once per key whatever the deliveries (duplicates, concurrent ones, several instances
   * of the app): `memoryWebhookStore()` for one process, or the SQLite, PostgreSQL and Redis stores
   * of `payment-service-sdk/stores/*`, or your own {@link WebhookStore}. Without it, every delivery
   * runs its callback (as the service delivers at least once, the callback must then be idempotent).
   */
  store?: WebhookStore | undefined;
  /**
   * The key of an event. Default {@link webhookEventKey}. A non-empty string; the store receives it
   * with each NUL, lone surrogate and literal `\u{` escaped as `\u{<hex>}`, as `sha256:<hex>` when
   * that is longer than 500 characters (docs/webhooks.md, "The key of an event").
   */
  eventKey?: ((event: WebhookEvent) => string) | undefined;
  /**
   * How long a claim holds, in ms (default 60 000): a delivery whose process dies mid-callback
   * keeps the event from running elsewhere this long, then the next delivery runs it. Make it
   * longer than your slowest callback, which then runs twice at worst.
   */
  leaseMs?: number | undefined;
  /**
   * Confirms AUTHORISATION and REFUND events through the API (`client.webhooks.confirm`) once
   * claimed, before their callback, which receives the result as `context.confirmed`. An event the
   * API does not confirm is answered 422 and its callback never runs (see {@link createWebhookHandler}).
   */
  confirm?: WebhookConfirmer | undefined;
}

/**
 * The request a Node server hands to `.node`: an `http.IncomingMessage`, Express's `req`, Fastify's
 * `request.raw`. Only what the handler reads is required.
 */
export interface NodeWebhookRequest {
  /** HTTP method; treated as `POST` when absent. */
  method?: string | undefined;
  /** Request target, for the URL of the `Request` handed to callbacks. */
  url?: string | undefined;
  /** Request headers, as Node gives them. */
  headers?: Record<string, string | string[] | undefined> | undefined;
  /**
   * A body already read by a framework (Express's `express.json()`, `express.raw()`,
   * `express.text()`): bytes, a string or a parsed object. When absent (or an empty object, which
   * `express.json()` leaves for bodies it did not parse), the body is read from the stream.
   */
  body?: unknown;
  /** True once the stream was read to its end (by a framework): then it is not read again. */
  readonly readableEnded?: boolean | undefined;
  /** The body stream. */
  [Symbol.asyncIterator]?(): AsyncIterator<Uint8Array | string>;
}

/** The response a Node server hands to `.node`: an `http.ServerResponse`, Express's `res`, Fastify's `reply.raw`. */
export interface NodeWebhookResponse {
  /** Status code of the answer. */
  statusCode: number;
  /** Sets one response header. */
  setHeader(name: string, value: string): unknown;
  /** Sends the body and ends the response. */
  end(body: string): unknown;
  /** True once the headers were sent (by another middleware): then the handler writes nothing. */
  readonly headersSent?: boolean | undefined;
}

/**
 * A webhook endpoint: a fetch-standard handler, `(request: Request) => Promise<Response>`, with a
 * `.node(req, res)` adapter for Node servers. Neither ever rejects.
 */
export interface WebhookHandler {
  /** Handles one delivery (Hono: `(c) => handler(c.req.raw)`; Next.js: `export const POST = handler`; Workers: `fetch: handler`). */
  (request: Request): Promise<Response>;
  /** Handles one delivery on a Node server: `http.createServer(handler.node)`, `app.post('/webhook', handler.node)`. */
  node(req: NodeWebhookRequest, res: NodeWebhookResponse): Promise<void>;
}

interface Reply {
  status: number;
  body: { received: boolean; duplicate?: true; error?: string };
  headers?: Record<string, string>;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_LEASE_MS = 60_000;
const OK: Reply = { status: 200, body: { received: true } };
const FAILED: Reply = { status: 500, body: { received: false } };
const DUPLICATE: Reply = { status: 200, body: { received: true, duplicate: true } };
const TOO_LARGE = Symbol('too large');
const UNREADABLE: Reply = { status: 400, body: { received: false, error: 'The request body could not be read' } };
const NOT_POST: Reply = {
  status: 405,
  body: { received: false, error: 'Method not allowed: webhooks are delivered with POST' },
  headers: { allow: 'POST' },
};

function tooLarge(limit: number): Reply {
  return { status: 413, body: { received: false, error: `The webhook body is larger than ${limit} bytes` } };
}

function declaredTooLarge(length: string | null | undefined, limit: number): boolean {
  return length !== null && length !== undefined && /^\d+$/.test(length.trim()) && Number(length) > limit;
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

async function readFetchBody(request: Request, limit: number): Promise<Uint8Array | typeof TOO_LARGE> {
  if (declaredTooLarge(request.headers.get('content-length'), limit)) return TOO_LARGE;
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return concat(chunks, size);
    size += value.byteLength;
    if (size > limit) {
      reader.cancel().catch(() => undefined);
      return TOO_LARGE;
    }
    chunks.push(value);
  }
}

const encoder = new TextEncoder();

async function readNodeBody(req: NodeWebhookRequest, limit: number): Promise<unknown> {
  const given = req.body;
  const emptyObject = typeof given === 'object' && given !== null && !ArrayBuffer.isView(given) && Object.keys(given).length === 0;
  const stream = req[Symbol.asyncIterator];
  if ((given !== undefined && given !== null && !emptyObject) || typeof stream !== 'function' || req.readableEnded === true) return given;
  const header = req.headers?.['content-length'];
  if (declaredTooLarge(typeof header === 'string' ? header : undefined, limit)) return TOO_LARGE;
  // Read by hand rather than with `for await`: leaving that loop early destroys the socket, and the 413 with it.
  const iterator = stream.call(req);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await iterator.next();
    if (done) break;
    const chunk = typeof value === 'string' ? encoder.encode(value) : value;
    size += chunk.byteLength;
    if (size > limit) return TOO_LARGE;
    chunks.push(chunk);
  }
  // An empty stream after an empty parsed object: the framework consumed the body; parse what it left.
  return size === 0 && emptyObject ? given : concat(chunks, size);
}

/** A `Request` with the method, URL and headers of a Node request, for the callbacks. */
function requestOf(req: NodeWebhookRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers ?? {})) {
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      try {
        headers.append(name, item);
      } catch {
        // A header the fetch API refuses: the callback does without it.
      }
    }
  }
  try {
    return new Request(new URL(req.url ?? '/', `http://${headers.get('host') ?? 'localhost'}`), { method: 'POST', headers });
  } catch {
    return new Request('http://localhost/', { method: 'POST', headers });
  }
}

function positiveInteger(value: number, option: string, unit: string): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new ConfigurationError(option, `${option} must be a positive integer number of ${unit}`);
  return value;
}

function checkOptions(options: WebhookHandlerOptions): { maxBodyBytes: number; leaseMs: number } {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError('handlers', 'createWebhookHandler needs an options object with onAuthorisation, onRefund or onUnknown');
  }
  for (const name of ['onAuthorisation', 'onRefund', 'onUnknown', 'onError', 'eventKey'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw new ConfigurationError(name, `${name} must be a function`);
    }
  }
  if (!options.onAuthorisation && !options.onRefund && !options.onUnknown) {
    throw new ConfigurationError('handlers', 'createWebhookHandler needs at least one of onAuthorisation, onRefund and onUnknown');
  }
  const { store, confirm } = options;
  if (
    store !== undefined &&
    ['claim', 'complete', 'release'].some((name) => typeof (store as unknown as Record<string, unknown>)?.[name] !== 'function')
  ) {
    throw new ConfigurationError('store', 'store must be a WebhookStore: an object with claim, complete and release methods');
  }
  if (confirm !== undefined && typeof confirm?.webhooks?.confirm !== 'function') {
    throw new ConfigurationError('confirm', 'confirm must be a PaymentClient (or anything with webhooks.confirm)');
  }
  return {
    maxBodyBytes: positiveInteger(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, 'maxBodyBytes', 'bytes'),
    leaseMs: positiveInteger(options.leaseMs ?? DEFAULT_LEASE_MS, 'leaseMs', 'milliseconds'),
  };
}

/** The 409 of a delivery that found its event claimed by another: the sender retries after `Retry-After`. */
function inProgress(retryAfterMs: number): Reply {
  const seconds = Number.isFinite(retryAfterMs) ? Math.max(1, Math.ceil(retryAfterMs / 1000)) : 1;
  return {
    status: 409,
    body: { received: false, error: 'This event is in progress in another delivery; retry later' },
    headers: { 'retry-after': String(seconds) },
  };
}

/** The 422 of an event the API does not confirm. The reason only: the record found stays with `onError`. */
function notConfirmed(error: WebhookNotConfirmedError): Reply {
  return { status: 422, body: { received: false, error: `The API does not confirm this webhook (${error.reason})` } };
}

type Deliver = (body: unknown, request: () => Request) => Promise<Reply>;

/** The handler of fetch `Request`s: a POST's body read within the limit and delivered. */
function fetchHandler(answer: Deliver, maxBodyBytes: number): (request: Request) => Promise<Response> {
  return async (request) => {
    let reply: Reply;
    try {
      if (request.method.toUpperCase() !== 'POST') {
        reply = NOT_POST;
      } else {
        let body: Uint8Array | typeof TOO_LARGE | undefined;
        try {
          body = await readFetchBody(request, maxBodyBytes);
        } catch {
          body = undefined;
        }
        reply = body === undefined ? UNREADABLE : body === TOO_LARGE ? tooLarge(maxBodyBytes) : await answer(body, () => request);
      }
    } catch {
      reply = FAILED;
    }
    return new Response(JSON.stringify(reply.body), {
      status: reply.status,
      headers: { 'content-type': 'application/json', ...reply.headers },
    });
  };
}

/** The same for Node's `(req, res)` (Express, `node:http`), a body Express already parsed included. */
function nodeHandler(answer: Deliver, maxBodyBytes: number): (req: NodeWebhookRequest, res: NodeWebhookResponse) => Promise<void> {
  return async (req, res) => {
    let reply: Reply;
    try {
      if ((req.method ?? 'POST').toUpperCase() !== 'POST') {
        reply = NOT_POST;
      } else {
        let body: unknown;
        let readable = true;
        try {
          body = await readNodeBody(req, maxBodyBytes);
        } catch {
          readable = false;
        }
        reply = !readable ? UNREADABLE : body === TOO_LARGE ? tooLarge(maxBodyBytes) : await answer(body, () => requestOf(req));
      }
    } catch {
      reply = FAILED;
    }
    try {
      if (res.headersSent) return;
      res.statusCode = reply.status;
      res.setHeader('content-type', 'application/json');
      for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
      res.end(JSON.stringify(reply.body));
    } catch {
      // The connection is gone: nobody is left to answer.
    }
  };
}

/**
 * Creates a webhook endpoint. Each delivery is read (raw body), parsed with {@link parseWebhook}, and
 * handed to the callback of its event code; the answer follows:
 *
 * | Outcome | Status | Body |
 * |---|---|---|
 * | callback done (or no callback for this code) | 200 | `{ "received": true }` |
 * | with `store`: the event's callback already ran to success | 200 | `{ "received": true, "duplicate": true }` |
 * | with `store`: another delivery is running it now | 409, `Retry-After` | `{ "received": false, "error": "...in progress..." }` |
 * | the API does not confirm the event (`confirm`, or a `WebhookNotConfirmedError` from the callback) | 422 | `{ "received": false, "error": ... }` |
 * | malformed body | 400 | `{ "received": false, "error": "<what is wrong>" }` |
 * | not a POST | 405, `Allow: POST` | `{ "received": false, "error": ... }` |
 * | body over `maxBodyBytes` | 413 | `{ "received": false, "error": ... }` |
 * | callback threw or rejected; the store, `eventKey` or the API call of `confirm` failed | 500 | `{ "received": false }` (the error goes to `onError`, never to the caller) |
 *
 * Every answer but 200 makes the service deliver again later. Without a store, callbacks must be
 * quick and idempotent. With a `store`, the event is claimed (under `eventKey(event)`, for
 * `leaseMs`) before its callback runs: the callback runs to success once per key, across
 * duplicates and instances; when it throws (or `confirm` fails) the claim is released so that the
 * next delivery runs it; when its process dies, the claim ends with its lease. A callback that
 * succeeded but whose `complete` then failed still answers 200 (the work is done; `onError` hears
 * of it, and the claim ends with its lease). Deliveries are not signed: pass `confirm: client`
 * (or call `client.webhooks.confirm(event)`) before shipping goods.
 *
 * ```ts
 * const handler = createWebhookHandler({
 *   store: memoryWebhookStore(), // or sqliteWebhookStore, postgresWebhookStore, redisWebhookStore
 *   confirm: client,
 *   onAuthorisation: async (event, _request, { confirmed }) => {
 *     if (confirmed?.outcome === 'refused') await orders.markFailed(event.data.paymentReference, confirmed.record);
 *     else await orders.markPaid(event.data.paymentReference, confirmed?.record);
 *   },
 *   onError: (error) => logger.error(error),
 * });
 * export const POST = handler;                     // Next.js, Workers, Hono (handler(c.req.raw))
 * app.post('/webhooks/payments', handler.node);    // Express, node:http
 * ```
 *
 * Throws {@link ConfigurationError} when no event callback is given or an option is malformed.
 */
export function createWebhookHandler(options: WebhookHandlerOptions): WebhookHandler {
  const { maxBodyBytes, leaseMs } = checkOptions(options);
  const { onAuthorisation, onRefund, onUnknown, onError, store, confirm, eventKey = webhookEventKey } = options;

  async function report(error: unknown, event: WebhookEvent): Promise<void> {
    try {
      await onError?.(error, event);
    } catch {
      // onError's own failure must not change the answer.
    }
  }

  /** Runs a store step whose failure must not change the answer: it goes to onError. */
  async function quietly(step: () => unknown, event: WebhookEvent): Promise<void> {
    try {
      await step();
    } catch (error) {
      await report(error, event);
    }
  }

  async function deliver(body: unknown, request: () => Request): Promise<Reply> {
    let event: WebhookEvent;
    try {
      event = parseWebhook(body);
    } catch (error) {
      return { status: 400, body: { received: false, error: (error as WebhookParseError).message } };
    }
    const known = isAuthorisationEvent(event) || isRefundEvent(event);
    const callback = (isAuthorisationEvent(event) ? onAuthorisation : isRefundEvent(event) ? onRefund : onUnknown) as
      | WebhookCallback<WebhookEvent>
      | undefined;
    if (!callback) return OK;
    let key = '';
    let token: string | undefined;
    let committed = () => false;
    try {
      key = eventKey(event);
      if (typeof key !== 'string' || key === '') throw new TypeError('eventKey must return a non-empty string');
      key = await storedKey(key);
      if (store) {
        const claim = await store.claim(key, leaseMs);
        if (claim.status === 'done') return DUPLICATE;
        if (claim.status === 'busy') return inProgress(claim.retryAfterMs);
        token = claim.token;
        if (claim.status !== 'claimed' || typeof token !== 'string')
          throw new TypeError('The webhook store answered a claim with neither claimed, done nor busy');
      }
      const confirmed = confirm && known ? await confirm.webhooks.confirm(event as AuthorisationEvent | RefundEvent) : undefined;
      const claimed = claimTransaction(store, key, token);
      committed = claimed.committed;
      const { transaction } = claimed;
      await callback(event, request(), confirm && known ? { key, confirmed, transaction } : { key, transaction });
    } catch (error) {
      // The claim then ends with its lease if release fails: the answer makes the sender retry anyway.
      if (token !== undefined) await quietly(() => store?.release(key, token as string), event);
      await report(error, event);
      return error instanceof WebhookNotConfirmedError ? notConfirmed(error) : FAILED;
    }
    // A complete that fails leaves the claim to end with its lease; the work is done, so the answer is 200.
    if (token !== undefined && !committed()) await quietly(() => store?.complete(key, token as string), event);
    return OK;
  }

  return Object.assign(fetchHandler(deliver, maxBodyBytes), { node: nodeHandler(deliver, maxBodyBytes) });
}
