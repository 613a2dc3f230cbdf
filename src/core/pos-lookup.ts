/**
 * Finding a POS charge in `GET /pos/payments`: by its `posPaymentId` once known, otherwise by what
 * it was sent with. Reads only; recovery's polls and `pos.checkPayment` share it.
 */
import type { CreatePosPaymentParams, ListPosPaymentsParams, PosPayment } from '../schemas/pos.js';
import type { APIPromise } from './api-promise.js';
import type { PosRecoveryState } from './errors.js';
import type { Logger } from './options.js';
import type { Paginator } from './pagination.js';
import type { RequestOptions } from './transport.js';

/** What recovery needs from the POS resource: one raw charge and the listing. */
export interface PosOperations {
  charge(params: CreatePosPaymentParams, options: RequestOptions): APIPromise<PosPayment>;
  list(params: ListPosPaymentsParams, options: RequestOptions): Paginator<PosPayment>;
  logger: Logger | undefined;
}

/**
 * Slack around the listing window. The time zone of record timestamps is not documented: a known
 * id is looked for over a day either side (newest first, so it is on the first page anyway); a
 * charge matched by terminal and amount only, where a wide window would make look-alikes, over 5 minutes.
 */
const WINDOW_SLACK_MS = { byId: 24 * 3_600_000, byCharge: 5 * 60_000 };
/** Pages scanned per look; the window is narrow, so more means something is wrong. */
const MAX_SCAN_PAGES = 10;

/** Whether `payment` describes the charge of `params`. */
export function sameCharge(payment: PosPayment, params: CreatePosPaymentParams): boolean {
  return (
    payment.poiId === params.poiId &&
    payment.amount.value === params.amount.value &&
    payment.amount.currency === params.amount.currency &&
    (params.customReference === undefined || payment.customReference === params.customReference)
  );
}

/**
 * Whether a record matched by its charge alone may be this state's: not created before the second
 * the state was made (record timestamps have whole seconds and read as UTC, as the sandbox writes
 * them). An earlier record with the same terminal, amount and reference is an earlier attempt of
 * the same order, which was final before this one was prepared. A timestamp that does not read as
 * one excludes nothing.
 */
function notBefore(payment: PosPayment, sentAt: number): boolean {
  const created = typeof payment.createdAt === 'string' ? Date.parse(`${payment.createdAt.replace(' ', 'T')}Z`) : Number.NaN;
  return Number.isNaN(created) || created >= Math.floor(sentAt / 1000) * 1000;
}

/** A record found, with the listing's last answer. */
export interface Found {
  payment: PosPayment;
  response: Response | undefined;
}

/**
 * The charge of `state` in the listing, or undefined: none found, or (matched by its charge alone)
 * several alike, which cannot be told apart, so nothing is guessed. `hint` is an unverified id (a
 * webhook's): it must also describe the charge. Failures of the listing are thrown as they are.
 */
export async function findCharge(
  ops: PosOperations,
  state: PosRecoveryState,
  signal: AbortSignal | undefined,
  hint?: string,
): Promise<Found | undefined> {
  const { params } = state;
  const id = state.posPaymentId ?? hint;
  if (!id && !params) return undefined;
  const sentAt = state.sentAt ? Date.parse(state.sentAt) : Number.NaN;
  const filters: ListPosPaymentsParams = { take: 100, order: 'desc' };
  if (!Number.isNaN(sentAt)) {
    const slack = id ? WINDOW_SLACK_MS.byId : WINDOW_SLACK_MS.byCharge;
    filters.createdAtStart = new Date(sentAt - slack);
    filters.createdAtEnd = new Date(Date.now() + slack);
  }
  const listing = ops.list(filters, signal ? { signal } : {});
  const candidates: PosPayment[] = [];
  let pages = 0;
  for await (const page of listing.pages()) {
    let older = false;
    for (const payment of page.items) {
      const recent = Number.isNaN(sentAt) || notBefore(payment, sentAt);
      older ||= !recent;
      const matches = id
        ? payment.posPaymentId === id && (id !== hint || !params || sameCharge(payment, params))
        : params && sameCharge(payment, params) && recent;
      if (matches) candidates.push(payment);
    }
    // Newest first: past a record older than the state, no later page holds a match by charge.
    if ((id && candidates.length > 0) || (!id && older) || ++pages >= MAX_SCAN_PAGES) break;
  }
  const [match] = candidates;
  if (!match || (!id && candidates.length > 1)) return undefined;
  return { payment: match, response: listing.lastResponse };
}
