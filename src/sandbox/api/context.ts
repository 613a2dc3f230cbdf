/** What every API operation stands on: the sandbox around it, its answers, ids, failures and jobs. */
import { REFERENCE_INFIXES } from '../../schemas/references.js';
import type { SandboxClock } from '../clock.js';
import { SANDBOX_CODES, ServiceFailure } from '../responses.js';
import type { SandboxStore } from '../store.js';
import type { KeysetPage } from '../store-records.js';
import { cursorAfter } from '../validation.js';
import type { WebhookDispatcher } from '../webhooks.js';

/** What the operations need from the sandbox around them (one tenant's: its webcode, store, clock and webhooks). */
export interface ApiContext {
  webcode: string;
  /**
   * What begins the tenant's payment-page tokens: `''` for the sandbox's own, `{webcode}-` for a
   * made tenant, so that a token names the one tenant that can have made it.
   */
  tokenPrefix: string;
  clock: SandboxClock;
  random: () => number;
  store: SandboxStore;
  webhooks: WebhookDispatcher;
  /** Schedules a job `delayMs` from now, in the caller's transaction. */
  schedule(kind: string, delayMs: number, subject: string): void;
  /** Simulated POS delay in ms for one payment. */
  posDelay: () => number;
  /** When a Test POS `timeout` payment completes, in ms after its answer. */
  posTimeoutResolveMs: number;
  /** When refunds, captures, cancels and extends resolve, in ms after their acknowledgement. */
  modificationResolveMs: number;
}

/** An operation's answer: status and the `data` of the success envelope. */
export interface Answer {
  status: number;
  data: unknown;
}

/** The answer of a request that waits on scheduled work (a POS payment at its terminal). */
export interface Deferred {
  deferred: Promise<Answer>;
}

/** The jobs of the operations; each subject is the id of the record it acts on. */
export const JOB = {
  expireSession: 'session.expire',
  posAnswer: 'pos.answer',
  posLateCompletion: 'pos.late-completion',
  resolveModification: 'modification.resolve',
} as const;

/** The documented infixes, and the sandbox's own for extend operations (the reference shows none). */
export const INFIX = { ...REFERENCE_INFIXES, extend: { test: 'EXXT', live: 'EXX' } } as const;

/** A control action the record's state does not allow. */
export function notAllowed(message: string): ServiceFailure {
  return new ServiceFailure(409, SANDBOX_CODES.actionNotAllowed, message);
}

export function notFound(what: string): ServiceFailure {
  return new ServiceFailure(404, SANDBOX_CODES.notFound, `${what} not found`);
}

/** The `meta` of a listing page. */
export function meta<R>(page: KeysetPage<R>, order: 'asc' | 'desc') {
  return { cursor: page.next === null ? null : cursorAfter(order, page.next), hasMore: page.next !== null, total: page.total };
}

/** A `{webcode}-{infix}-{timestamp}` id; timestamps are made unique and increasing. */
export function timestampId(context: ApiContext, infix: string): string {
  return `${context.webcode}-${infix}-${context.store.nextTimestamp(context.clock.now())}`;
}

/** A `{webcode}-{infix}-{number}` reference, numbered across every kind. */
export function numberedId(context: ApiContext, infix: string): string {
  return `${context.webcode}-${infix}-${context.store.nextReference()}`;
}

/** `length` random digits of `base` (16: hex), from the sandbox's seeded stream. */
export function randomDigits(context: ApiContext, length: number, base: 10 | 16): string {
  let digits = '';
  for (let index = 0; index < length; index++) digits += Math.floor(context.random() * base).toString(base);
  return digits;
}
