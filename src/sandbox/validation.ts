/** The checks of request fields the operations share: strings, amounts, URLs, locales, dates, listing parameters, the card form. */
import { isIsoDateTime } from '../schemas/dates.js';
import { isLuhnValid } from '../testing/index.js';
import type { StoredAmount } from './records.js';
import { invalid } from './responses.js';

/**
 * Countries the sandbox accepts (`countryCode`); any other well-formed code answers 12009. The
 * reference does not list the supported countries: the EEA, the United Kingdom, Switzerland and
 * the United States are assumed.
 */
export const SUPPORTED_COUNTRIES = new Set(
  'AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE IS LI NO GB CH US'.split(' '),
);

const CURRENCIES = new Set(['EUR', 'GBP', 'USD']);

type Body = Record<string, unknown>;

/** How deep a request body may nest: the documented bodies nest two levels (`amount.value`). */
export const MAX_BODY_DEPTH = 32;

/** The deepest nesting of arrays and objects in JSON `text`, counted without parsing it. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 92)
        index++; // backslash: skip the escaped character
      else if (char === 34) inString = false;
    } else if (char === 34) inString = true;
    else if (char === 123 || char === 91) deepest = Math.max(deepest, ++depth);
    else if (char === 125 || char === 93) depth--;
  }
  return deepest;
}

/**
 * Parses a JSON object body; anything else answers 400 / 12001. The depth is checked on the text
 * first, so that no body can exhaust the stack of the parser or of the canonical form.
 */
export function jsonObject(text: string): Body {
  if (nestingDepth(text) > MAX_BODY_DEPTH) throw invalid(`Request body nests deeper than ${MAX_BODY_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('Request body must be valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('Request body must be a JSON object');
  return value as Body;
}

export function requiredString(body: Body, field: string): string {
  const value = body[field];
  if (value === undefined || value === null || value === '') throw invalid(`${field} is required`);
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  return value;
}

export function optionalString(body: Body, field: string, max?: number): string | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (max !== undefined && [...value].length > max) throw invalid(`${field} must be at most ${max} characters`);
  return value;
}

export function optionalBoolean(body: Body, field: string): boolean {
  const value = body[field];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid(`${field} must be a boolean`);
  return value;
}

/** `amount.value` a positive integer of cents, `amount.currency` EUR, GBP or USD. */
export function amountOf(body: Body, required: boolean): StoredAmount | null {
  const amount = body.amount;
  if (amount === undefined || amount === null) {
    if (required) throw invalid('amount is required');
    return null;
  }
  if (typeof amount !== 'object' || Array.isArray(amount)) throw invalid('amount must be an object with value and currency');
  const { value, currency } = amount as Body;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw invalid('amount.value must be a positive integer number of cents');
  }
  if (typeof currency !== 'string' || !CURRENCIES.has(currency)) throw invalid('amount.currency must be one of EUR, GBP, USD');
  return { value, currency };
}

/** Whether `text` holds a C0 control, DEL or a C1 control: never part of a URL the sandbox later sends in a `Location`. */
function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

export function httpUrl(body: Body, field: string): string {
  const value = requiredString(body, field);
  if (hasControlCharacter(value)) throw invalid(`${field} must not contain control characters (CR, LF, tab, ...)`);
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // reported below
  }
  throw invalid(`${field} must be a valid http(s) URL`);
}

export function countryCode(body: Body): string {
  const value = body.countryCode;
  if (value === undefined || value === null) return 'ES';
  if (typeof value !== 'string' || !/^[A-Z]{2}$/.test(value)) throw invalid('countryCode must be an ISO 3166-1 alpha-2 code', 12006);
  if (!SUPPORTED_COUNTRIES.has(value)) throw invalid(`Country ${value} is not supported`, 12009);
  return value;
}

/** Tags already found valid: `Intl.getCanonicalLocales` is slow, and shops send a handful of them. */
const validLocales = new Set<string>(['es-ES']);

export function shopperLocale(body: Body): string {
  const value = optionalString(body, 'shopperLocale', 10) ?? 'es-ES';
  if (validLocales.has(value)) return value;
  try {
    if (Intl.getCanonicalLocales(value).length === 1) {
      if (validLocales.size < 1_000) validLocales.add(value);
      return value;
    }
  } catch {
    // reported below
  }
  throw invalid('shopperLocale must be a BCP-47 language tag');
}

export function deliverAt(body: Body): string | null {
  const value = body.deliverAt;
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !isIsoDateTime(value)) {
    throw invalid('deliverAt must be an ISO 8601 date-time', 12002);
  }
  return value;
}

/**
 * `take` 1..100 (default 20), `order` asc/desc (default asc) and the cursor of a listing. A cursor
 * is the order's letter and the `seq` of the last item seen, so a page starts after that item
 * however many were inserted meanwhile.
 */
export function listingParams(query: URLSearchParams): { take: number; order: 'asc' | 'desc'; after: number | null } {
  const rawTake = query.get('take');
  const take = rawTake === null ? 20 : Number(rawTake);
  if (!/^\d+$/.test(rawTake ?? '20') || take < 1 || take > 100) throw invalid('take must be an integer from 1 to 100');
  const order = query.get('order') ?? 'asc';
  if (order !== 'asc' && order !== 'desc') throw invalid('order must be asc or desc');
  const cursor = query.get('cursor');
  if (cursor === null || cursor === '') return { take, order, after: null };
  const decoded = /^([ad])(\d{1,15})$/.exec(cursor);
  if (!decoded) throw invalid('cursor is not valid: pass meta.cursor of the previous page');
  if (decoded[1] !== order[0]) throw invalid(`cursor belongs to a listing in ${order === 'asc' ? 'desc' : 'asc'} order`);
  return { take, order, after: Number(decoded[2]) };
}

/** The cursor of the page after the item with `seq`. */
export function cursorAfter(order: 'asc' | 'desc', seq: number): string {
  return `${order[0]}${seq}`;
}

/** A date filter: `YYYY-MM-DD HH:MM:SS` (UTC, the record format), `YYYY-MM-DD`, or ISO 8601. */
export function dateFilter(query: URLSearchParams, field: string): number | null {
  const value = query.get(field);
  if (value === null || value === '') return null;
  const normalised = /^\d{4}-\d{2}-\d{2}$/.test(value)
    ? `${value}T00:00:00Z`
    : /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$/.test(value)
      ? `${value.replace(' ', 'T')}Z`
      : value;
  const time = Date.parse(normalised);
  if (Number.isNaN(time)) throw invalid(`${field} must be a date (YYYY-MM-DD HH:MM:SS)`);
  return time;
}

/** Why a field of the hosted form was refused; the page words each one in the customer's language. */
export type CardFormProblem =
  | 'cardNumberLength'
  | 'cardNumberLuhn'
  | 'expiryMonth'
  | 'expiryYear'
  | 'expired'
  | 'cvc3'
  | 'cvc4'
  | 'holderNameShort';

/** The hosted form's fields with a problem: the card number, the expiry date (month and year together), the CVC, the name. */
export type CardFormErrors = Partial<Record<'cardNumber' | 'expiry' | 'cvc' | 'holderName', CardFormProblem>>;

/**
 * What the hosted form checks, field by field; an empty object means the card data is acceptable.
 * The month may have one digit or two (`3` or `03`), as customers type it.
 */
export function checkCardForm(
  fields: { cardNumber: string; expiryMonth: string; expiryYear: string; cvc: string; holderName: string },
  now: Date,
): CardFormErrors {
  const errors: CardFormErrors = {};
  const number = fields.cardNumber.replace(/[\s-]/g, '');
  if (!/^\d{13,19}$/.test(number)) errors.cardNumber = 'cardNumberLength';
  else if (!isLuhnValid(number)) errors.cardNumber = 'cardNumberLuhn';
  const month = fields.expiryMonth.trim();
  const year = fields.expiryYear.trim();
  if (!/^(0?[1-9]|1[0-2])$/.test(month)) errors.expiry = 'expiryMonth';
  else if (!/^\d{2}$/.test(year)) errors.expiry = 'expiryYear';
  else {
    const fullYear = 2000 + Number(year);
    const currentYear = now.getUTCFullYear();
    const currentMonth = now.getUTCMonth() + 1;
    if (fullYear < currentYear || (fullYear === currentYear && Number(month) < currentMonth)) errors.expiry = 'expired';
  }
  const amex = /^3[47]/.test(number);
  if (!(amex ? /^\d{4}$/ : /^\d{3}$/).test(fields.cvc.trim())) errors.cvc = amex ? 'cvc4' : 'cvc3';
  if (fields.holderName.trim().length < 3) errors.holderName = 'holderNameShort';
  return errors;
}
