/**
 * A fault rule's shape as one Zod schema: what `POST /_sandbox/faults` validates and documents, and
 * what `sandbox.faults.add` and the CLI's `--faults` file are checked against. Each refusal says
 * which field is wrong and, for a number, its range (the first issue is the one reported).
 */
import * as z from 'zod/mini';
import { hinted } from '../schemas/common.js';
import type { FaultEffect, FaultRule } from './fault-rule.js';

/** What every refusal of a rule starts with. */
export const FAULT_REFUSED = 'Fault rule refused: ';

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
  copies: { min: 2, max: 10_000 },
  retryAfter: { min: 0, max: 86_400 },
  times: { min: 1, max: 1_000_000 },
} as const;

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

/** Effects on API calls, on webhook deliveries, and the route terminal effects apply to. */
export const API_EFFECTS: ReadonlySet<string> = new Set(['latency', 'error', 'reset', 'truncate']);
export const WEBHOOK_EFFECTS: ReadonlySet<string> = new Set(['duplicate', 'delay', 'drop', 'reorder']);
export const TERMINAL_ROUTE = 'POST /pos/payment';

type Range = { readonly min: number; readonly max: number };

const refused = (message: string) => `${FAULT_REFUSED}${message}`;
const rangeText = ({ min, max }: Range) => `a whole number from ${min} to ${max}`;
const listed = (values: readonly unknown[]) => values.map((value) => JSON.stringify(value)).join(', ');

/** A whole number within `range`; the JSON Schema says `integer` with the range. */
function count(field: string, range: Range, description?: string, message = refused(`${field} must be ${rangeText(range)}`)) {
  const schema = hinted(
    z
      .number({ error: message })
      .check(z.refine(Number.isSafeInteger, message), z.minimum(range.min, message), z.maximum(range.max, message)),
    { type: 'integer' },
  );
  return description === undefined ? schema : schema.check(z.describe(description));
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T, field: string) {
  return z.enum(values, { error: refused(`${field} must be one of ${listed(values)}`) });
}

const ERROR_STATUSES = [500, 502, 503, 504, 429] as const;
const when = oneOf(['before', 'after-commit'], 'effect.when');

function latencyMs() {
  const range = FAULT_RULE_LIMITS.latencyMs;
  const pair = refused(`effect.ms must be N or [MIN, MAX] with MIN <= MAX, each ${rangeText(range)}`);
  const bound = count('effect.ms', range, undefined, pair);
  return z.union(
    [
      count('effect.ms', range),
      z
        .tuple([bound, bound], { error: pair })
        .check(
          z.refine(([min, max]) => min <= max, pair),
          z.describe('[MIN, MAX]'),
        )
        .check(z.minLength(2, pair), z.maxLength(2, pair)),
    ],
    { error: (issue) => (Array.isArray(issue.input) ? pair : refused(`effect.ms must be ${rangeText(range)}`)) },
  );
}

/** One effect type: `type` and its fields, nothing else. */
function effect<const T extends FaultEffect['type'], S extends z.core.$ZodLooseShape>(type: T, shape: S) {
  return z
    .strictObject(
      { type: z.literal(type), ...shape },
      {
        error: (issue) =>
          issue.code === 'unrecognized_keys' ? refused(`effect.${issue.keys[0]} is not a field of a ${type} effect`) : undefined,
      },
    )
    .check(z.meta({ title: type }));
}

const EFFECT_TYPES = Object.keys(EFFECT_FIELDS) as [FaultEffect['type'], ...FaultEffect['type'][]];

/** What a rule does where it strikes. */
export const FaultEffectSchema = z.discriminatedUnion(
  'type',
  [
    effect('latency', { ms: latencyMs() }),
    effect('error', {
      status: hinted(z.literal(ERROR_STATUSES, { error: refused(`effect.status must be one of ${listed(ERROR_STATUSES)}`) }), {
        type: 'integer',
      }),
      when,
      retryAfter: z.optional(count('effect.retryAfter', FAULT_RULE_LIMITS.retryAfter, 'Seconds, sent as `Retry-After`.')),
    }),
    effect('reset', { when }),
    effect('truncate', {}),
    effect('duplicate', { copies: count('effect.copies', FAULT_RULE_LIMITS.copies) }),
    effect('delay', { ms: count('effect.ms', FAULT_RULE_LIMITS.delayMs, 'Milliseconds of the sandbox clock.') }),
    effect('drop', {}),
    effect('reorder', {}),
    effect('terminal', {
      outcome: oneOf(['busy', 'offline', 'slow'], 'effect.outcome'),
      ms: z.optional(count('effect.ms', FAULT_RULE_LIMITS.terminalMs)),
    }).check(z.refine((terminal) => terminal.outcome !== 'slow' || terminal.ms !== undefined, refused('a slow terminal needs effect.ms'))),
  ],
  {
    error: (issue) =>
      typeof issue.input === 'object' && issue.input !== null && !Array.isArray(issue.input)
        ? refused(`effect.type must be one of ${listed(EFFECT_TYPES)}`)
        : refused('effect must be an object with a type'),
  },
);

/** Whether a rule's effect can apply to what it names: API effects a route, webhook effects an event, terminal effects the POS route. */
function appliesProblem(rule: FaultRule): string | undefined {
  if (rule.route === undefined && rule.event === undefined) return 'name a route ("POST /payment/session") or an event ("AUTHORISATION")';
  const { type } = rule.effect;
  if (API_EFFECTS.has(type) && (rule.route === undefined || rule.event !== undefined))
    return `a ${type} effect applies to API calls: give a route and no event`;
  if (WEBHOOK_EFFECTS.has(type) && (rule.event === undefined || rule.route !== undefined))
    return `a ${type} effect applies to webhooks: give an event and no route`;
  if (type === 'terminal' && (rule.route !== TERMINAL_ROUTE || rule.event !== undefined))
    return `a terminal effect applies to the route "${TERMINAL_ROUTE}" only`;
  return undefined;
}

const schemas = new WeakMap<readonly string[], ReturnType<typeof makeSchema>>();

function makeSchema(routes: readonly [string, ...string[]]) {
  return z
    .strictObject(
      {
        // First, so that a rule reads back with its fields in the order the sandbox always gave them.
        effect: FaultEffectSchema,
        environment: z.optional(oneOf(['test', 'live'], 'environment')),
        route: z.optional(oneOf(routes, 'route')),
        event: z.optional(oneOf(['AUTHORISATION', 'REFUND'], 'event')),
        times: z.optional(count('times', FAULT_RULE_LIMITS.times, 'Strikes the next N matches only; default every match.')),
        probability: z.optional(
          z
            .number({ error: refused('probability must be a number from 0 to 1') })
            .check(
              z.minimum(0, refused('probability must be a number from 0 to 1')),
              z.maximum(1, refused('probability must be a number from 0 to 1')),
              z.describe('Drawn from the stream seeded by the sandbox seed; default 1.'),
            ),
        ),
      },
      {
        error: (issue) =>
          issue.code === 'unrecognized_keys'
            ? refused(`${issue.keys[0]} is not a field of a rule`)
            : issue.code === 'invalid_type'
              ? refused('a rule must be a JSON object')
              : undefined,
      },
    )
    .check(
      z.superRefine((rule, context) => {
        const problem = appliesProblem(rule as FaultRule);
        if (problem !== undefined) context.issues.push({ code: 'custom', message: refused(problem), input: rule });
      }),
      z.describe(
        'Name a `route` (API effects: latency, error, reset, truncate; terminal effects on `POST /pos/payment`) or an `event` (webhook effects: duplicate, delay, drop, reorder).',
      ),
    );
}

/** The schema of a rule that may name one of `routes` (the route templates the sandbox answers); one per list. */
export function faultRuleSchema(routes: readonly string[]) {
  let schema = schemas.get(routes);
  if (!schema) {
    const [first = TERMINAL_ROUTE, ...rest] = routes;
    schema = makeSchema([first, ...rest]);
    schemas.set(routes, schema);
  }
  return schema;
}

/** The message of the first thing wrong with `value` as a rule, or the rule. */
export function checkFaultRule(value: unknown, routes: readonly string[]): { rule: FaultRule } | { problem: string } {
  const result = z.safeParse(faultRuleSchema(routes), value);
  if (result.success) return { rule: result.data as FaultRule };
  return { problem: result.error.issues[0]?.message ?? refused('the rule is not valid') };
}
