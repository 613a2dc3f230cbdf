/**
 * The dashboard's fault rules page: the chosen tenant's rules with what each matches, how often it
 * strikes, its effect and how many times it struck; a form that adds one (checked as
 * `POST /_sandbox/faults` checks it), and buttons that remove one or all.
 */
import { API_ROUTES } from '../../api/routes.js';
import { EFFECT_FIELDS, type FaultEffect, type FaultRuleState } from '../../faults.js';
import { type Html, html } from '../html.js';
import { actionForm, type Cell, type DashboardContext, type PageParts, table } from './parts.js';

/** What an effect does, in words. */
export function describeEffect(effect: FaultEffect): string {
  switch (effect.type) {
    case 'latency':
      return `latency of ${typeof effect.ms === 'number' ? effect.ms : `${effect.ms[0]} to ${effect.ms[1]}`} ms`;
    case 'error':
      return `error ${effect.status} ${effect.when === 'before' ? 'before it ran' : 'after it committed'}${
        effect.retryAfter === undefined ? '' : `, Retry-After ${effect.retryAfter} s`
      }`;
    case 'reset':
      return `connection reset ${effect.when === 'before' ? 'before it ran' : 'after it committed'}`;
    case 'truncate':
      return 'answer cut in half';
    case 'duplicate':
      return `${effect.copies} copies sent at once`;
    case 'delay':
      return `first attempt ${effect.ms} ms later`;
    case 'drop':
      return 'dropped: delivered only on resend';
    case 'reorder':
      return 'held back until the next event of its payment';
    case 'terminal':
      return effect.outcome === 'slow'
        ? `terminal slower by ${effect.ms ?? 0} ms`
        : `terminal ${effect.outcome} (${effect.outcome === 'busy' ? 13005 : 13004})`;
  }
}

function matches(rule: FaultRuleState): Html {
  const where = rule.environment === undefined ? 'Test and Live' : rule.environment === 'test' ? 'Test only' : 'Live only';
  return html`${rule.route === undefined ? `${rule.event} webhooks` : html`<code>${rule.route}</code>`}<br><span class="muted">${where}</span>`;
}

function frequency(rule: FaultRuleState): string {
  const chance = rule.probability === undefined ? '' : `${Math.round(rule.probability * 1000) / 10} % of matches`;
  if (rule.times === undefined) return chance || 'every match';
  const left = `next ${rule.times} (${Math.max(0, rule.times - rule.injected)} left)`;
  return chance ? `${left}, ${chance}` : left;
}

/** A form's numeric text as a number, other text as it is (the rule's check names what is wrong), empty as absent. */
function value(text: string | null): string | number | undefined {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return undefined;
  return /^-?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed;
}

/**
 * The rule a posted form describes, for the same check as `POST /_sandbox/faults`. Only the fields
 * of the chosen effect are taken: the form shows the fields of every effect at once.
 */
export function ruleFromForm(form: URLSearchParams): Record<string, unknown> {
  const type = form.get('effect') ?? '';
  const effect: Record<string, unknown> = { type };
  for (const field of EFFECT_FIELDS[type as FaultEffect['type']] ?? []) {
    const text = form.get(field);
    const range = field === 'ms' && type === 'latency' ? /^\s*(\d+)\s*(?:-|to|,)\s*(\d+)\s*$/.exec(text ?? '') : null;
    const given = range ? [Number(range[1]), Number(range[2])] : value(text);
    if (given !== undefined) effect[field] = given;
  }
  const target = form.get('target') ?? '';
  const rule: Record<string, unknown> = { effect };
  if (target.startsWith('route:')) rule.route = target.slice('route:'.length);
  if (target.startsWith('event:')) rule.event = target.slice('event:'.length);
  for (const field of ['environment', 'times', 'probability']) {
    const given = value(form.get(field));
    if (given !== undefined) rule[field] = given;
  }
  return rule;
}

/** `<option>`s with `chosen` selected: `[value, label]` pairs. */
function options(choices: readonly (readonly [string, string])[], chosen: string | null): Html[] {
  return choices.map(([choice, label]) => html`<option value="${choice}"${chosen === choice && html` selected`}>${label}</option>`);
}

/** A labelled field with its hint: which effects use it, what it takes. */
function field(id: string, label: string, control: Html, hint: string): Html {
  return html`<div><label for="${id}">${label}</label>${control}<p id="${id}-hint" class="hint">${hint}</p></div>`;
}

function input(form: URLSearchParams, id: string, name: string, attributes: Html = html``): Html {
  return html`<input id="${id}" name="${name}" value="${form.get(name) ?? ''}" aria-describedby="${id}-hint"${attributes}>`;
}

function select(form: URLSearchParams, id: string, name: string, choices: readonly (readonly [string, string])[]): Html {
  return html`<select id="${id}" name="${name}" aria-describedby="${id}-hint">${options(choices, form.get(name))}</select>`;
}

const EFFECT_CHOICES = [
  ['error', 'error: the failure envelope'],
  ['reset', 'reset: no answer'],
  ['latency', 'latency: a later answer'],
  ['truncate', 'truncate: half an answer'],
  ['terminal', 'terminal: busy, offline, slow'],
  ['duplicate', 'duplicate (webhook)'],
  ['delay', 'delay (webhook)'],
  ['drop', 'drop (webhook)'],
  ['reorder', 'reorder (webhook)'],
] as const;

function addForm(context: DashboardContext, form: URLSearchParams): Html {
  const targets = html`<optgroup label="API calls">${options(
    API_ROUTES.map((route) => [`route:${route.template}`, route.template] as const),
    form.get('target'),
  )}</optgroup><optgroup label="Webhook events">${options(
    [
      ['event:AUTHORISATION', 'AUTHORISATION webhook'],
      ['event:REFUND', 'REFUND webhook'],
    ],
    form.get('target'),
  )}</optgroup>`;
  return actionForm(
    context,
    'add-fault',
    '/faults',
    {
      fields: [
        html`<fieldset><legend>What it strikes</legend><div class="fields">
${field('fault-target', 'Call or event', html`<select id="fault-target" name="target" aria-describedby="fault-target-hint">${targets}</select>`, 'A method and route template, or a webhook event code.')}
${field(
  'fault-environment',
  'Environment',
  select(form, 'fault-environment', 'environment', [
    ['', 'Test and Live'],
    ['test', 'Test'],
    ['live', 'Live'],
  ]),
  'Calls of one environment only, or both.',
)}
${field('fault-times', 'Times', input(form, 'fault-times', 'times', html` inputmode="numeric" size="6"`), 'The next N matches only. Empty: every match.')}
${field('fault-probability', 'Probability', input(form, 'fault-probability', 'probability', html` inputmode="decimal" size="6"`), '0 to 1, drawn from the seeded stream. Empty: 1.')}
</div></fieldset>`,
        html`<fieldset><legend>What it does</legend><div class="fields">
${field('fault-effect', 'Effect', select(form, 'fault-effect', 'effect', EFFECT_CHOICES), 'The fields below are read only where the effect takes them.')}
${field(
  'fault-status',
  'Status',
  select(form, 'fault-status', 'status', [
    ['', '—'],
    ['500', '500'],
    ['502', '502'],
    ['503', '503'],
    ['504', '504'],
    ['429', '429'],
  ]),
  'error.',
)}
${field(
  'fault-when',
  'When',
  select(form, 'fault-when', 'when', [
    ['', '—'],
    ['before', 'before it runs'],
    ['after-commit', 'after it commits'],
  ]),
  'error, reset.',
)}
${field('fault-ms', 'Milliseconds', input(form, 'fault-ms', 'ms', html` size="10"`), 'latency (N or MIN-MAX) and slow terminal: up to 600000; delay: up to 86400000.')}
${field('fault-retry-after', 'Retry-After (s)', input(form, 'fault-retry-after', 'retryAfter', html` inputmode="numeric" size="6"`), 'error, optional: 0 to 86400.')}
${field('fault-copies', 'Copies', input(form, 'fault-copies', 'copies', html` inputmode="numeric" size="6"`), 'duplicate: 2 to 100.')}
${field(
  'fault-outcome',
  'Terminal',
  select(form, 'fault-outcome', 'outcome', [
    ['', '—'],
    ['busy', 'busy (13005)'],
    ['offline', 'offline (13004)'],
    ['slow', 'slow'],
  ]),
  'terminal.',
)}
</div></fieldset>`,
      ],
      stacked: true,
    },
    'Add rule',
  );
}

/** The page; `form` holds what a refused form posted, shown again to be corrected. */
export function faultsPage(context: DashboardContext, form = new URLSearchParams()): PageParts {
  const rules = context.faults.list();
  const rows = rules.map((rule): Cell[] => [
    // The request log's entries link here, to the rule that answered them.
    html`<span id="rule-${rule.id}">${rule.id}</span>`,
    matches(rule),
    frequency(rule),
    describeEffect(rule.effect),
    String(rule.injected),
    actionForm(
      context,
      'remove-fault',
      '/faults',
      { hidden: { id: rule.id } },
      html`Remove<span class="visually-hidden"> ${rule.id}</span>`,
      'secondary',
    ),
  ]);
  return {
    title: 'Fault rules',
    environment: undefined,
    current: 'faults',
    body: html`<h1>Fault rules of ${context.webcode}</h1>
<p>What the sandbox gets wrong on purpose for this webcode's keys, as <code>/_sandbox/faults</code> does. Every answer a rule changed carries
<code>X-Sandbox-Fault</code>; a strike on a call that names or makes a record, or on a webhook, shows on that record's timeline.</p>
${table('Fault rules, in the order they are asked', [['Rule', 'id'], 'Matches', ['How often', 'extra'], 'Effect', ['Struck', 'nowrap'], 'Action'], rows, 'No rule: the sandbox answers as the service does.')}
${rules.length > 0 && actionForm(context, 'clear-faults', '/faults', {}, 'Remove all rules', 'danger')}
<h2>Add a rule</h2>
${addForm(context, form)}`,
  };
}
