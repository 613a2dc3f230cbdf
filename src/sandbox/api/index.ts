/** The service's operations of one tenant, one module per resource, with the jobs they schedule. */
import type { Environment } from '../../core/options.js';
import type { ServiceFailure } from '../responses.js';
import type { JobHandler } from '../scheduler.js';
import { type Answer, type ApiContext, JOB } from './context.js';
import { emitEvent } from './events.js';
import { Modifications } from './modifications.js';
import { type PosAnswerSubject, PosPayments } from './pos.js';
import { Sessions } from './sessions.js';
import { listTerminals } from './terminals.js';
import { KeyWaits } from './waits.js';

export type { Answer, ApiContext, Deferred } from './context.js';
export { PAYMENT_PAGE_SECONDS } from './sessions.js';

/** The operations over one tenant's store; each runs inside the transaction of the request or job that calls it. */
export interface SandboxApi {
  readonly sessions: Sessions;
  readonly posPayments: PosPayments;
  readonly modifications: Modifications;
  /** Requests waiting for a running request with their `Idempotency-Key`. */
  readonly keys: KeyWaits;
  /** The handlers of the jobs the operations schedule, by kind. */
  readonly jobs: Record<string, JobHandler>;
  /** `GET /pos/terminals`: the simulated terminals, the offline ones left out with `syncFromProvider=true`. */
  listTerminals(environment: Environment, query: URLSearchParams): Answer;
  /** Sends a documented event again for a record (see {@link emitEvent}); the ids of the new deliveries. */
  emitEvent(environment: Environment, eventCode: string, reference: string): number[];
  /**
   * Answers `failure` now to every request still waiting here: on a POS payment's terminal, or on
   * the running request with its `Idempotency-Key` (the sandbox stops, or the tenant is removed).
   */
  releaseWaiting(failure: ServiceFailure | ReleaseFailure): void;
}

/** The failure a waiting request is answered, by what it waits on: a POS payment (sent with an `Idempotency-Key` or without), or a running request with its key. */
export type ReleaseFailure = (waiting: { posPaymentId?: string; keyed: boolean }) => ServiceFailure;

export function createApi(context: ApiContext): SandboxApi {
  const keys = new KeyWaits();
  const sessions = new Sessions(context);
  const posPayments = new PosPayments(context, keys);
  const modifications = new Modifications(context);
  return {
    sessions,
    posPayments,
    modifications,
    keys,
    jobs: {
      [JOB.expireSession]: { run: (sessionId) => sessions.expire(sessionId) },
      [JOB.posAnswer]: { run: (subject) => posPayments.answer(JSON.parse(subject) as PosAnswerSubject) },
      [JOB.posLateCompletion]: { run: (posPaymentId) => posPayments.completeLate(posPaymentId) },
      [JOB.resolveModification]: { run: (reference) => modifications.resolve(reference) },
    },
    listTerminals: (environment, query) => listTerminals(context.store, environment, query),
    emitEvent: (environment, eventCode, reference) => emitEvent(context, environment, eventCode, reference),
    releaseWaiting(failure) {
      posPayments.releaseWaiting(failure);
      keys.release(typeof failure === 'function' ? failure({ keyed: true }) : failure);
    },
  };
}
