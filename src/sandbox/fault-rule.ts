/**
 * The shape of a fault rule, apart from the rules engine of `faults.ts`: what the sandbox's API,
 * its CLI file and the testcontainers module's `withFaultRules` take. Types only, so that the
 * testcontainers entry's declarations share these and nothing of the engine.
 */
import type { Environment } from '../core/options.js';

/** What a rule does where it strikes. */
export type FaultEffect =
  | { type: 'latency'; ms: number | [number, number] }
  | { type: 'error'; status: 500 | 502 | 503 | 504 | 429; when: 'before' | 'after-commit'; retryAfter?: number | undefined }
  | { type: 'reset'; when: 'before' | 'after-commit' }
  | { type: 'truncate' }
  | { type: 'duplicate'; copies: number }
  | { type: 'delay'; ms: number }
  | { type: 'drop' }
  | { type: 'reorder' }
  | { type: 'terminal'; outcome: 'busy' | 'offline' | 'slow'; ms?: number | undefined };

/** A fault rule, as `POST /_sandbox/faults`, `sandbox.faults.add` and the CLI's `--faults` file take it. */
export interface FaultRule {
  /** Only calls of this environment; default both. */
  environment?: Environment | undefined;
  /** Method and route template, as the reference names the endpoint: `POST /payment/session`. */
  route?: string | undefined;
  /** A webhook event code. */
  event?: 'AUTHORISATION' | 'REFUND' | undefined;
  /** Strikes the next N matches only; default every match. */
  times?: number | undefined;
  /** Strikes a match with this probability (0 to 1), drawn from the seeded stream; default 1. */
  probability?: number | undefined;
  effect: FaultEffect;
}
