/**
 * Fault rules: what a test asks the sandbox to get wrong on purpose (a delay, an error before or
 * after the operation commits, a reset connection, a cut body), on which route or webhook event,
 * how many times or how often. Rules are a tenant's own; `probability` draws from a stream seeded
 * by the sandbox's seed, so a run with the same seed and the same calls strikes the same calls.
 */
import type { Environment } from '../core/options.js';
import { seededRandom } from './clock.js';
import type { FaultEffect, FaultRule } from './fault-rule.js';

export type { FaultEffect, FaultRule } from './fault-rule.js';

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

const API_EFFECTS = new Set(['latency', 'error', 'reset', 'truncate']);
const WEBHOOK_EFFECTS = new Set(['duplicate', 'delay', 'drop', 'reorder']);
const TERMINAL_ROUTE = 'POST /pos/payment';
const RULE_FIELDS = new Set(['environment', 'route', 'event', 'times', 'probability', 'effect']);
/** The fields of each effect type besides `type`. */
export const EFFECT_FIELDS: Record<FaultEffect['type'], readonly string[]> = {
  latency: ['ms'],
  error: ['status', 'when', 'retryAfter'],
  reset: ['when'],
  truncate: [],
  duplicate: ['copies'],
  delay: ['ms'],
  drop: [],
  reorder: [],
  terminal: ['outcome', 'ms'],
};

/**
 * The range of each numeric field of a rule, refused beyond it (400 naming the field and range).
 * A latency or a slow terminal holds a real request on a real timer: at most 10 minutes, far under
 * the 2^31 − 1 ms a timer honours. A delay is on the sandbox clock: at most a day. `copies` sends
 * that many deliveries per URL at once; `retryAfter` is the `Retry-After` header, in seconds.
 */
export const FAULT_RULE_LIMITS = {
  latencyMs: { min: 0, max: 600_000 },
  terminalMs: { min: 0, max: 600_000 },
  delayMs: { min: 0, max: 86_400_000 },
  copies: { min: 2, max: 100 },
  retryAfter: { min: 0, max: 86_400 },
  times: { min: 1, max: 1_000_000 },
} as const;

/** How many rules a tenant holds at most: each is asked on every call, and the dashboard lists them all. */
export const MAX_FAULT_RULES = 100;

type Range = { readonly min: number; readonly max: number };

const within = (value: unknown, { min, max }: Range): value is number =>
  Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;

const rangeText = ({ min, max }: Range) => `a whole number from ${min} to ${max}`;

function fail(message: string): never {
  throw new FaultRuleError(`Fault rule refused: ${message}`);
}

function oneOf<T>(value: unknown, allowed: readonly T[], field: string): T {
  if (!allowed.includes(value as T)) fail(`${field} must be one of ${allowed.map((item) => JSON.stringify(item)).join(', ')}`);
  return value as T;
}

function parseEffect(value: unknown): FaultEffect {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('effect must be an object with a type');
  const effect = value as Record<string, unknown>;
  const type = oneOf(effect.type, Object.keys(EFFECT_FIELDS) as FaultEffect['type'][], 'effect.type');
  const unknown = Object.keys(effect).find((field) => field !== 'type' && !EFFECT_FIELDS[type]?.includes(field));
  if (unknown !== undefined) fail(`effect.${unknown} is not a field of a ${type} effect`);
  const count = (field: string, range: Range, optional = false): number | undefined => {
    const amount = effect[field];
    if (optional && amount === undefined) return undefined;
    if (!within(amount, range)) fail(`effect.${field} must be ${rangeText(range)}`);
    return amount;
  };
  switch (type) {
    case 'latency': {
      const ms = effect.ms;
      if (Array.isArray(ms)) {
        const [min, max] = ms as unknown[];
        const range = FAULT_RULE_LIMITS.latencyMs;
        if (ms.length !== 2 || !within(min, range) || !within(max, range) || min > max)
          fail(`effect.ms must be N or [MIN, MAX] with MIN <= MAX, each ${rangeText(range)}`);
        return { type, ms: [min, max] };
      }
      return { type, ms: count('ms', FAULT_RULE_LIMITS.latencyMs) as number };
    }
    case 'error': {
      const status = oneOf(effect.status, [500, 502, 503, 504, 429] as const, 'effect.status');
      const when = oneOf(effect.when, ['before', 'after-commit'] as const, 'effect.when');
      const retryAfter = count('retryAfter', FAULT_RULE_LIMITS.retryAfter, true);
      return retryAfter === undefined ? { type, status, when } : { type, status, when, retryAfter };
    }
    case 'reset':
      return { type, when: oneOf(effect.when, ['before', 'after-commit'] as const, 'effect.when') };
    case 'duplicate':
      return { type, copies: count('copies', FAULT_RULE_LIMITS.copies) as number };
    case 'delay':
      return { type, ms: count('ms', FAULT_RULE_LIMITS.delayMs) as number };
    case 'terminal': {
      const outcome = oneOf(effect.outcome, ['busy', 'offline', 'slow'] as const, 'effect.outcome');
      const ms = count('ms', FAULT_RULE_LIMITS.terminalMs, true);
      if (outcome === 'slow' && ms === undefined) fail('a slow terminal needs effect.ms');
      return ms === undefined ? { type, outcome } : { type, outcome, ms };
    }
    default:
      return { type } as FaultEffect;
  }
}

/**
 * Checks a rule's shape and that its effect can apply to what it matches: API effects need a
 * route, webhook effects an event, terminal effects the route `POST /pos/payment`.
 * `routes` are the route templates the sandbox answers.
 */
export function parseFaultRule(value: unknown, routes: readonly string[]): FaultRule {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('a rule must be a JSON object');
  const input = value as Record<string, unknown>;
  const unknown = Object.keys(input).find((field) => !RULE_FIELDS.has(field));
  if (unknown !== undefined) fail(`${unknown} is not a field of a rule`);
  const rule: FaultRule = { effect: parseEffect(input.effect) };
  if (input.environment !== undefined) rule.environment = oneOf(input.environment, ['test', 'live'] as const, 'environment');
  if (input.route !== undefined) rule.route = oneOf(input.route, routes, 'route');
  if (input.event !== undefined) rule.event = oneOf(input.event, ['AUTHORISATION', 'REFUND'] as const, 'event');
  if (input.times !== undefined) {
    if (!within(input.times, FAULT_RULE_LIMITS.times)) fail(`times must be ${rangeText(FAULT_RULE_LIMITS.times)}`);
    rule.times = input.times;
  }
  if (input.probability !== undefined) {
    const { probability } = input;
    if (typeof probability !== 'number' || !(probability >= 0 && probability <= 1)) fail('probability must be a number from 0 to 1');
    rule.probability = probability;
  }
  if (rule.route === undefined && rule.event === undefined) fail('name a route ("POST /payment/session") or an event ("AUTHORISATION")');
  const { type } = rule.effect;
  if (API_EFFECTS.has(type) && (rule.route === undefined || rule.event !== undefined))
    fail(`a ${type} effect applies to API calls: give a route and no event`);
  if (WEBHOOK_EFFECTS.has(type) && (rule.event === undefined || rule.route !== undefined))
    fail(`a ${type} effect applies to webhooks: give an event and no route`);
  if (type === 'terminal' && (rule.route !== TERMINAL_ROUTE || rule.event !== undefined))
    fail(`a terminal effect applies to the route "${TERMINAL_ROUTE}" only`);
  return rule;
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
