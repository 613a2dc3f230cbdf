/**
 * Fault rules: what a test asks the sandbox to get wrong on purpose (a delay, an error before or
 * after the operation commits, a reset connection, a cut body), on which route or webhook event,
 * how many times or how often. Rules are a tenant's own; `probability` draws from a stream seeded
 * by the sandbox's seed, so a run with the same seed and the same calls strikes the same calls.
 */
import type { Environment } from '../core/options.js';
import { seededRandom } from './clock.js';
import type { FaultEffect, FaultRule } from './fault-rule.js';
import { checkFaultRule, FAULT_REFUSED, WEBHOOK_EFFECTS } from './fault-rule-schema.js';

export type { FaultEffect, FaultRule } from './fault-rule.js';
export { EFFECT_FIELDS, FAULT_RULE_LIMITS } from './fault-rule-schema.js';

/** A rule as the sandbox holds it: its id and how many times it has struck. */
export type FaultRuleState = FaultRule & { id: string; injected: number };

/** A rule the sandbox refuses, with what is wrong with it. */
export class FaultRuleError extends TypeError {
  override readonly name = 'FaultRuleError';
}

/** The HTTP header that names the rule which changed an answer. */
export const FAULT_HEADER = 'x-sandbox-fault';

/**
 * Set on an answer whose body was cut: the length its `Content-Length` declares, longer than the
 * body. The node adapter sends what there is, then closes the connection mid-body.
 */
export const DECLARED_LENGTH = Symbol('payment-service-sdk.sandbox.declaredLength');

/** Set on a reset's non-answer (which has no headers to carry `X-Sandbox-Fault`): the id of the rule, for the request log. */
export const STRUCK_RULE = Symbol('payment-service-sdk.sandbox.struckRule');

/** How many rules a tenant holds at most: each is asked on every call, and the dashboard lists them all. */
export const MAX_FAULT_RULES = 100;

function fail(message: string): never {
  throw new FaultRuleError(`${FAULT_REFUSED}${message}`);
}

/**
 * Checks a rule against its schema: its shape, its ranges, and that its effect can apply to what
 * it matches (API effects need a route, webhook effects an event, terminal effects the route
 * `POST /pos/payment`). `routes` are the route templates the sandbox answers.
 */
export function parseFaultRule(value: unknown, routes: readonly string[]): FaultRule {
  const checked = checkFaultRule(value, routes);
  if ('problem' in checked) throw new FaultRuleError(checked.problem);
  return checked.rule;
}

/** The fields of a request, an answer or an event that name a record: what a fault entry is filed under. */
const REFERENCE_FIELDS = [
  'sessionId',
  'posPaymentId',
  'paymentReference',
  'refundReference',
  'captureReference',
  'cancelReference',
  'extendReference',
] as const;

/** The record references a JSON object names in its {@link REFERENCE_FIELDS}. */
export function referencesIn(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const fields = value as Record<string, unknown>;
  return REFERENCE_FIELDS.map((field) => fields[field]).filter((item): item is string => typeof item === 'string' && item !== '');
}

/** When, in an API call, an effect strikes: before the body is read, instead of the operation, or once it has committed. */
export type ApiPhase = 'latency' | 'before' | 'after-commit';

function phaseOf(effect: FaultEffect): ApiPhase | undefined {
  if (effect.type === 'latency' || (effect.type === 'terminal' && effect.outcome === 'slow')) return 'latency';
  if (effect.type === 'terminal') return 'before';
  if (effect.type === 'error' || effect.type === 'reset') return effect.when;
  return effect.type === 'truncate' ? 'after-commit' : undefined;
}

/** The typed face of a sandbox's fault rules (`sandbox.faults`), the same as `/_sandbox/faults`. */
export interface SandboxFaults {
  /** Adds a rule; it strikes from the next call on. Throws {@link FaultRuleError} for a rule the sandbox refuses. */
  add(rule: FaultRule): FaultRuleState;
  /** The rules, in the order they were added, each with how many times it has struck. */
  list(): FaultRuleState[];
  /** Removes a rule; answers it as it was, `undefined` for an id that names none. */
  remove(id: string): FaultRuleState | undefined;
  /** Removes every rule. */
  clear(): void;
}

/** A tenant's fault rules, in the order they were added; the first of a phase that matches a call strikes it. */
export class FaultRules implements SandboxFaults {
  readonly #rules: FaultRuleState[] = [];
  readonly #routes: readonly string[];
  readonly #random: () => number;
  #next = 1;

  /** `routes`: the route templates a rule may name; `seed`: the sandbox's seed, for `probability`. */
  constructor(routes: readonly string[], seed: number) {
    this.#routes = routes;
    // A stream of its own: adding a rule does not change the tokens and references of the sandbox.
    this.#random = seededRandom(seed ^ 0x5fa17);
  }

  /** Adds a rule; throws {@link FaultRuleError} for one the sandbox cannot apply, or past {@link MAX_FAULT_RULES}. */
  add(value: unknown): FaultRuleState {
    if (this.#rules.length >= MAX_FAULT_RULES) {
      fail(`a tenant holds at most ${MAX_FAULT_RULES} rules: remove one (DELETE /_sandbox/faults/{id}) before adding another`);
    }
    const state = { ...parseFaultRule(value, this.#routes), id: `fault_${this.#next++}`, injected: 0 };
    this.#rules.push(state);
    return structuredClone(state);
  }

  list(): FaultRuleState[] {
    return this.#rules.map((rule) => structuredClone(rule));
  }

  /** Removes a rule: what it was, with how often it struck; `undefined` for an id that names none. */
  remove(id: string): FaultRuleState | undefined {
    const index = this.#rules.findIndex((rule) => rule.id === id);
    return index < 0 ? undefined : this.#rules.splice(index, 1)[0];
  }

  clear(): void {
    this.#rules.length = 0;
  }

  /**
   * The first rule of `phase` that strikes this call, counted as struck. A rule is asked only
   * while it has `times` left; a rule with a `probability` draws from the seeded stream each time.
   */
  strike(environment: Environment, route: string, phase: ApiPhase): FaultRuleState | undefined {
    for (const rule of this.#rules) {
      if (rule.route !== route || phaseOf(rule.effect) !== phase || !this.#matches(rule, environment)) continue;
      rule.injected++;
      return rule;
    }
    return undefined;
  }

  /** The first rule on webhooks of `eventCode` that strikes this event, counted as struck. */
  strikeEvent(environment: Environment, eventCode: string): FaultRuleState | undefined {
    for (const rule of this.#rules) {
      if (rule.event !== eventCode || !WEBHOOK_EFFECTS.has(rule.effect.type)) continue;
      if (!this.#matches(rule, environment)) continue;
      rule.injected++;
      return rule;
    }
    return undefined;
  }

  /** Whether a rule of the call's route or event strikes: its environment, `times` left, then its `probability`. */
  #matches(rule: FaultRuleState, environment: Environment): boolean {
    if (rule.environment !== undefined && rule.environment !== environment) return false;
    if (rule.times !== undefined && rule.injected >= rule.times) return false;
    return rule.probability === undefined || this.#random() < rule.probability;
  }

  /** The delay in ms of a latency effect (a point in `[min, max]` drawn from the seeded stream) or of a slow terminal. */
  latencyMs(effect: FaultEffect): number {
    const ms = effect.type === 'latency' ? effect.ms : effect.type === 'terminal' ? (effect.ms ?? 0) : 0;
    return typeof ms === 'number' ? ms : Math.round(ms[0] + (ms[1] - ms[0]) * this.#random());
  }
}
