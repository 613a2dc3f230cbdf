import { ApiError, RequestValidationError, type ValidationIssue, WebhookNotConfirmedError } from '../core/errors.js';
import type { Environment } from '../core/options.js';
import type { Paginator } from '../core/pagination.js';
import { timeFromPosPaymentId } from '../core/recovery.js';
import type { RequestOptions } from '../core/transport.js';
import { parseReference, referenceProblem } from '../helpers/references.js';
import { isAuthorisationEvent, isRefundEvent, parseWebhook } from '../helpers/webhooks.js';
import type { Amount } from '../schemas/common.js';
import type { ConfirmedPosPayment, ConfirmedRefund, ConfirmedSessionPayment, ConfirmedWebhook } from '../schemas/confirmed-webhooks.js';
import type { Session } from '../schemas/sessions.js';
import type { AuthorisationEvent, PaymentOutcome, RefundEvent } from '../schemas/webhooks.js';
import type { Modifications } from './modifications.js';
import type { Pos } from './pos.js';
import type { Sessions } from './sessions.js';

export type { ConfirmedPosPayment, ConfirmedRefund, ConfirmedSessionPayment, ConfirmedWebhook };

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

const DEFAULT_MAX_PAGES = 10;
const PAGE_SIZE = 100;
/**
 * Half-width of the listing window around the time a `posPaymentId` carries. Wide on purpose: the
 * time zone of record timestamps (and of the date filters) is not documented, and newest-first
 * order finds a fresh payment on the first page anyway; the window only cuts the scan of old ones.
 */
const POS_WINDOW_MS = 24 * 60 * 60_000;

function show(value: unknown): string {
  return value === undefined || value === null ? 'absent' : JSON.stringify(value);
}

/** One way a record differs from the event, in words: `field is <record's value>, the webhook says <its own words>`. */
function differs(field: string, actual: unknown, says: string): string {
  return `${field} is ${show(actual)}, the webhook says ${says}`;
}

/**
 * The outcome an AUTHORISATION claims, and how to quote that claim in a mismatch. The event code
 * says "authorised"; a `paymentStatus` other than `AUTHORISED` (`REFUSED` for a declined POS
 * payment) says the payment failed.
 */
function paymentClaim(event: AuthorisationEvent): { outcome: PaymentOutcome; says: string } {
  const status = event.data.paymentStatus;
  if (status === undefined || status === null) return { outcome: 'authorised', says: 'an AUTHORISATION with no paymentStatus' };
  return { outcome: status === 'AUTHORISED' ? 'authorised' : 'refused', says: `paymentStatus ${JSON.stringify(status)}` };
}

/** Differences in amount, currency and customReference, for the fields the event carries. */
function compare(
  data: { amount?: number | null | undefined; currency?: string | null | undefined; customReference?: string | null | undefined },
  amount: Amount | null | undefined,
  customReference: string | null | undefined,
): string[] {
  const differences: string[] = [];
  if (typeof data.amount === 'number' && amount?.value !== data.amount) {
    differences.push(differs('amount', amount?.value, show(data.amount)));
  }
  if (typeof data.currency === 'string' && amount?.currency !== data.currency) {
    differences.push(differs('currency', amount?.currency, show(data.currency)));
  }
  if (typeof data.customReference === 'string' && (customReference ?? '') !== data.customReference) {
    differences.push(differs('customReference', customReference, show(data.customReference)));
  }
  return differences;
}

function mismatch(what: string, differences: readonly string[], record: unknown): WebhookNotConfirmedError {
  return new WebhookNotConfirmedError('mismatch', `The API does not confirm ${what}: ${differences.join('; ')}`, record);
}

/**
 * Why `session` does not show payment `reference` as refused, or `undefined` when it does: an
 * attempt with that reference whose status is not `authorised` or, when the attempt's status is
 * not shown, a `failed` session holding it.
 */
function refusalDifference(session: Session, reference: string, says: string): string | undefined {
  const attempt = session.attempts?.find((item) => item.paymentReference === reference);
  if (attempt?.status !== undefined && attempt.status !== null) {
    return attempt.status === 'authorised' ? differs(`the attempt ${reference}`, attempt.status, says) : undefined;
  }
  if (!attempt && session.paymentReference !== reference) {
    return `the session holds no payment ${JSON.stringify(reference)}, the webhook says ${says} for it`;
  }
  return session.status === 'failed' ? undefined : differs('status', session.status, says);
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

function notFound(what: string, endpoint: string, result: { pages: number; exhausted: boolean }, hint = ''): WebhookNotConfirmedError {
  const extent = result.exhausted
    ? `the whole listing (${result.pages} page${result.pages === 1 ? '' : 's'})`
    : `${result.pages} page${result.pages === 1 ? '' : 's'} of ${PAGE_SIZE}, the maxPages limit`;
  return new WebhookNotConfirmedError('not-found', `${what} is not in ${endpoint}: scanned ${extent}${hint}`);
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
   * Re-reads from the API what a webhook claims and resolves with the record that confirms it and
   * the `outcome` it confirms, or rejects with `WebhookNotConfirmedError` (`reason` `not-found`,
   * `mismatch` with the record found, or `unsupported`). `event` is a parsed event or anything
   * `parseWebhook` accepts (a malformed one rejects with `WebhookParseError`).
   *
   * An event is confirmed whatever the outcome it reports: an AUTHORISATION with `paymentStatus`
   * `AUTHORISED` (or none) claims an authorisation, any other `paymentStatus` (`REFUSED` for a
   * declined POS payment) a refusal, and the result's `outcome` is `authorised` or `refused`
   * accordingly ({@link PaymentOutcome}). A REFUND's `status` `success` (or none) gives `refunded`,
   * `failed` gives `failed` ({@link RefundOutcome}). A mismatch message quotes the webhook's own
   * values (`status is "failed", the webhook says paymentStatus "AUTHORISED"`).
   *
   * - **AUTHORISATION of a POS payment** (`paymentReference` `...-POSX[T]-...`): scans
   *   `GET /pos/payments` newest first (within a day of the time the id carries, when it carries one)
   *   for the `posPaymentId`. Authorised when its `status` is `success`, refused when it is `failed`.
   * - **AUTHORISATION of an online payment** (`...-PXT[T]-...`): reads the session, directly when
   *   `options.sessionId` (or a `sessionId` in the event's data) names it, otherwise after finding
   *   it in `GET /payment/sessions` with status `completed` (`failed` for a refusal). Authorised when
   *   the session is `completed`, holds this `paymentReference`, and its `paymentStatus` (when
   *   present) is `AUTHORISED`. Refused when the session's attempt with this `paymentReference` is
   *   not `authorised` (or, when attempts are not shown, the session holding it is `failed`).
   * - **REFUND**: scans `GET /modifications?type=refund` for the `refundReference`. Confirmed when
   *   its `paymentReference` is the event's and its `status` is the event's (`success` when the
   *   event has none); a REFUND with another `status` rejects with `unsupported`.
   * - Any other event code, or a `paymentReference` in no documented format, rejects with `unsupported`.
   *
   * In every case the event's `amount`, `currency` and `customReference`, when it carries them,
   * must equal the record's. A confirmed result says that this payment (or refund) exists and has
   * that outcome for that amount; check yourself that its reference belongs to the order you are
   * about to ship, and that the amount is the order's.
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
    const { outcome, says } = paymentClaim(event);
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
    if (payment.status !== (outcome === 'authorised' ? 'success' : 'failed')) differences.unshift(differs('status', payment.status, says));
    if (differences.length > 0)
      throw mismatch(`the ${outcome === 'authorised' ? 'authorisation' : 'refusal'} of POS payment ${reference}`, differences, payment);
    return { kind: 'posPayment', outcome, event, record: payment };
  }

  async #confirmSession(
    event: AuthorisationEvent,
    knownSessionId: string | undefined,
    { maxPages, request }: ReturnType<typeof checkOptions>,
  ): Promise<ConfirmedSessionPayment> {
    const reference = event.data.paymentReference;
    const { outcome, says } = paymentClaim(event);
    let sessionId = knownSessionId;
    if (sessionId === undefined) {
      const status = outcome === 'authorised' ? 'completed' : 'failed';
      const listing = this.#sources.sessions.list({ status, take: PAGE_SIZE }, request);
      const result = await scan(listing, maxPages, (item) => item.paymentReference === reference);
      if (!result.found) {
        const hint = '; pass options.sessionId to read its session directly';
        throw notFound(`A ${status} session holding payment ${reference}`, `GET /payment/sessions?status=${status}`, result, hint);
      }
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
    const differences: string[] = [];
    if (outcome === 'refused') {
      const refusal = refusalDifference(session, reference, says);
      if (refusal) differences.push(refusal);
    } else {
      if (session.status !== 'completed') differences.push(differs('status', session.status, says));
      if (session.paymentReference !== reference) differences.push(differs('paymentReference', session.paymentReference, show(reference)));
      if (session.paymentStatus !== undefined && session.paymentStatus !== null && session.paymentStatus !== 'AUTHORISED') {
        differences.push(differs('paymentStatus', session.paymentStatus, says));
      }
    }
    differences.push(...compare(event.data, session.amount, session.customReference));
    if (differences.length > 0) {
      const what = `the ${outcome === 'authorised' ? 'authorisation' : 'refusal'} of payment ${reference} (session ${session.sessionId})`;
      throw mismatch(what, differences, session);
    }
    return { kind: 'session', outcome, event, record: session };
  }

  async #confirmRefund(event: RefundEvent, { maxPages, request }: ReturnType<typeof checkOptions>): Promise<ConfirmedRefund> {
    const { refundReference, paymentReference, status } = event.data;
    const foreign = this.#foreign('refundReference', refundReference) ?? this.#foreign('paymentReference', paymentReference);
    if (foreign) throw foreign;
    const claimed = status ?? 'success';
    if (claimed !== 'success' && claimed !== 'failed') {
      throw new WebhookNotConfirmedError(
        'unsupported',
        `The REFUND webhook's status ${JSON.stringify(claimed)} is not a resolution the SDK can confirm (success or failed)`,
      );
    }
    const says = status === undefined || status === null ? 'a REFUND with no status' : `status ${JSON.stringify(status)}`;
    const listing = this.#sources.modifications.list({ type: 'refund', take: PAGE_SIZE }, request);
    const result = await scan(listing, maxPages, (record) => record.operationReference === refundReference);
    const refund = result.found;
    if (!refund) throw notFound(`The refund ${refundReference}`, 'GET /modifications?type=refund', result);
    const differences: string[] = [];
    if (refund.status !== claimed) differences.push(differs('status', refund.status, says));
    if (refund.paymentReference !== paymentReference) {
      differences.push(differs('paymentReference', refund.paymentReference, show(paymentReference)));
    }
    // A modification record carries no customReference to compare.
    differences.push(...compare({ amount: event.data.amount, currency: event.data.currency }, refund.amount, undefined));
    if (differences.length > 0) throw mismatch(`the refund ${refundReference}`, differences, refund);
    return { kind: 'refund', outcome: claimed === 'success' ? 'refunded' : 'failed', event, record: refund };
  }
}
