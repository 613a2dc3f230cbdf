/**
 * Amounts on the command line: integer minor units (cents) written as plain digits, and nothing
 * else. `15.00` would otherwise reach the service as 15 cents and `1e3` as 1000, so every way of
 * writing an amount (`--amount`, `--param amount=`, `--param refundAmount=`, `--override session.amount.value=`) goes through
 * {@link parseAmount} before anything is sent.
 */
import { UsageError } from './io.js';

/** How the amount is given: `--amount`, a `--param key` of `trigger`, or an `--override step.field` of a fixture. */
export type AmountFlag = `--amount` | `--param ${string}` | `--override ${string}`;

/** `flag` set to `value`, as it is typed. */
function typed(flag: AmountFlag, value: number | string): string {
  return flag === '--amount' ? `--amount ${value}` : `${flag}=${value}`;
}

/** The cents a decimal amount such as `15.00` or `15,5` means, when it is one. */
function centsOfDecimal(text: string): { major: string; minor: string; cents: number } | undefined {
  const match = /^(\d{1,13})[.,](\d{1,2})$/.exec(text.trim());
  if (!match) return undefined;
  const major = match[1] ?? '0';
  const minor = (match[2] ?? '').padEnd(2, '0');
  return { major: String(Number(major)), minor, cents: Number(major) * 100 + Number(minor) };
}

/**
 * The cents `text` says, which must be plain digits (`/^[0-9]+$/`, a safe integer); anything else
 * (`15.00`, `1e3`, `0x10`, `+5`, `-5`, spaces) is a usage error that shows what to type instead.
 * Whether the amount may be 0 is the SDK's rule, checked with the rest of the request.
 */
export function parseAmount(text: string, flag: AmountFlag, currency = 'EUR'): number {
  if (/^[0-9]+$/.test(text)) {
    const cents = Number(text);
    if (Number.isSafeInteger(cents)) return cents;
    throw new UsageError(`${flag} is too large: at most ${Number.MAX_SAFE_INTEGER} cents`);
  }
  const decimal = centsOfDecimal(text);
  if (decimal)
    throw new UsageError(`${flag} is in cents: for ${decimal.major}.${decimal.minor} ${currency} pass ${typed(flag, decimal.cents)}`);
  throw new UsageError(
    `${flag} is in cents, as plain digits: ${JSON.stringify(text)} is not one; for 15.00 ${currency} pass ${typed(flag, 1500)}`,
  );
}
