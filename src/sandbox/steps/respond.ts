/** The outermost step: any failure below it becomes the service's failure envelope, with a trace id. */
import { failureBody, jsonResponse, SANDBOX_CODES, ServiceFailure } from '../responses.js';
import type { Step } from './chain.js';

/** What answering a failure needs. */
export interface FailureAnswers {
  /** A trace id for the envelope. */
  traceId(): string;
  /** The store's damage behind `error` (reported, once), or `undefined` when the error is not that. */
  damage(error: unknown): Error | undefined;
}

/** The envelope of a failure: the service's own as thrown, a fault of the sandbox as 500. */
export function respond<C>(answers: FailureAnswers): Step<C> {
  return async (context, next) => {
    try {
      return await next(context);
    } catch (error) {
      const failure = failureOf(error, answers);
      return jsonResponse(failure.status, failureBody(failure, answers.traceId()));
    }
  };
}

function failureOf(error: unknown, answers: FailureAnswers): ServiceFailure {
  if (error instanceof ServiceFailure) return error;
  const damage = answers.damage(error);
  const message = damage ? damage.message : error instanceof Error ? error.message : String(error);
  return new ServiceFailure(500, SANDBOX_CODES.internal, `Sandbox error: ${message}`);
}
