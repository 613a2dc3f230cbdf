import { ApiError, RequestValidationError, type ValidationIssue, WebhookNotConfirmedError } from '../core/errors.js';
import type { Environment } from '../core/options.js';
import type { Paginator } from '../core/pagination.js';
import { timeFromPosPaymentId } from '../core/recovery.js';
import type { RequestOptions } from '../core/transport.js';
import { parseReference, referenceProblem } from '../helpers/references.js';
import { isAuthorisationEvent, isRefundEvent, parseWebhook } from '../helpers/webhooks.js';
import type { Amount } from '../schemas/common.js';
import type { ModificationRecord } from '../schemas/modifications.js';
import type { PosPayment } from '../schemas/pos.js';
import type { Session } from '../schemas/sessions.js';
import type { AuthorisationEvent, RefundEvent } from '../schemas/webhooks.js';
import type { Modifications } from './modifications.js';
import type { Pos } from './pos.js';
import type { Sessions } from './sessions.js';

/** The namespaces webhook confirmation reads through. */
export interface WebhookSources {
  sessions: Sessions;
  pos: Pos;
  modifications: Modifications;
  /** The client's environment: when given, a reference of the other environment is refused without a request. */
  environment?: Environment | undefined;
  /** The client's webcode: when given, a reference of another webcode is refused without a request. */
  webcode?: string | undefined;
}

/** Options of `client.webhooks.confirm`. `signal`, `timeout`, `maxRetries` and `headers` apply to each request. */
export interface ConfirmWebhookOptions extends Omit<RequestOptions, 'idempotencyKey'> {
  /**
   * Pages of a listing scanned at most (100 records each) before giving up with `not-found`.
   * Default 10. This bounds the cost: see `confirm`.
   */
  maxPages?: number | undefined;
  /**
   * The `sessionId` of the online payment, when you know it (you stored it when creating the
   * session). The session is then read directly: one request, no listing scan. An unknown
   * `sessionId` field in the event's `data` is used the same way.
   */
  sessionId?: string | undefined;
}

/** An AUTHORISATION of a POS payment, confirmed by `GET /pos/payments`. */
export interface ConfirmedPosPayment {
  /** Confirmed through the POS payments listing. */
  kind: 'posPayment';
  /** The event, as parsed. */
  event: AuthorisationEvent;
  /** The payment as the API returned it: `status` `success`, the event's amount. */
  record: PosPayment;
}

/** An AUTHORISATION of an online payment, confirmed by its session. */
export interface ConfirmedSessionPayment {
  /** Confirmed through the payment's session. */
  kind: 'session';
  /** The event, as parsed. */
  event: AuthorisationEvent;
  /** The session as `GET /payment/session/{sessionId}` returned it: `completed`, holding the event's payment. */
  record: Session;
}

/** A REFUND, confirmed by `GET /modifications?type=refund`. */
export interface ConfirmedRefund {
  /** Confirmed through the modifications listing. */
  kind: 'refund';
  /** The event, as parsed. */
  event: RefundEvent;
  /** The refund as the API returned it: `status` `success`, the event's payment and amount. */
  record: ModificationRecord;
}

/** What `client.webhooks.confirm` resolves to: the event and the record that confirms it, by `kind`. */
export type ConfirmedWebhook = ConfirmedPosPayment | ConfirmedSessionPayment | ConfirmedRefund;

const DEFAULT_MAX_PAGES = 10;
const PAGE_SIZE = 100;
/**
 * Half-width of the listing window around the time a `posPaymentId` carries. Wide on purpose: the
 * time zone of record timestamps (and of the date filters) is not documented, and newest-first
 * order finds a fresh payment on the first page anyway; the window only cuts the scan of old ones.
 */
const POS_WINDOW_MS = 24 * 60 * 60_000;

/** One field of a record that does not say what the event says. */
interface Difference {
  field: string;
  actual: unknown;
  expected: unknown;
}

function show(value: unknown): string {
  return value === undefined || value === null ? 'absent' : JSON.stringify(value);
}

/** Differences in amount, currency and customReference, for the fields the event carries. */
function compare(
  data: { amount?: number | null | undefined; currency?: string | null | undefined; customReference?: string | null | undefined },
  amount: Amount | null | undefined,
  customReference: string | null | undefined,
): Difference[] {
  const differences: Difference[] = [];
  if (typeof data.amount === 'number' && amount?.value !== data.amount) {
    differences.push({ field: 'amount', actual: amount?.value, expected: data.amount });
  }
  if (typeof data.currency === 'string' && amount?.currency !== data.currency) {
    differences.push({ field: 'currency', actual: amount?.currency, expected: data.currency });
  }
  if (typeof data.customReference === 'string' && (customReference ?? '') !== data.customReference) {
    differences.push({ field: 'customReference', actual: customReference, expected: data.customReference });
  }
  return differences;
}

function mismatch(what: string, differences: readonly Difference[], record: unknown): WebhookNotConfirmedError {
  const details = differences.map((d) => `${d.field} is ${show(d.actual)}, the webhook says ${show(d.expected)}`).join('; ');
  return new WebhookNotConfirmedError('mismatch', `The API does not confirm ${what}: ${details}`, record);
}

/** Scans a listing page by page, newest pages first where the listing allows, stopping at the first match. */
async function scan<T>(
  listing: Paginator<T>,
  maxPages: number,
  matches: (item: T) => boolean,
): Promise<{ found: T | undefined; pages: number; exhausted: boolean }> {
  let pages = 0;
  for await (const page of listing.pages()) {
    pages += 1;
    const found = page.items.find(matches);
    if (found) return { found, pages, exhausted: false };
    if (!page.hasMore || page.cursor === null) return { found: undefined, pages, exhausted: true };
    if (pages >= maxPages) break;
  }
  return { found: undefined, pages, exhausted: pages < maxPages };
}

function notFound(what: string, endpoint: string, result: { pages: number; exhausted: boolean }): WebhookNotConfirmedError {
  const extent = result.exhausted
    ? `the whole listing (${result.pages} page${result.pages === 1 ? '' : 's'})`
    : `${result.pages} page${result.pages === 1 ? '' : 's'} of ${PAGE_SIZE}, the maxPages limit`;
  return new WebhookNotConfirmedError('not-found', `${what} is not in ${endpoint}: scanned ${extent}`);
}

function checkOptions(options: ConfirmWebhookOptions): { maxPages: number; sessionId: string | undefined; request: RequestOptions } {
  const { maxPages = DEFAULT_MAX_PAGES, sessionId, ...request } = options;
  const issues: ValidationIssue[] = [];
  if (!Number.isSafeInteger(maxPages) || maxPages < 1) issues.push({ path: 'options.maxPages', message: 'must be an integer >= 1' });
  if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId === '')) {
    issues.push({ path: 'options.sessionId', message: 'must be a non-empty string' });
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
  return { maxPages, sessionId, request };
}

/**
 * Confirms webhook deliveries against the API. Deliveries are not signed, so anyone who knows
 * the endpoint can post one: read the authoritative state back before shipping goods.
 */
export class Webhooks {
  readonly #sources: WebhookSources;

  constructor(sources: WebhookSources) {
    this.#sources = sources;
  }

  /**
   * Re-reads from the API what a webhook claims and resolves with the record that confirms it,
   * or rejects with `WebhookNotConfirmedError` (`reason` `not-found`, `mismatch` with the record
   * found, or `unsupported`). `event` is a parsed event or anything `parseWebhook` accepts (a
   * malformed one rejects with `WebhookParseError`).
   *
   * - **AUTHORISATION of a POS payment** (`paymentReference` `...-POSX[T]-...`): scans
   *   `GET /pos/payments` newest first (within a day of the time the id carries, when it carries one)
   *   for the `posPaymentId`. Confirmed when its `status` is `success`.
   * - **AUTHORISATION of an online payment** (`...-PXT[T]-...`): reads the session, directly when
   *   `options.sessionId` (or a `sessionId` in the event's data) names it, otherwise after finding
   *   it in `GET /payment/sessions?status=completed`. Confirmed when the session is `completed`,
   *   holds this `paymentReference`, and its `paymentStatus` (when present) is `AUTHORISED`.
   * - **REFUND**: scans `GET /modifications?type=refund` for the `refundReference`. Confirmed when
   *   its `status` is `success` and its `paymentReference` is the event's.
   * - Any other event code, or a `paymentReference` in no documented format, rejects with `unsupported`.
   *
   * In every case the event's `amount`, `currency` and `customReference`, when it carries them,
   * must equal the record's. A confirmed result says that this payment (or refund) exists and is
   * authorised (or succeeded) for that amount; check yourself that its reference belongs to the
   * order you are about to ship.
   *
   * **Cost.** At most `maxPages` listing requests (default 10, 100 records each), plus one session
   * read for an online payment; with a known `sessionId`, one request. A fresh event is normally
   * found on the first page. The sessions and modifications listings have no documented order: if
   * the service lists oldest first, a busy account's recent records lie beyond the scan, so pass
   * `sessionId` for online payments. Since anyone can post a fake event, each one costs you these
   * requests: confirm after cheap checks (is the reference one of your open orders?), not before.
   */
  confirm(event: AuthorisationEvent, options?: ConfirmWebhookOptions): Promise<ConfirmedPosPayment | ConfirmedSessionPayment>;
  confirm(event: RefundEvent, options?: ConfirmWebhookOptions): Promise<ConfirmedRefund>;
  confirm(event: unknown, options?: ConfirmWebhookOptions): Promise<ConfirmedWebhook>;
  async confirm(event: unknown, options: ConfirmWebhookOptions = {}): Promise<ConfirmedWebhook> {
    const settings = checkOptions(options);
    const parsed = parseWebhook(event);
    if (isAuthorisationEvent(parsed)) return this.#confirmAuthorisation(parsed, settings);
    if (isRefundEvent(parsed)) return this.#confirmRefund(parsed, settings);
    throw new WebhookNotConfirmedError(
      'unsupported',
      `${parsed.event_code} webhooks cannot be confirmed: the reference documents no way to look them up`,
    );
  }

  /** A reference of another environment or webcode cannot be in this account's listings. */
  #foreign(field: string, reference: unknown): WebhookNotConfirmedError | undefined {
    const { environment, webcode } = this.#sources;
    if (environment === undefined || webcode === undefined) return undefined;
    const problem = referenceProblem(reference, environment, webcode);
    return problem ? new WebhookNotConfirmedError('not-found', `The webhook's ${field} ${String(reference)} ${problem}`) : undefined;
  }

  async #confirmAuthorisation(event: AuthorisationEvent, settings: ReturnType<typeof checkOptions>): Promise<ConfirmedWebhook> {
    const reference = event.data.paymentReference;
    const foreign = this.#foreign('paymentReference', reference);
    if (foreign) throw foreign;
    const kind = parseReference(reference)?.kind;
    const sessionId =
      settings.sessionId ?? (typeof event.data.sessionId === 'string' && event.data.sessionId !== '' ? event.data.sessionId : undefined);
    if (kind === 'posPayment') return this.#confirmPos(event, settings);
    if (kind === 'payment' || sessionId !== undefined) return this.#confirmSession(event, sessionId, settings);
    throw new WebhookNotConfirmedError(
      'unsupported',
      `The AUTHORISATION webhook's paymentReference ${reference} is neither an online payment reference nor a posPaymentId; pass options.sessionId to confirm it through its session`,
    );
  }

  async #confirmPos(event: AuthorisationEvent, { maxPages, request }: ReturnType<typeof checkOptions>): Promise<ConfirmedPosPayment> {
    const reference = event.data.paymentReference;
    const created = timeFromPosPaymentId(reference);
    const window =
      created && !Number.isNaN(created.getTime())
        ? { createdAtStart: new Date(created.getTime() - POS_WINDOW_MS), createdAtEnd: new Date(created.getTime() + POS_WINDOW_MS) }
        : {};
    const listing = this.#sources.pos.list({ ...window, order: 'desc', take: PAGE_SIZE }, request);
    const result = await scan(listing, maxPages, (payment) => payment.posPaymentId === reference || payment.paymentReference === reference);
    const payment = result.found;
    if (!payment) throw notFound(`The POS payment ${reference}`, 'GET /pos/payments', result);
    const differences = compare(event.data, payment.amount, payment.customReference);
    if (payment.status !== 'success') differences.unshift({ field: 'status', actual: payment.status, expected: 'success' });
    if (differences.length > 0) throw mismatch(`the authorisation of POS payment ${reference}`, differences, payment);
    return { kind: 'posPayment', event, record: payment };
  }

  async #confirmSession(
    event: AuthorisationEvent,
    knownSessionId: string | undefined,
    { maxPages, request }: ReturnType<typeof checkOptions>,
  ): Promise<ConfirmedSessionPayment> {
    const reference = event.data.paymentReference;
    let sessionId = knownSessionId;
    if (sessionId === undefined) {
      const listing = this.#sources.sessions.list({ status: 'completed', take: PAGE_SIZE }, request);
      const result = await scan(listing, maxPages, (item) => item.paymentReference === reference);
      if (!result.found) throw notFound(`No completed session holding payment ${reference}`, 'GET /payment/sessions', result);
      sessionId = result.found.sessionId;
    }
    let session: Session;
    try {
      session = await this.#sources.sessions.retrieve(sessionId, request);
    } catch (error) {
      // A sessionId of another webcode or environment (refused before sending), or one the service does not know.
      if (error instanceof RequestValidationError || (error instanceof ApiError && error.status === 404)) {
        throw new WebhookNotConfirmedError(
          'not-found',
          `The session ${sessionId} of payment ${reference} cannot be read: ${error.message}`,
        );
      }
      throw error;
    }
    const differences: Difference[] = [];
    if (session.status !== 'completed') differences.push({ field: 'status', actual: session.status, expected: 'completed' });
    if (session.paymentReference !== reference)
      differences.push({ field: 'paymentReference', actual: session.paymentReference, expected: reference });
    if (session.paymentStatus !== undefined && session.paymentStatus !== null && session.paymentStatus !== 'AUTHORISED') {
      differences.push({ field: 'paymentStatus', actual: session.paymentStatus, expected: 'AUTHORISED' });
    }
    differences.push(...compare(event.data, session.amount, session.customReference));
    if (differences.length > 0)
      throw mismatch(`the authorisation of payment ${reference} (session ${session.sessionId})`, differences, session);
    return { kind: 'session', event, record: session };
  }

  async #confirmRefund(event: RefundEvent, { maxPages, request }: ReturnType<typeof checkOptions>): Promise<ConfirmedRefund> {
    const { refundReference, paymentReference } = event.data;
    const foreign = this.#foreign('refundReference', refundReference) ?? this.#foreign('paymentReference', paymentReference);
    if (foreign) throw foreign;
    const listing = this.#sources.modifications.list({ type: 'refund', take: PAGE_SIZE }, request);
    const result = await scan(listing, maxPages, (record) => record.operationReference === refundReference);
    const refund = result.found;
    if (!refund) throw notFound(`The refund ${refundReference}`, 'GET /modifications?type=refund', result);
    const differences: Difference[] = [];
    if (refund.status !== 'success') differences.push({ field: 'status', actual: refund.status, expected: 'success' });
    if (refund.paymentReference !== paymentReference) {
      differences.push({ field: 'paymentReference', actual: refund.paymentReference, expected: paymentReference });
    }
    // A modification record carries no customReference to compare.
    differences.push(...compare({ amount: event.data.amount, currency: event.data.currency }, refund.amount, undefined));
    if (differences.length > 0) throw mismatch(`the refund ${refundReference}`, differences, refund);
    return { kind: 'refund', event, record: refund };
  }
}
