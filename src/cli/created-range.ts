/**
 * `--created-from` / `--created-to` of the listings and their exports: a date (`YYYY-MM-DD`, the
 * whole day in UTC) or an ISO 8601 date-time. The POS listing has the service's own date filters
 * (`created_at_start`, `created_at_end`), so the range is sent; the sessions and modifications
 * listings have none, so the CLI keeps the records of the range from the pages it reads. Either way
 * the bounds are whole seconds, both included, as the service's record timestamps are.
 */
import type { Command } from 'commander';
import { UsageError } from './io.js';

/** Unix milliseconds, both ends included; an end absent is open. */
export interface CreatedRange {
  from?: number | undefined;
  to?: number | undefined;
}

/** Where a listing's range is applied: sent as the service's filters, or by the CLI on each page. */
export type RangeSupport = 'service' | 'cli';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A date-time: `T` or a space, seconds and fractions optional, `Z` or an offset (none: UTC). */
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?$/i;

const DAY_MS = 86_400_000;

/** A real calendar day: `Date.UTC` rolls 2026-02-30 over to March, which is refused. */
function dayStart(text: string): number | undefined {
  const match = DAY.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const start = Date.UTC(year, month - 1, day);
  const date = new Date(start);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? start : undefined;
}

function dateTime(text: string): number | undefined {
  const match = DATE_TIME.exec(text);
  if (!match || dayStart(match[1] ?? '') === undefined) return undefined;
  const zone = (match[3] ?? 'Z').toUpperCase();
  const offset = zone === 'Z' ? 'Z' : zone.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
  const time = Date.parse(`${match[1]}T${match[2]}${offset}`);
  return Number.isNaN(time) ? undefined : time;
}

/**
 * The instant `value` of `--flag` stands for: a date is its first millisecond (`from`) or its last
 * (`to`), in UTC. Anything else is a usage error naming the flag.
 */
export function createdBound(flag: string, value: string, edge: 'from' | 'to'): number {
  const text = value.trim();
  const start = dayStart(text);
  if (start !== undefined) return edge === 'from' ? start : start + DAY_MS - 1;
  const time = dateTime(text);
  if (time !== undefined) return time;
  throw new UsageError(`${flag} must be a date (YYYY-MM-DD, a whole day in UTC) or an ISO 8601 date-time, got ${value}`);
}

/** The range of the two flags (undefined when neither is given); an empty range is a usage error. */
export function createdRange(flags: { createdFrom?: string | undefined; createdTo?: string | undefined }): CreatedRange | undefined {
  if (flags.createdFrom === undefined && flags.createdTo === undefined) return undefined;
  const from = flags.createdFrom === undefined ? undefined : createdBound('--created-from', flags.createdFrom, 'from');
  const to = flags.createdTo === undefined ? undefined : createdBound('--created-to', flags.createdTo, 'to');
  if (from !== undefined && to !== undefined && from > to)
    throw new UsageError(`--created-from ${flags.createdFrom} is after --created-to ${flags.createdTo}`);
  return { from, to };
}

/** A record timestamp (`YYYY-MM-DD HH:MM:SS`, UTC) or an ISO one, as Unix milliseconds; NaN when it is neither. */
function recordTime(value: unknown): number {
  if (typeof value !== 'string') return Number.NaN;
  return Date.parse(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value) ? `${value.replace(' ', 'T')}Z` : value);
}

/** Whether a record's `createdAt` is in the range, compared in whole seconds as the service compares them. */
export function inCreatedRange(range: CreatedRange): (record: unknown) => boolean {
  const from = range.from === undefined ? Number.NEGATIVE_INFINITY : Math.floor(range.from / 1000) * 1000;
  const to = range.to === undefined ? Number.POSITIVE_INFINITY : Math.floor(range.to / 1000) * 1000 + 999;
  return (record) => {
    const time = recordTime((record as { createdAt?: unknown } | null)?.createdAt);
    return time >= from && time <= to;
  };
}

/** The range as the POS listing's own filters (`pos.list` sends a `Date` as UTC `YYYY-MM-DD HH:MM:SS`). */
export function serviceDates(range: CreatedRange): { createdAtStart?: Date; createdAtEnd?: Date } {
  return {
    ...(range.from === undefined ? {} : { createdAtStart: new Date(range.from) }),
    ...(range.to === undefined ? {} : { createdAtEnd: new Date(range.to) }),
  };
}

/** `--created-from/--created-to` of the POS listing as its own filters; refused beside `--created-at-start/-end`. */
export function posDates(flags: {
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  createdAtStart?: string | undefined;
  createdAtEnd?: string | undefined;
}): { createdAtStart?: Date; createdAtEnd?: Date } {
  const range = createdRange(flags);
  if (!range) return {};
  const old = flags.createdAtStart !== undefined ? '--created-at-start' : flags.createdAtEnd !== undefined ? '--created-at-end' : undefined;
  if (old) throw new UsageError(`give --created-from/--created-to or ${old}, not both`);
  return serviceDates(range);
}

const FORMS = 'a date (YYYY-MM-DD: the whole day in UTC) or an ISO 8601 date-time';

/** The help of the two flags, saying where the range is applied. */
export function createdHelp(support: RangeSupport): { from: string; to: string; note: string } {
  const where =
    support === 'service'
      ? "sent as the service's own date filters (created_at_start, created_at_end)"
      : 'applied by the CLI to each page read: the service has no date filter for this listing, so every page is read';
  return {
    from: `created at or after this time: ${FORMS}`,
    to: `created at or before this time: ${FORMS}`,
    note: `--created-from / --created-to: ${where}. Both ends are included, in whole seconds.`,
  };
}

/** Adds `--created-from` and `--created-to` to a listing command, with the help saying where they apply. */
export function createdOptions(command: Command, support: RangeSupport): Command {
  const help = createdHelp(support);
  return command.option('--created-from <date>', help.from).option('--created-to <date>', help.to).addHelpText('after', `\n${help.note}`);
}
