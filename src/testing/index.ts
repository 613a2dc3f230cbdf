/**
 * Test-mode kit: the values the service's Test environment reacts to, so tests and demos need not
 * re-derive them. Import from `payment-service-sdk/testing`.
 */

/** What the Test payment form does for a cardholder name. */
export interface CardholderOutcome {
  /** `declined` by the simulated issuer, or a processor `error`. */
  result: 'declined' | 'error';
  /** The reference's wording. */
  description: string;
}

/**
 * Cardholder names that make the Test payment form fail (compared case-insensitively). Any other
 * name of at least 3 characters pays, for example {@link TEST_SUCCESS_CARDHOLDER}.
 */
export const TEST_CARDHOLDER_NAMES = {
  DECLINED: { result: 'declined', description: 'declined, generic' },
  CARD_EXPIRED: { result: 'declined', description: 'declined, expired card' },
  INVALID_CARD: { result: 'declined', description: 'declined, invalid card number' },
  NOT_ENOUGH_BALANCE: { result: 'declined', description: 'declined, insufficient balance' },
  CVC_DECLINED: { result: 'declined', description: 'declined, CVC declined' },
  FRAUD: { result: 'declined', description: 'declined, fraud detected' },
  ERROR: { result: 'error', description: 'processor (acquirer) error' },
} as const satisfies Record<string, CardholderOutcome>;

/** A cardholder name with a scripted failure on the Test form. */
export type TestCardholderName = keyof typeof TEST_CARDHOLDER_NAMES;

/** A cardholder name that pays on the Test form. */
export const TEST_SUCCESS_CARDHOLDER = 'Jane Tester';

/** A test card: Luhn-valid number, CVC of the right length, and an expiry years ahead. */
export interface TestCard {
  brand: 'visa' | 'mastercard' | 'amex';
  number: string;
  cvc: string;
  /** `MM`. */
  expiryMonth: string;
  /** `YY`, a few years after the current one. */
  expiryYear: string;
}

const expiryYear = String((new Date().getUTCFullYear() + 4) % 100).padStart(2, '0');

/** Luhn-valid card numbers of each type the Test form checks (3-digit CVC for Visa and Mastercard, 4 for Amex). */
export const TEST_CARDS = {
  visa: { brand: 'visa', number: '4111111111111111', cvc: '123', expiryMonth: '12', expiryYear },
  mastercard: { brand: 'mastercard', number: '5555555555554444', cvc: '123', expiryMonth: '12', expiryYear },
  amex: { brand: 'amex', number: '378282246310005', cvc: '1234', expiryMonth: '12', expiryYear },
} as const satisfies Record<string, TestCard>;

/** A simulated Test terminal. */
export interface TestTerminal {
  poiId: string;
  name: string;
  model: string;
  /** Online terminals take payments and are listed with `syncFromProvider: true`; the offline one answers 502 / 13004. */
  online: boolean;
}

/** The three terminals of the Test environment: the only `poiId` values Test POS payments accept. */
export const TEST_TERMINALS = [
  { poiId: 'V400m-TEST-000001', name: 'Terminal Test 1 - Mostrador', model: 'V400m', online: true },
  { poiId: 'S1F2-TEST-000002', name: 'Terminal Test 2 - Terraza', model: 'S1F2', online: true },
  { poiId: 'P400Plus-TEST-000003', name: 'Terminal Test 3 - Almacen', model: 'P400Plus', online: false },
] as const satisfies readonly TestTerminal[];

/** What a Test POS payment on an online terminal does, decided by the last two digits of the amount. */
export type PosTestOutcome = 'success' | 'failed' | 'timeout' | 'busy';

/** The amount endings of the Test POS simulation. */
export const POS_TEST_ENDINGS = { failed: 77, timeout: 99, busy: 55 } as const;

/**
 * An amount in cents that makes a Test POS payment end with `outcome`: `failed` ends in 77 (200,
 * declined), `timeout` in 99 (200, `timeout`), `busy` in 55 (409 / 13005), `success` in 00. The
 * whole units come from `baseCents` (default 1 000, so `posTestAmount('failed')` is 1 077).
 */
export function posTestAmount(outcome: PosTestOutcome, baseCents = 1_000): number {
  if (!Number.isSafeInteger(baseCents) || baseCents < 0) throw new RangeError('baseCents must be a non-negative integer');
  const units = Math.floor(baseCents / 100) * 100;
  if (outcome === 'success') return units === 0 ? 100 : units;
  const ending = POS_TEST_ENDINGS[outcome];
  if (ending === undefined) throw new RangeError(`Unknown POS test outcome: ${String(outcome)}`);
  return units + ending;
}

/** The Luhn check the Test form applies to card numbers. */
export function isLuhnValid(number: string): boolean {
  if (!/^\d+$/.test(number)) return false;
  let sum = 0;
  for (let index = 0; index < number.length; index++) {
    let digit = Number(number[number.length - 1 - index]);
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** How {@link payTestSession} fills the hosted page. */
export interface PayTestSessionOptions {
  /** Cardholder name: one of {@link TEST_CARDHOLDER_NAMES} for a scripted failure. Default {@link TEST_SUCCESS_CARDHOLDER}. */
  holderName?: string | undefined;
  /** The card to enter. Default `TEST_CARDS.visa`. */
  card?: TestCard | undefined;
  /** A fetch implementation to use instead of the global one. */
  fetch?: typeof globalThis.fetch | undefined;
}

/** What the hosted page did with the form. */
export interface TestPaymentOutcome {
  /** The customer was sent to `urlOk` with its `data` token: the session is paid. */
  paid: boolean;
  /** Where the page sends the customer (`urlOk?data=...` or `urlKo`); `undefined` when it showed the form again (a field error). */
  redirectUrl: string | undefined;
  /** The `data` token of the `urlOk` redirect, for `decodeRedirectData`. */
  data: string | undefined;
  /** HTTP status of the page's answer. */
  status: number;
}

/**
 * The redirect of an answer: `Location` (303), a `Refresh` header, or the `href` of the page's
 * "Return to the shop" link (the `<a>` with `data-return`, its attributes in any order).
 */
function redirectOf(response: Response, html: string): string | undefined {
  const location = response.headers.get('location');
  if (location) return new URL(location, response.url || undefined).href;
  const refresh = /url=(.*)$/i.exec(response.headers.get('refresh') ?? '')?.[1]?.trim();
  if (refresh) return refresh;
  const link = /<a\b(?=[^>]*\sdata-return[\s=>])[^>]*\shref="([^"]*)"/i.exec(html)?.[1];
  const entities: Record<string, string> = { amp: '&', quot: '"', apos: "'", lt: '<', gt: '>' };
  return link?.replace(/&(?:#(\d+)|#x([\da-f]+)|(amp|quot|apos|lt|gt));/gi, (entity, decimal?: string, hex?: string, name?: string) =>
    decimal || hex
      ? String.fromCodePoint(Number.parseInt(decimal ?? hex ?? '', decimal ? 10 : 16))
      : (entities[name?.toLowerCase() ?? ''] ?? entity),
  );
}

/**
 * Pays a session on the sandbox's hosted page (`session.paymentUrl`) the way a customer would,
 * without a browser: posts the card form with a test card and `holderName`, and reports where the
 * page sends the customer. The real service's page needs a browser; this is for the sandbox.
 *
 * ```ts
 * const outcome = await payTestSession(session.paymentUrl);                          // pays
 * const declined = await payTestSession(session.paymentUrl, { holderName: 'DECLINED' }); // urlKo
 * ```
 */
export async function payTestSession(paymentUrl: string, options: PayTestSessionOptions = {}): Promise<TestPaymentOutcome> {
  const card = options.card ?? TEST_CARDS.visa;
  const form = new URLSearchParams({
    cardNumber: card.number,
    expiryMonth: card.expiryMonth,
    expiryYear: card.expiryYear,
    cvc: card.cvc,
    holderName: options.holderName ?? TEST_SUCCESS_CARDHOLDER,
    action: 'pay',
  });
  const response = await (options.fetch ?? globalThis.fetch)(paymentUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    redirect: 'manual',
  });
  const html = await response.text();
  const redirectUrl = redirectOf(response, html);
  const data = redirectUrl === undefined ? undefined : (new URL(redirectUrl).searchParams.get('data') ?? undefined);
  return { paid: data !== undefined, redirectUrl, data, status: response.status };
}

export { type SandboxTenant, type SandboxTenantOptions, sandboxTenant } from './tenant.js';
