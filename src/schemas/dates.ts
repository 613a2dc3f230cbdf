/**
 * ISO 8601 date-times, shared by the SDK's request check and the sandbox: one reading of the rule
 * on both sides.
 */

// Extended (2026-12-01T10:00:00.5+01:00) and basic (20261201T100000Z) forms; seconds, fraction and offset optional.
const EXTENDED = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:[Zz]|[+-](\d{2})(?::?(\d{2}))?)?$/;
const BASIC = /^(\d{4})(\d{2})(\d{2})[Tt](\d{2})(\d{2})(?:(\d{2})(?:[.,]\d+)?)?(?:[Zz]|[+-](\d{2})(\d{2})?)?$/;

/** The form of both, for JSON Schema's `pattern` (which cannot check the calendar). */
export const ISO_DATE_TIME_PATTERN = `${EXTENDED.source}|${BASIC.source}`;

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in `month` (1 to 12) of the proleptic Gregorian `year` (`Date` would read 0000 as 1900). */
function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : (MONTH_DAYS[month - 1] ?? 0);
}

/**
 * True for an ISO 8601 calendar date-time that names a real instant: with or without seconds and
 * fraction, with `Z`, an offset (`±hh:mm`, `±hhmm`, `±hh`) or none. Impossible dates
 * (`2026-02-30T10:00:00Z`) and times (`25:00`, `10:60`) are refused.
 */
export function isIsoDateTime(value: string): boolean {
  const match = EXTENDED.exec(value) ?? BASIC.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = match.slice(1).map((part) => Number(part ?? 0));
  return (
    month !== undefined &&
    month >= 1 &&
    month <= 12 &&
    day !== undefined &&
    day >= 1 &&
    day <= daysIn(year ?? 0, month) &&
    (hour ?? 24) < 24 &&
    (minute ?? 60) < 60 &&
    (second ?? 60) < 60 &&
    (offsetHours ?? 24) < 24 &&
    (offsetMinutes ?? 60) < 60
  );
}
