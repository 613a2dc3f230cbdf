import type { CreatePosPaymentParams, PosPayment } from '../schemas/pos.js';
import type { WithResponse } from './api-promise.js';
import { type Deadline, deadlineSignal, readDeadline } from './deadline.js';
import {
  ConnectionError,
  IdempotencyConflictError,
  InvalidRequestError,
  PosPaymentPendingError,
  type PosRecoveryState,
  RateLimitError,
  RequestValidationError,
  ResponseValidationError,
  type ResumeOptions,
  ServerError,
  TerminalBusyError,
  TerminalCommunicationError,
  TimeoutError,
  type ValidationIssue,
} from './errors.js';
import { findCharge, type PosOperations } from './pos-lookup.js';

export type { PosOperations } from './pos-lookup.js';

import { sleep } from './retry.js';
import { newIdempotencyKey, type RequestOptions } from './transport.js';

/** How `pos.createPayment` recovers an outcome it could not read. */
export interface RecoveryOptions {
  /** Wait before the first recovery step, in ms. Default 10 000: the payment may still be in progress. */
  initialDelayMs?: number | undefined;
  /** First interval between polls of `GET /pos/payments`, in ms; it doubles up to 30 s. Default 2 000. */
  pollIntervalMs?: number | undefined;
  /** Give up after this long, in ms, with `PosPaymentPendingError`. Default 300 000. */
  maxWaitMs?: number | undefined;
  /**
   * Resolves when your webhook endpoint receives the AUTHORISATION event (pass the parsed event or
   * its `data`). It ends the current wait early. It is only a hint: the result is always read
   * back from the API before it is returned.
   */
  webhook?: PromiseLike<unknown> | undefined;
}

/** The `deadline` option of the POS calls that may wait: `createPayment`, `resumeRecovery`, `waitForFinalStatus`, `checkPayment`. */
export interface DeadlineOption {
  /**
   * When the call must have returned (a `Date`, or epoch ms): the time your platform gives the
   * invocation, less what you need to save the state and answer. The call stops waiting
   * `DEADLINE_LEAD_MS` (100 ms) before it, whatever step it is in, and throws
   * `PosPaymentPendingError` with the state to finish the charge from, never a second one.
   */
  deadline?: Deadline | undefined;
}

/** Options of `pos.createPayment`. */
export interface CreatePosPaymentOptions extends RequestOptions, DeadlineOption {
  /**
   * Recover a `timeout` result, a lost connection, a 5xx or a client-side timeout into a final
   * answer without ever charging twice. Default `true`; `false` returns or throws the first outcome
   * (an abort of `signal` after sending is still a `PosPaymentPendingError`, to finish the charge with).
   */
  recover?: boolean | RecoveryOptions | undefined;
}

/** Options of `pos.resumeRecovery`. */
export interface ResumeRecoveryOptions extends RecoveryOptions, DeadlineOption {
  /** Cancels the recovery; the call rejects with `PosPaymentPendingError`, whose `cause` is the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** Options of `pos.waitForFinalStatus`. */
export interface WaitForFinalStatusOptions extends Omit<RecoveryOptions, 'initialDelayMs'>, DeadlineOption {
  /** Cancels the wait; the call rejects with `PosPaymentPendingError`, whose `cause` is the signal's reason. */
  signal?: AbortSignal | undefined;
  /** When the payment was created, to narrow the listing window. Read from the id when it carries a timestamp. */
  createdAt?: Date | string | undefined;
}

/** A POS payment; `recovered` is `true` when the SDK had to recover the outcome. */
export type RecoveredPosPayment = PosPayment & { recovered?: true };

interface Settings {
  initialDelayMs: number;
  pollIntervalMs: number;
  maxWaitMs: number;
  webhook: PromiseLike<unknown> | undefined;
}

const DEFAULTS = { initialDelayMs: 10_000, pollIntervalMs: 2_000, maxWaitMs: 300_000 } as const;
const MAX_POLL_INTERVAL_MS = 30_000;
/** Statuses after which a POS payment does not change on its own. */
function isFinal(payment: PosPayment): boolean {
  return payment.status !== 'timeout' && payment.status !== 'pending';
}

function resolveSettings(recover: boolean | RecoveryOptions | undefined, path: string): Settings | undefined {
  if (recover === false) return undefined;
  const given = recover === true || recover === undefined ? {} : recover;
  const issues: ValidationIssue[] = [];
  const read = (name: keyof typeof DEFAULTS): number => {
    const value = given[name] ?? DEFAULTS[name];
    if (!Number.isInteger(value) || value < 0) issues.push({ path: `${path}.${name}`, message: 'must be an integer >= 0' });
    return value;
  };
  const settings = {
    initialDelayMs: read('initialDelayMs'),
    pollIntervalMs: read('pollIntervalMs'),
    maxWaitMs: read('maxWaitMs'),
    webhook: given.webhook,
  };
  if (settings.webhook !== undefined && typeof settings.webhook?.then !== 'function') {
    issues.push({ path: `${path}.webhook`, message: 'must be a promise' });
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
  return settings;
}

/** Failures after which the charge may or may not have happened: only recovery can tell. */
function isUncertain(error: unknown): boolean {
  if (error instanceof ConnectionError) return !error.notSent;
  return error instanceof TimeoutError || error instanceof ServerError || error instanceof ResponseValidationError;
}

/** Failures of a recovery step that a later step can outlive. */
function isPassing(error: unknown): boolean {
  return isUncertain(error) || error instanceof ConnectionError || error instanceof TerminalBusyError || error instanceof RateLimitError;
}

/**
 * Answers to a resent charge that say nothing was charged under its key: the same bytes refused
 * (400, or 502 / 13004 as first answered and stored), or the key taken by another request (409).
 * They are the charge's outcome, not a failure of recovery: thrown as they are, with the key.
 */
function isRefusal(error: unknown): boolean {
  return error instanceof InvalidRequestError || error instanceof IdempotencyConflictError || error instanceof TerminalCommunicationError;
}

/** A refusal of the resent charge, on its way out of the recovery as the charge's outcome. */
class Refused {
  constructor(readonly error: unknown) {}
}

/** True when `error` is the call's own abort (its signal's reason), not a failure of the exchange. */
function isAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && error === signal.reason;
}

/**
 * The error that ends a recovery without a final status: it carries the key and the state, and
 * its `resume()` runs a new recovery (no initial wait) from where this one stopped.
 */
export function pendingError(
  ops: PosOperations,
  state: PosRecoveryState,
  lastKnown: PosPayment | undefined,
  stop?: { cause: unknown },
): PosPaymentPendingError {
  return new PosPaymentPendingError(
    state,
    lastKnown,
    async (options?: ResumeOptions) => {
      const { data } = await resumeRecovery(ops, state, options, lastKnown);
      return data;
    },
    stop,
  );
}

/** `options.deadline` read as epoch ms, or the `RequestValidationError` naming it. */
function deadlineOf(deadline: unknown): number | undefined {
  const issues: ValidationIssue[] = [];
  const ms = readDeadline(deadline, 'options.deadline', issues);
  if (issues.length > 0) throw new RequestValidationError(issues);
  return ms;
}

/** Runs `work` with the caller's signal joined to the deadline's, and ends the deadline's timer after it. */
async function withDeadline<T>(
  deadline: number | undefined,
  signal: AbortSignal | undefined,
  work: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  const joined = deadlineSignal(deadline, signal);
  try {
    return await work(joined.signal);
  } finally {
    joined.clear();
  }
}

/** The `paymentReference` of an AUTHORISATION webhook, given as the event or its `data`. */
function hintedReference(event: unknown): string | undefined {
  const record = event as { data?: { paymentReference?: unknown }; paymentReference?: unknown } | null | undefined;
  const reference = record?.data?.paymentReference ?? record?.paymentReference;
  return typeof reference === 'string' && reference !== '' ? reference : undefined;
}

/** Creation time carried by a `...-POSX[T]-{timestamp}` id, when it reads as Unix seconds or milliseconds. */
export function timeFromPosPaymentId(posPaymentId: string): Date | undefined {
  const digits = /-POSXT?-(\d{10}|\d{13})$/.exec(posPaymentId)?.[1];
  if (!digits) return undefined;
  return new Date(digits.length === 10 ? Number(digits) * 1000 : Number(digits));
}

/** One recovery run over `state`; the wait, the resend, the polls. */
class Recovery {
  readonly #ops: PosOperations;
  readonly #state: PosRecoveryState;
  readonly #settings: Settings;
  readonly #signal: AbortSignal | undefined;
  #lastKnown: PosPayment | undefined;
  #lastResponse: Response | undefined;
  #hint: string | undefined;
  #wake: Promise<void> | undefined;
  /** The longest `Retry-After` of a 429 since the last wait, in ms. */
  #retryAfterMs = 0;

  constructor(ops: PosOperations, state: PosRecoveryState, settings: Settings, signal: AbortSignal | undefined, lastKnown?: PosPayment) {
    this.#ops = ops;
    this.#state = { ...state };
    this.#settings = settings;
    this.#signal = signal;
    this.#lastKnown = lastKnown;
    this.#wake = settings.webhook
      ? Promise.resolve(settings.webhook).then(
          (event) => {
            this.#hint = hintedReference(event);
          },
          () => undefined,
        )
      : undefined;
  }

  /**
   * Ends with the final payment, the service's refusal of the resent charge (nothing was charged),
   * or `PosPaymentPendingError` with the state to resume: after `maxWaitMs`, or with the failure
   * that stopped it as `cause` (one no later step can outlive, or the signal's reason).
   */
  async run(): Promise<WithResponse<RecoveredPosPayment>> {
    try {
      return await this.#recover();
    } catch (error) {
      if (error instanceof Refused) throw error.error;
      if (error instanceof PosPaymentPendingError) throw error;
      if (!isAbort(error, this.#signal))
        this.#ops.logger?.warn('payment-service-sdk: POS recovery stopped', {
          idempotencyKey: this.#state.idempotencyKey,
          error: (error as Error)?.name,
        });
      throw pendingError(this.#ops, this.#state, this.#lastKnown, { cause: error });
    }
  }

  async #recover(): Promise<WithResponse<RecoveredPosPayment>> {
    const deadline = Date.now() + this.#settings.maxWaitMs;
    this.#ops.logger?.info('payment-service-sdk: POS outcome unknown, recovering', { ...this.#state, params: undefined });
    await this.#pause(this.#settings.initialDelayMs);

    const replayed = await this.#replay();
    if (replayed) return replayed;

    let interval = this.#settings.pollIntervalMs;
    for (;;) {
      // Until an answer to the charge has been read, each round resends it too: the first resend
      // may have been lost as the charge was, and a charge that never arrived is listed nowhere;
      // only a resend starts it, and its key keeps it one charge.
      const found = (await this.#poll()) ?? (this.#state.posPaymentId === undefined ? await this.#replay() : undefined);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) break;
      // A 429's Retry-After is a floor for the next wait: polling sooner would be refused again.
      await this.#pause(Math.min(Math.max(interval, this.#retryAfterMs), left));
      this.#retryAfterMs = 0;
      interval = Math.min(interval * 2, MAX_POLL_INTERVAL_MS);
    }
    throw pendingError(this.#ops, this.#state, this.#lastKnown);
  }

  /** Notes what a step's passing failure asks of the next wait. */
  #passed(error: unknown): void {
    if (error instanceof RateLimitError && error.retryAfterMs !== undefined) {
      this.#retryAfterMs = Math.max(this.#retryAfterMs, error.retryAfterMs);
    }
  }

  /** Waits, unless the webhook hint arrives first (it wakes one wait only). */
  async #pause(ms: number): Promise<void> {
    if (ms <= 0) return;
    const wake = this.#wake;
    if (!wake) return sleep(ms, this.#signal);
    const stop = new AbortController();
    const signal = this.#signal ? AbortSignal.any([this.#signal, stop.signal]) : stop.signal;
    const woke = await Promise.race([wake.then(() => true), sleep(ms, signal).then(() => false)]).finally(() => stop.abort());
    if (woke) this.#wake = undefined;
    this.#signal?.throwIfAborted();
  }

  #settle(payment: PosPayment, response: Response | undefined): WithResponse<RecoveredPosPayment> | undefined {
    this.#lastKnown = payment;
    this.#state.posPaymentId ??= payment.posPaymentId;
    if (response) this.#lastResponse = response;
    if (!isFinal(payment)) return undefined;
    this.#ops.logger?.info('payment-service-sdk: POS outcome recovered', { posPaymentId: payment.posPaymentId, status: payment.status });
    return { data: { ...payment, recovered: true }, response: this.#lastResponse as Response, idempotencyKey: this.#state.idempotencyKey };
  }

  /** Resends the same bytes with the same key: the service answers with its stored response. */
  async #replay(): Promise<WithResponse<RecoveredPosPayment> | undefined> {
    const { params, idempotencyKey } = this.#state;
    if (!params || !idempotencyKey) return undefined;
    try {
      const { data, response } = await this.#ops
        .charge(params, { idempotencyKey, ...(this.#signal ? { signal: this.#signal } : {}) })
        .withResponse();
      return this.#settle(data, response);
    } catch (error) {
      if (isRefusal(error)) throw new Refused(error);
      if (!isPassing(error)) throw error;
      this.#passed(error);
      return undefined;
    }
  }

  /** Looks the payment up in `GET /pos/payments` over a narrow window around its creation. */
  async #poll(): Promise<WithResponse<RecoveredPosPayment> | undefined> {
    try {
      const found = await findCharge(this.#ops, this.#state, this.#signal, this.#hint);
      return found && this.#settle(found.payment, found.response);
    } catch (error) {
      if (!isPassing(error)) throw error;
      this.#passed(error);
      return undefined;
    }
  }
}

/** A charge as `pos.preparePayment` makes it: its key, its params and when it was made, all present. */
export type PreparedPosPayment = PosRecoveryState & { idempotencyKey: string; params: CreatePosPaymentParams; sentAt: string };

/**
 * The state of a charge not sent yet: the key (given, or a fresh UUID v4), a plain-JSON copy of the
 * params, and the time it was made. `check` validates both as a request would (nothing is sent).
 */
export function preparePayment(
  check: (params: CreatePosPaymentParams, idempotencyKey: string) => void,
  params: CreatePosPaymentParams,
  options: { idempotencyKey?: string | undefined } = {},
): PreparedPosPayment {
  const idempotencyKey = options?.idempotencyKey ?? globalThis.crypto.randomUUID();
  check(params, idempotencyKey);
  return { idempotencyKey, params: JSON.parse(JSON.stringify(params)) as CreatePosPaymentParams, sentAt: new Date().toISOString() };
}

/** Whether `pos.createPayment` was given a prepared state rather than params. */
export function isPreparedState(input: unknown): input is PosRecoveryState {
  return typeof input === 'object' && input !== null && 'params' in input && 'idempotencyKey' in input;
}

/** The params and key of a prepared state, or the `RequestValidationError` saying what is missing or at odds. */
function sendable(
  state: PosRecoveryState,
  optionKey: string | undefined,
): { params: CreatePosPaymentParams; idempotencyKey: string; state: PosRecoveryState } {
  const { params, idempotencyKey } = state;
  const issues: ValidationIssue[] = [];
  if (typeof idempotencyKey !== 'string') issues.push({ path: 'state.idempotencyKey', message: 'must be the key preparePayment made' });
  if (typeof params !== 'object' || params === null)
    issues.push({ path: 'state.params', message: 'must be the params preparePayment saved' });
  if (optionKey !== undefined && optionKey !== idempotencyKey)
    issues.push({
      path: 'options.idempotencyKey',
      message: 'must be left out for a prepared charge: it is sent with its own key, never another',
    });
  if (issues.length > 0) throw new RequestValidationError(issues);
  return { params: params as CreatePosPaymentParams, idempotencyKey: idempotencyKey as string, state };
}

/**
 * `pos.createPayment` with recovery: one charge, then, if its outcome is uncertain, recovery.
 * `input` is the params, or a prepared state (sent with its key, its `sentAt` kept). Once the
 * charge may have left, an abort of the call's signal or its deadline (with `recover: false` too)
 * throws `PosPaymentPendingError` with the abort's reason as `cause`: the caller stopped waiting,
 * and the charge it may have started can still be finished with the error's state. A deadline
 * already reached before sending throws it too, nothing sent: the state starts the charge later.
 */
export async function chargeWithRecovery(
  ops: PosOperations,
  input: CreatePosPaymentParams | PosRecoveryState,
  options: CreatePosPaymentOptions = {},
): Promise<WithResponse<RecoveredPosPayment>> {
  const { recover, deadline, ...requestOptions } = options;
  const deadlineMs = deadlineOf(deadline);
  const settings = resolveSettings(recover, 'options.recover');
  const prepared = isPreparedState(input) ? sendable(input, requestOptions.idempotencyKey) : undefined;
  const params = prepared ? prepared.params : (input as CreatePosPaymentParams);
  const idempotencyKey = prepared?.idempotencyKey ?? requestOptions.idempotencyKey ?? (await newIdempotencyKey());
  // Aborted before anything left: the reason as is, as any call; nothing needs finishing.
  requestOptions.signal?.throwIfAborted();
  const state: PosRecoveryState = {
    ...prepared?.state,
    idempotencyKey,
    params,
    sentAt: prepared?.state.sentAt ?? new Date().toISOString(),
  };
  return withDeadline(deadlineMs, requestOptions.signal, async (signal) => {
    if (signal?.aborted) throw pendingError(ops, state, undefined, { cause: signal.reason });
    let first: WithResponse<PosPayment> | undefined;
    try {
      first = await ops.charge(params, { ...requestOptions, idempotencyKey, ...(signal ? { signal } : {}) }).withResponse();
    } catch (error) {
      if (isAbort(error, signal)) throw pendingError(ops, state, undefined, { cause: error });
      if (!settings || !isUncertain(error)) throw error;
      ops.logger?.warn('payment-service-sdk: POS charge outcome unknown', { idempotencyKey, error: (error as Error).name });
    }
    if (first && (!settings || isFinal(first.data))) return first;
    if (first) state.posPaymentId = first.data.posPaymentId;
    return new Recovery(ops, state, settings as Settings, signal, first?.data).run();
  });
}

/** Continues a recovery from its saved state, in this process or another (no initial wait unless given). */
export async function resumeRecovery(
  ops: PosOperations,
  state: PosRecoveryState,
  options: ResumeRecoveryOptions = {},
  lastKnown?: PosPayment,
): Promise<WithResponse<RecoveredPosPayment>> {
  const { signal, deadline, ...recover } = options;
  if (!state || (typeof state.posPaymentId !== 'string' && (typeof state.idempotencyKey !== 'string' || !state.params))) {
    throw new RequestValidationError([{ path: 'state', message: 'needs a posPaymentId, or the idempotencyKey and params of the charge' }]);
  }
  const deadlineMs = deadlineOf(deadline);
  const settings = resolveSettings({ initialDelayMs: 0, ...recover }, 'options') as Settings;
  return withDeadline(deadlineMs, signal, (joined) => new Recovery(ops, state, settings, joined, lastKnown).run());
}

/** Polls for the final status of a POS payment known only by its id. */
export async function waitForFinalStatus(
  ops: PosOperations,
  posPaymentId: string,
  options: WaitForFinalStatusOptions = {},
): Promise<WithResponse<RecoveredPosPayment>> {
  if (typeof posPaymentId !== 'string' || posPaymentId === '') {
    throw new RequestValidationError([{ path: 'posPaymentId', message: 'must be a non-empty string' }]);
  }
  const { createdAt, ...rest } = options;
  const created = createdAt === undefined ? timeFromPosPaymentId(posPaymentId) : new Date(createdAt);
  const sentAt = created && !Number.isNaN(created.getTime()) ? created.toISOString() : undefined;
  return resumeRecovery(ops, { posPaymentId, ...(sentAt ? { sentAt } : {}) }, rest);
}
