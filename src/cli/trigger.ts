/**
 * `payment-service-sdk trigger <scenario>`: makes the sandbox produce a scenario end to end
 * (records, webhooks) through the public API and the sandbox's control API, and prints the
 * records it made. Every `--param` is checked before the first request: an unknown key, a key the
 * scenario does not use, or a bad value is a usage error (exit 2) and nothing is made.
 * `trigger --fixture FILE.json` runs the steps of a file instead (./fixture/).
 */
import { Argument, type Command } from 'commander';
import { parseWith, toIssues } from '../core/response.js';
import { type Currency, type PaymentClient, TerminalBusyError, type ValidationIssue } from '../index.js';
import { CreatePosPaymentParamsSchema } from '../schemas/pos.js';
import { CreateSessionParamsSchema } from '../schemas/sessions.js';
import { POS_TEST_ENDINGS, type PosTestOutcome, posTestAmount, TEST_CARDHOLDER_NAMES, TEST_TERMINALS } from '../testing/index.js';
import { parseAmount } from './amount.js';
import { findSandbox, type SandboxLink } from './control.js';
import type { TouchedRecord } from './fixture/actions.js';
import { loadFixture } from './fixture/file.js';
import { STDIN } from './fixture/read.js';
import { runFixture } from './fixture/run.js';
import { type Format, UsageError, writeRecords } from './io.js';
import { type CommandContext, spinner } from './program.js';

/** How long a scenario waits for the sandbox to resolve a refund, or to attempt a webhook. */
const SETTLE_TIMEOUT_MS = 10_000;
const POLL_MS = 50;
const DEFAULT_POI_ID = TEST_TERMINALS[0].poiId;
/** The amount of a session scenario, in cents, unless `--param amount` says otherwise. */
const DEFAULT_AMOUNT = 1000;

interface Param {
  description: string;
  /** Shown in help; the scenario applies it. */
  default?: string;
  /** Turns the text after `=` into the value, or throws a UsageError saying what it must be; `currency` is `--param currency`'s. */
  parse?: (value: string, key: string, currency: string | undefined) => unknown;
}

type Values = Record<string, unknown>;

/** A webhook the sandbox made for a record, as the control API reports it. */
interface Delivery {
  id: number;
  url: string;
  event: { event_code: string };
  attempts: { status: number | null }[];
  delivered: boolean;
}

interface Timeline {
  record: Record<string, unknown>;
  deliveries: Delivery[];
}

/** One record a scenario or a fixture made. */
interface TriggeredRecord {
  type: TouchedRecord['type'];
  id: string | null;
  status: string;
  /** The payment's reference (the refund's, for a refund). */
  reference: string | null;
  amount: { value: number; currency: string } | null;
  /** The webhooks the sandbox sent about it. */
  webhooks: { id: number; eventCode: string; url: string; delivered: boolean; lastStatus: number | null }[];
  /** The record as the control API holds it, or the service's refusal. */
  record: Record<string, unknown>;
}

interface Run {
  client: PaymentClient;
  sandbox: SandboxLink;
  values: Values;
  holder: string | undefined;
  wait: (text: string) => () => void;
  /** The records made so far: printed at the end, also when a later step fails. */
  made: TriggeredRecord[];
  /** What did not go as the scenario says: printed after the records, and the exit code is 1. */
  unexpected: string[];
}

interface Scenario {
  name: string;
  description: string;
  params: Record<string, Param>;
  /** What is wrong with the values: the requests they make, checked against the SDK's schemas, and the scenario's own rules. */
  check(values: Values): ValidationIssue[];
  /** Makes the records, adding each to `run.made` as soon as it is known. */
  run(run: Run): Promise<void>;
}

function cents(value: string, key: string, currency: string | undefined): number {
  return parseAmount(value, `--param ${key}`, currency);
}

function oneOf(choices: readonly string[]) {
  return (value: string, key: string) => {
    if (!choices.includes(value)) throw new UsageError(`--param ${key} must be one of ${choices.join(', ')}, got ${value}`);
    return value;
  };
}

const ONLINE_TERMINALS = TEST_TERMINALS.filter((terminal) => terminal.online).map((terminal) => terminal.poiId);

const PAYMENT_PARAMS: Record<string, Param> = {
  amount: { description: 'amount in cents', default: String(DEFAULT_AMOUNT), parse: cents },
  currency: { description: 'EUR, GBP or USD', default: 'EUR' },
  description: { description: 'description of the payment (up to 255 characters)' },
  customReference: { description: 'your reference (up to 100 characters)' },
};
const SESSION_PARAMS: Record<string, Param> = {
  ...PAYMENT_PARAMS,
  urlOk: { description: "the session's urlOk", default: 'https://shop.example/ok' },
  urlKo: { description: "the session's urlKo", default: 'https://shop.example/ko' },
};

function posParams(outcome: PosTestOutcome): Record<string, Param> {
  const ending =
    outcome === 'success' ? `not ending in ${Object.values(POS_TEST_ENDINGS).join(', ')}` : `ending in ${POS_TEST_ENDINGS[outcome]}`;
  return {
    ...PAYMENT_PARAMS,
    amount: { description: `amount in cents, ${ending}`, default: String(posTestAmount(outcome)), parse: cents },
    poiId: {
      description: `an online Test terminal: ${ONLINE_TERMINALS.join(', ')}`,
      default: DEFAULT_POI_ID,
      parse: oneOf(ONLINE_TERMINALS),
    },
  };
}

/** The params of `sessions.create` a session scenario sends. */
function sessionParams(values: Values, scenario: string): Record<string, unknown> {
  return {
    amount: { value: values.amount ?? DEFAULT_AMOUNT, currency: values.currency ?? 'EUR' },
    urlOk: values.urlOk ?? SESSION_PARAMS.urlOk?.default,
    urlKo: values.urlKo ?? SESSION_PARAMS.urlKo?.default,
    description: values.description ?? `payment-service-sdk trigger ${scenario}`,
    ...(values.customReference === undefined ? {} : { customReference: values.customReference }),
  };
}

function posPaymentParams(values: Values, outcome: PosTestOutcome, scenario: string): Record<string, unknown> {
  return {
    poiId: values.poiId ?? DEFAULT_POI_ID,
    amount: { value: values.amount ?? posTestAmount(outcome), currency: values.currency ?? 'EUR' },
    description: values.description ?? `payment-service-sdk trigger ${scenario}`,
    ...(values.customReference === undefined ? {} : { customReference: values.customReference }),
  };
}

/** Issues of `params` against `schema`, named as the `--param` that set them (`amount.value` is `amount`). */
function issuesOf(schema: Parameters<typeof parseWith>[0], params: unknown): ValidationIssue[] {
  const parsed = parseWith(schema, params);
  if (parsed.success) return [];
  return toIssues(parsed.error).map((issue) => {
    const key = issue.path === 'amount.currency' ? 'currency' : (issue.path.split('.')[0] ?? issue.path);
    return { path: `--param ${key}`, message: issue.message };
  });
}

/** Whether `amount` gives `outcome` on a Test terminal (its last two digits decide). */
function posEndingIssues(values: Values, outcome: PosTestOutcome): ValidationIssue[] {
  if (values.amount === undefined) return [];
  const ending = (values.amount as number) % 100;
  const endings = Object.values(POS_TEST_ENDINGS) as number[];
  const ok = outcome === 'success' ? !endings.includes(ending) : ending === POS_TEST_ENDINGS[outcome];
  if (ok) return [];
  const want = outcome === 'success' ? `must not end in ${endings.join(', ')}` : `must end in ${POS_TEST_ENDINGS[outcome]}`;
  return [{ path: '--param amount', message: `${want} for ${outcome === 'busy' ? 'a busy terminal' : `a ${outcome}`} on a Test terminal` }];
}

/** A control action on a record of the sandbox's environment: `path` is `sessions/ID/pay` and the like. */
function act(run: Run, path: string, body: Record<string, unknown> = {}): Promise<unknown> {
  return run.sandbox.request('POST', `${run.sandbox.environment}/${path}`, body);
}

/** The check of a POS scenario: the payment it sends, and the amount ending its outcome needs. */
function posCheck(outcome: PosTestOutcome, scenario: string): (values: Values) => ValidationIssue[] {
  return (values) => [
    ...issuesOf(CreatePosPaymentParamsSchema, posPaymentParams(values, outcome, scenario)),
    ...posEndingIssues(values, outcome),
  ];
}

async function sleep(ms: number): Promise<void> {
  await new Promise((done) => setTimeout(done, ms));
}

/** The record's timeline once each of its webhooks has had its first attempt (or the wait ran out). */
async function settled(sandbox: SandboxLink, path: string, ready: (timeline: Timeline) => boolean = () => true): Promise<Timeline> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const timeline = await sandbox.request<Timeline>('GET', `${sandbox.environment}/${path}`);
    const attempted = timeline.deliveries.every((delivery) => delivery.attempts.length > 0);
    if ((ready(timeline) && attempted) || Date.now() > deadline) return timeline;
    await sleep(POLL_MS);
  }
}

function made(type: TriggeredRecord['type'], id: string, reference: unknown, timeline: Timeline): TriggeredRecord {
  const { record } = timeline;
  const amount = record.amount as { value: number; currency: string } | undefined;
  return {
    type,
    id,
    status: String(record.status),
    reference: typeof reference === 'string' ? reference : null,
    amount: amount ? { value: amount.value, currency: amount.currency } : null,
    webhooks: timeline.deliveries.map((delivery) => ({
      id: delivery.id,
      eventCode: delivery.event.event_code,
      url: delivery.url,
      delivered: delivery.delivered,
      lastStatus: delivery.attempts.at(-1)?.status ?? null,
    })),
    record,
  };
}

async function createSession(run: Run, scenario: string) {
  return run.client.sessions.create(sessionParams(run.values, scenario) as never);
}

/** The session's payment reference, or its last attempt's: a declined attempt has a reference of its own, the session none. */
function sessionReference(timeline: Timeline): unknown {
  const attempts = timeline.record.attempts as { paymentReference?: unknown }[] | undefined;
  return timeline.record.paymentReference ?? attempts?.at(-1)?.paymentReference;
}

async function sessionRecord(run: Run, sessionId: string): Promise<TriggeredRecord> {
  const timeline = await settled(run.sandbox, `sessions/${encodeURIComponent(sessionId)}`);
  return made('session', sessionId, sessionReference(timeline), timeline);
}

async function posPayment(run: Run, outcome: PosTestOutcome, scenario: string) {
  const stop = run.wait(`Waiting for terminal ${String(run.values.poiId ?? DEFAULT_POI_ID)}...`);
  try {
    return await run.client.pos.createPayment(posPaymentParams(run.values, outcome, scenario) as never, { recover: false });
  } finally {
    stop();
  }
}

async function posRecord(run: Run, posPaymentId: string): Promise<TriggeredRecord> {
  const timeline = await settled(run.sandbox, `pos-payments/${encodeURIComponent(posPaymentId)}`);
  return made('pos-payment', posPaymentId, posPaymentId, timeline);
}

function sessionScenario(
  name: string,
  description: string,
  expected: string,
  act: (run: Run, sessionId: string) => Promise<unknown>,
): Scenario {
  return {
    name,
    description,
    params: SESSION_PARAMS,
    check: (values) => issuesOf(CreateSessionParamsSchema, sessionParams(values, name)),
    async run(run) {
      const session = await createSession(run, name);
      await act(run, session.sessionId);
      const record = await sessionRecord(run, session.sessionId);
      if (record.status !== expected) run.unexpected.push(`the session is ${record.status}, not ${expected}`);
      run.made.push(record);
    },
  };
}

function posScenario(name: string, description: string, outcome: 'success' | 'timeout', extra: Record<string, Param> = {}): Scenario {
  return {
    name,
    description,
    params: { ...posParams(outcome), ...extra },
    check: posCheck(outcome, name),
    async run(run) {
      const payment = await posPayment(run, outcome, name);
      if (payment.status !== outcome) run.unexpected.push(`the terminal answered ${payment.status}, not ${outcome}`);
      const resolve = run.values.resolve as 'success' | 'failed' | undefined;
      if (resolve) await act(run, `pos-payments/${encodeURIComponent(payment.posPaymentId)}/resolve`, { outcome: resolve });
      run.made.push(await posRecord(run, payment.posPaymentId));
    },
  };
}

const SCENARIOS: readonly Scenario[] = [
  sessionScenario('payment.authorised', 'a session paid on the hosted page: AUTHORISATION webhook', 'completed', (run, id) =>
    act(run, `sessions/${encodeURIComponent(id)}/pay`),
  ),
  sessionScenario(
    'payment.declined',
    'a session whose card is declined (--holder NAME picks how): the session fails',
    'failed',
    (run, id) => act(run, `sessions/${encodeURIComponent(id)}/pay`, { holderName: run.holder }),
  ),
  sessionScenario('session.expired', 'a session whose payment page timed out: expired', 'expired', (run, id) =>
    act(run, `sessions/${encodeURIComponent(id)}/expire`),
  ),
  posScenario('pos.success', 'a POS payment the terminal approves: success, AUTHORISATION webhook', 'success'),
  posScenario('pos.timeout', 'a POS payment the terminal does not answer in time: timeout (completed later)', 'timeout', {
    resolve: {
      description: 'success or failed: complete it now, with its webhook (default: the sandbox completes it later by itself)',
      parse: oneOf(['success', 'failed']),
    },
  }),
  {
    name: 'pos.terminal-busy',
    description: 'a POS payment refused because the terminal is busy (409, code 13005): nothing is charged or recorded',
    params: posParams('busy'),
    check: posCheck('busy', 'pos.terminal-busy'),
    async run(run) {
      const params = posPaymentParams(run.values, 'busy', 'pos.terminal-busy');
      try {
        const payment = await posPayment(run, 'busy', 'pos.terminal-busy');
        run.unexpected.push(`the terminal was not busy: it answered ${payment.status}`);
        run.made.push(await posRecord(run, payment.posPaymentId));
      } catch (error) {
        if (!(error instanceof TerminalBusyError)) throw error;
        const amount = params.amount as { value: number; currency: string };
        const refusal = { httpStatus: error.status, code: error.code ?? null, message: error.message, traceId: error.traceId ?? null };
        run.made.push({ type: 'pos-payment', id: null, status: 'busy', reference: null, amount, webhooks: [], record: refusal });
      }
    },
  },
  {
    name: 'refund.success',
    description: 'a paid session refunded, the refund resolved: REFUND webhook',
    params: {
      ...SESSION_PARAMS,
      refundAmount: { description: 'cents to refund (default: all of it)', parse: cents },
      reason: { description: 'reason of the refund' },
    },
    check(values) {
      const issues = issuesOf(CreateSessionParamsSchema, sessionParams(values, 'refund.success'));
      if (values.refundAmount === 0) issues.push({ path: '--param refundAmount', message: 'must be greater than 0' });
      if (
        values.refundAmount !== undefined &&
        (values.refundAmount as number) > ((values.amount as number | undefined) ?? DEFAULT_AMOUNT)
      ) {
        issues.push({ path: '--param refundAmount', message: 'must be at most the amount paid' });
      }
      return issues;
    },
    async run(run) {
      const session = await createSession(run, 'refund.success');
      await act(run, `sessions/${encodeURIComponent(session.sessionId)}/pay`);
      const paid = await sessionRecord(run, session.sessionId);
      run.made.push(paid);
      if (paid.status !== 'completed' || !paid.reference) {
        run.unexpected.push(`the session is ${paid.status}, not completed: nothing to refund`);
        return;
      }
      const { refundAmount, reason, currency = 'EUR' } = run.values as { refundAmount?: number; reason?: string; currency?: Currency };
      const refund = await run.client.modifications.refund({
        paymentReference: paid.reference,
        ...(refundAmount === undefined ? {} : { amount: { value: refundAmount, currency } }),
        ...(reason === undefined ? {} : { reason }),
      });
      const reference = refund.refundReference;
      const timeline = await settled(run.sandbox, `modifications/${encodeURIComponent(reference)}`, (t) => t.record.status !== 'pending');
      if (timeline.record.status !== 'success') run.unexpected.push(`the refund is ${String(timeline.record.status)}, not success`);
      run.made.push(made('refund', reference, reference, timeline));
    },
  },
];

/** The scenario names, in the order help lists them. */
const TRIGGER_SCENARIOS = SCENARIOS.map((scenario) => scenario.name);

function scenarioHelp(): string {
  const lines = ['', 'Scenarios and their --param keys:'];
  for (const scenario of SCENARIOS) {
    lines.push(`  ${scenario.name}: ${scenario.description}`);
    for (const [key, param] of Object.entries(scenario.params)) {
      lines.push(`      ${key.padEnd(18)}${param.description}${param.default === undefined ? '' : ` (default ${param.default})`}`);
    }
  }
  lines.push(
    '',
    `--holder NAME (payment.declined only): ${Object.keys(TEST_CARDHOLDER_NAMES).join(', ')} (default DECLINED).`,
    'Runs against the sandbox only, in its Test environment. Prints the records made and the webhooks sent',
    'about them; exit 1 when the sandbox did not do what the scenario says.',
    '',
    'Example: payment-service-sdk trigger payment.authorised --param amount=2599 --param customReference=order-42',
  );
  return lines.join('\n');
}

const FIXTURE_HELP = [
  'Fixtures: --fixture FILE.json runs declarative steps instead of a scenario, each an SDK method',
  '(sessions.create, pos.createPayment, modifications.refund, ...) or a sandbox action (sandbox.pay,',
  'sandbox.expire, sandbox.resolve, sandbox.advanceClock, sandbox.emitEvent, ...); params may refer to',
  `earlier results as \${step.field.path}. The whole file is checked before the first step runs (exit 2,`,
  'nothing made). JSON Schema: payment-service-sdk/fixture.schema.json.',
  'Guide: docs/sandbox-tenants-fixtures.md (in the package), "Fixtures".',
  '',
  'Example: payment-service-sdk trigger --fixture paid-then-refunded.json --override session.amount.value=2500',
].join('\n');

/** Reads the `--param key=value` list against the scenario's keys: every key known, used once, its value valid. */
function paramValues(scenario: Scenario, given: readonly string[]): Values {
  const values: Values = {};
  const currency = given.findLast((entry) => entry.startsWith('currency='))?.slice('currency='.length);
  for (const entry of given) {
    const split = entry.indexOf('=');
    if (split <= 0) throw new UsageError(`--param takes key=value, got ${entry}`);
    const key = entry.slice(0, split);
    const text = entry.slice(split + 1);
    const param = Object.hasOwn(scenario.params, key) ? scenario.params[key] : undefined;
    if (!param) {
      throw new UsageError(`${scenario.name} has no parameter ${key}; it takes ${Object.keys(scenario.params).join(', ')}`);
    }
    if (Object.hasOwn(values, key)) throw new UsageError(`--param ${key} is given twice`);
    values[key] = param.parse ? param.parse(text, key, currency) : text;
  }
  return values;
}

function holderOf(scenario: Scenario, holder: string | undefined): string | undefined {
  if (scenario.name !== 'payment.declined') {
    if (holder !== undefined) throw new UsageError(`--holder is for payment.declined, not ${scenario.name}`);
    return undefined;
  }
  const name = (holder ?? 'DECLINED').toUpperCase();
  if (!Object.hasOwn(TEST_CARDHOLDER_NAMES, name)) {
    throw new UsageError(`--holder must be one of ${Object.keys(TEST_CARDHOLDER_NAMES).join(', ')}, got ${holder}`);
  }
  return name;
}

/** Table and CSV show the webhooks in one cell and leave the full record to JSON. */
function rows(format: Format, records: TriggeredRecord[]): unknown[] {
  if (format === 'json' || format === 'ndjson') return records;
  return records.map(({ record: _record, webhooks, ...rest }) => ({
    ...rest,
    webhooks: webhooks
      .map((hook) => `${hook.eventCode} ${hook.delivered ? 'delivered' : `not delivered (${hook.lastStatus ?? 'no answer'})`}`)
      .join('; '),
  }));
}

/** The sandbox at the client's base URL, in its Test environment: what both a scenario and a fixture run against. */
async function sandboxOf(context: CommandContext, command: Command): Promise<{ client: PaymentClient; sandbox: SandboxLink }> {
  if (context.environment(command) !== 'test') throw new UsageError('trigger runs in the Test environment of the sandbox: drop --env live');
  const client = context.client(command);
  const sandbox = await findSandbox(context.settings(command));
  if (!sandbox)
    throw new UsageError('trigger works against the sandbox only, and the base URL is not one (start one: payment-service-sdk sandbox)');
  return { client, sandbox };
}

const COLUMNS = ['type', 'id', 'status', 'reference', 'amount.value', 'amount.currency', 'webhooks'];

/** Checks the whole fixture (exit 2, nothing made), runs its steps, and prints the records they made with their webhooks. */
async function triggerFixture(context: CommandContext, command: Command, file: string, overrides: readonly string[]): Promise<void> {
  const steps = loadFixture(file, overrides);
  const format = context.format(command);
  const { client, sandbox } = await sandboxOf(context, command);
  const { made: touched, failure } = await runFixture(steps, { client, sandbox, wait: (text) => spinner(context.terminal, text) });
  const records: (TriggeredRecord & { step: string })[] = [];
  for (const record of touched) {
    const timeline = await settled(sandbox, record.path);
    const reference = record.type === 'session' ? sessionReference(timeline) : record.id;
    records.push({ step: record.step, ...made(record.type, record.id, reference, timeline) });
  }
  // What was made is printed even when a later step failed: the person needs to know it exists.
  if (failure === undefined || records.length > 0) writeRecords(context.terminal, format, rows(format, records), ['step', ...COLUMNS]);
  if (failure) throw failure;
}

/** `--fixture -` needs standard input to itself, and piped: a terminal would wait for a file typed in. */
function stdinFree(context: CommandContext, command: Command): void {
  if (context.options(command).apiKey === STDIN)
    throw new UsageError('--fixture - and --api-key - both read standard input: give the key another way (--api-key-file)');
  if (context.terminal.stdin.isTTY)
    throw new UsageError('--fixture - reads the fixture from standard input, which is a terminal: pipe it in');
}

function collect(value: string, all: string[] = []): string[] {
  return [...all, value];
}

export function registerTrigger(program: Command, context: CommandContext): void {
  program
    .command('trigger')
    .description('make the sandbox produce a scenario, or run the steps of a fixture file: the records and their webhooks (sandbox only)')
    .addArgument(new Argument('[scenario]', 'what to produce').choices(TRIGGER_SCENARIOS))
    .option('--param <key=value>', 'set a parameter of the scenario (repeatable); see below', collect)
    .option('--holder <name>', 'cardholder name of payment.declined, which picks the decline')
    .option('--fixture <file>', 'run the steps of a fixture file (JSON; - reads standard input) instead of a scenario; see below')
    .option('--override <step.field=value>', 'set a field of a fixture step (repeatable): session.amount.value=2500', collect)
    .addHelpText('after', `${scenarioHelp()}\n${FIXTURE_HELP}`)
    .action(
      async (
        name: string | undefined,
        flags: { param?: string[]; holder?: string; fixture?: string; override?: string[] },
        command: Command,
      ) => {
        if (flags.fixture !== undefined) {
          const mixed = name ?? (flags.param ? '--param' : flags.holder !== undefined ? '--holder' : undefined);
          if (mixed !== undefined) throw new UsageError(`--fixture runs a file instead of a scenario: drop ${mixed}`);
          if (flags.fixture === STDIN) stdinFree(context, command);
          await triggerFixture(context, command, flags.fixture, flags.override ?? []);
          return;
        }
        if (flags.override) throw new UsageError('--override sets a field of a --fixture step: give --fixture FILE');
        const scenario = SCENARIOS.find((candidate) => candidate.name === name);
        if (!scenario) throw new UsageError('give a scenario, or --fixture FILE');
        const values = paramValues(scenario, flags.param ?? []);
        const holder = holderOf(scenario, flags.holder);
        const issues = scenario.check(values);
        if (issues.length > 0) throw new UsageError(issues.map((issue) => `${issue.path} ${issue.message}`).join('; '));
        const format = context.format(command);
        const { client, sandbox } = await sandboxOf(context, command);
        const run: Run = { client, sandbox, values, holder, wait: (text) => spinner(context.terminal, text), made: [], unexpected: [] };
        let failure: unknown;
        try {
          await scenario.run(run);
        } catch (error) {
          failure = error;
        }
        // What was made is printed even when a later step failed: the person needs to know it exists.
        if (failure === undefined || run.made.length > 0) writeRecords(context.terminal, format, rows(format, run.made), COLUMNS);
        if (failure !== undefined) throw failure;
        if (run.unexpected.length > 0)
          throw new ScenarioError(`${scenario.name} did not happen as described: ${run.unexpected.join('; ')}`);
      },
    );
}

/** The sandbox did not do what the scenario says (exit 1); the records it made were printed. */
class ScenarioError extends Error {
  override name = 'ScenarioError';
}
