/**
 * The options both engine queues share, checked the same way: a bad value is a TypeError that names
 * the option, thrown before anything touches the app's engine objects.
 */

/** The queue name used when none is given. */
export const DEFAULT_FOLLOW_UP_QUEUE = 'payment-follow-ups';

/** At least this many retries: "runs again later" holds for any realistic outage (with a 15 min cap, years). */
export const UNLIMITED_RETRIES = 1_000_000;

/** Throws a TypeError naming `option` unless `value` is a string of letters, digits, `_`, `-`, `.` or `/`. */
export function queueName(fn: string, value: unknown): string {
  if (value === undefined) return DEFAULT_FOLLOW_UP_QUEUE;
  // The characters both engines accept in a name: pg-boss refuses the rest, BullMQ refuses `:`.
  if (typeof value !== 'string' || !/^[\w.\-/]{1,100}$/.test(value)) {
    throw new TypeError(`${fn}: queue must be a name of 1 to 100 letters, digits, '_', '-', '.' or '/' (got ${describe(value)})`);
  }
  return value;
}

/** `value` in ms, or `fallback` when undefined; a TypeError naming `option` unless an integer in [min, max]. */
export function milliseconds(fn: string, option: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`${fn}: ${option} must be an integer number of ms from ${min} to ${max} (got ${describe(value)})`);
  }
  return value;
}

/** Throws a TypeError unless `options` is undefined or a plain object. */
export function optionsObject<T extends object>(fn: string, options: T | undefined): Partial<T> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${fn}: options must be an object (got ${describe(options)})`);
  }
  return options;
}

/** What a FollowUpQueue's `start` checks of its arguments. */
export function startArguments(fn: string, handler: unknown, options: unknown): number {
  if (typeof handler !== 'function') throw new TypeError(`${fn}: start needs a handler function (got ${describe(handler)})`);
  const concurrency = (options as { concurrency?: unknown } | undefined)?.concurrency;
  if (typeof concurrency !== 'number' || !Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
    throw new TypeError(`${fn}: start needs options.concurrency, an integer from 1 to 1000 (got ${describe(concurrency)})`);
  }
  return concurrency;
}

/** What a FollowUpQueue's `schedule` checks of its arguments: a job with a string id, and a delay. */
export function scheduleArguments(fn: string, job: unknown, delayMs: unknown): void {
  const id = (job as { id?: unknown } | null | undefined)?.id;
  if (typeof id !== 'string' || id === '') throw new TypeError(`${fn}: schedule needs a job with a non-empty string id`);
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
    throw new TypeError(`${fn}: schedule needs delayMs, a finite number >= 0 (got ${describe(delayMs)})`);
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
