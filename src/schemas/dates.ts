/**
 * ISO 8601 date-times, shared by the SDK's request check and the sandbox: one reading of the rule
 * on both sides.
 */

// Extended (2026-12-01T10:00:00.5+01:00) and basic (20261201T100000Z) forms; seconds, fraction and offset optional.
const EXTENDED = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:[Zz]|[+-](\d{2})(?::?(\d{2}))?)?$/;
const BASIC = /^(\d{4})(\d{2})(\d{2})[Tt](\d{2})(\d{2})(?:(\d{2})(?:[.,]\d+)?)?(?:[Zz]|[+-](\d{2})(\d{2})?)?$/;

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
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
