/**
 * `payment-service-sdk trigger --fixture`: the built bin against a sandbox on 127.0.0.1. The
 * shipped examples make what they say (checked in the sandbox's store and at a webhook receiver),
 * overrides change the steps, every kind of bad file or override is refused whole before the first
 * step (exit 2, no record, no webhook), and the shipped JSON Schema agrees with the CLI's check.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureJsonSchema } from '../src/cli/fixture/schema.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { buildOnce, cliEnv, killAll, ROOT, run, sandboxVariables } from './sandbox/cli-process.js';
import { type Receiver, useSandboxes } from './sandbox/support.js';
import { validates } from './support/json-schema.js';

const sandboxes = useSandboxes();
let sandbox: Sandbox;
let receiver: Receiver;
const dir = mkdtempSync(join(tmpdir(), 'cli-fixture-'));
const EXAMPLES = join(ROOT, 'examples/fixtures');

beforeAll(async () => {
  buildOnce();
  receiver = await sandboxes.receiver();
  // A POS timeout stays one until a step resolves it; refunds resolve when the clock moves on.
  ({ sandbox } = await sandboxes.start({
    posDelayMs: 0,
    posTimeoutResolveMs: 600_000,
    modificationResolveMs: 30_000,
    webhookUrls: [receiver.url],
  }));
}, 60_000);
afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

/** `${path}`, written without a template placeholder in the test's own source. */
const ref = (path: string) => `\${${path}}`;

let files = 0;
/** Writes `content` (a value as JSON, raw text, or raw bytes) to a file of its own and returns its path. */
function fixtureFile(content: unknown): string {
  const path = join(dir, `fixture-${++files}.json`);
  writeFileSync(path, typeof content === 'string' || content instanceof Uint8Array ? content : JSON.stringify(content));
  return path;
}

async function cli(args: string[]) {
  const started = run(args, { env: cliEnv(join(dir, 'none.json'), sandboxVariables(sandbox)) });
  const { code } = await started.exit;
  return { code, stdout: started.stdout(), stderr: started.stderr() };
}

interface Made {
  step: string;
  type: string;
  id: string;
  status: string;
  reference: string | null;
  amount: { value: number; currency: string } | null;
  webhooks: { eventCode: string; url: string; delivered: boolean; lastStatus: number | null }[];
  record: Record<string, unknown>;
}

async function fixture(path: string, ...args: string[]): Promise<Made[]> {
  const result = await cli(['trigger', '--fixture', path, ...args, '--format', 'json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Made[];
}

function delivered(reference: string, eventCode: string) {
  return receiver.received.filter(
    (item) => item.json?.event_code === eventCode && JSON.stringify(item.json.data).includes(`"${reference}"`),
  );
}

const SESSION = {
  name: 'session',
  action: 'sessions.create',
  params: { amount: { value: 1000, currency: 'EUR' }, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' },
};
const PAY = { name: 'pay', action: 'sandbox.pay', params: { sessionId: ref('session.sessionId') } };

/** A file of `SESSION` then `step`. */
const after = (step: unknown) => ({ steps: [SESSION, step] });
/** A file whose session step has `params` merged in. */
const session = (params: Record<string, unknown>) => ({ steps: [{ ...SESSION, params: { ...SESSION.params, ...params } }, PAY] });

describe('the shipped examples', () => {
  it('paid-then-refunded: a paid session, its refund resolved by the clock, both webhooks delivered', async () => {
    const made = await fixture(join(EXAMPLES, 'paid-then-refunded.json'));
    expect(made.map((record) => [record.step, record.type, record.status])).toEqual([
      ['session', 'session', 'completed'],
      ['refund', 'refund', 'success'],
    ]);
    const [paid, refund] = made;
    expect(sandbox.records.session(paid?.id ?? '')).toMatchObject({ status: 'completed', customReference: 'order-42' });
    expect(sandbox.records.modifications({ paymentReference: paid?.reference ?? '' })).toEqual([
      expect.objectContaining({
        operationReference: refund?.id,
        status: 'success',
        amount: { value: 1000, currency: 'EUR' },
        // A reference inside text is written as text.
        reason: 'damaged in transit (order-42)',
      }),
    ]);
    // A session's webhooks are those about its payment: its refund's included.
    expect(paid?.webhooks.map((hook) => [hook.eventCode, hook.delivered])).toEqual([
      ['AUTHORISATION', true],
      ['REFUND', true],
    ]);
    expect(refund?.webhooks).toEqual([expect.objectContaining({ eventCode: 'REFUND', delivered: true })]);
    expect(delivered(refund?.id ?? '', 'REFUND')[0]?.json.data).toMatchObject({ amount: 1000, status: 'success' });
  });

  it('declined: the session fails, no AUTHORISATION', async () => {
    const [made] = await fixture(join(EXAMPLES, 'declined.json'));
    expect(made).toMatchObject({ step: 'session', type: 'session', status: 'failed', amount: { value: 4500 }, webhooks: [] });
    expect(sandbox.records.session(made?.id ?? '')?.attempts.at(-1)).toMatchObject({ status: 'refused' });
    expect(delivered(made?.reference ?? '', 'AUTHORISATION')).toEqual([]);
  });

  it('pos-timeout-resolved: a timeout resolved as a success, its AUTHORISATION delivered', async () => {
    const [made] = await fixture(join(EXAMPLES, 'pos-timeout-resolved.json'));
    expect(made).toMatchObject({ step: 'charge', type: 'pos-payment', status: 'success', amount: { value: 1099 } });
    expect(sandbox.records.posPayment(made?.id ?? '')).toMatchObject({ status: 'success', customReference: 'till-7' });
    expect(delivered(made?.id ?? '', 'AUTHORISATION')).toHaveLength(1);
  });
});

describe('steps and references', () => {
  it('a whole reference keeps its type; pre-auth capture, the deliveries log, a resend and an emitted event', async () => {
    const path = fixtureFile({
      steps: [
        { ...SESSION, params: { ...SESSION.params, isPreAuth: true } },
        PAY,
        // `amount` is an object and `ms` a number: each reference is the value itself, not text.
        {
          name: 'capture',
          action: 'modifications.capture',
          params: { paymentReference: ref('pay.paymentReference'), amount: ref('session.amount') },
        },
        { name: 'clock', action: 'sandbox.advanceClock', params: { ms: 60_000 } },
        { name: 'again', action: 'sandbox.advanceClock', params: { ms: ref('clock.offsetMs') } },
        { name: 'hooks', action: 'sandbox.deliveries', params: { take: 1 } },
        { name: 'resend', action: 'sandbox.resendWebhook', params: { deliveryId: ref('hooks.items.0.id') } },
        { name: 'emit', action: 'sandbox.emitEvent', params: { eventCode: 'AUTHORISATION', reference: ref('pay.paymentReference') } },
      ],
    });
    const offset = sandbox.control.clock().offsetMs;
    const made = await fixture(path);
    expect(made.map((record) => [record.step, record.type, record.status])).toEqual([
      ['session', 'session', 'completed'],
      ['capture', 'capture', 'success'],
    ]);
    expect(made[1]?.amount).toEqual({ value: 1000, currency: 'EUR' });
    // 60 s, then the offset since the sandbox started plus those 60 s again.
    expect(sandbox.control.clock().offsetMs - offset).toBe(60_000 + offset + 60_000);
    expect(delivered(made[0]?.reference ?? '', 'AUTHORISATION').length).toBeGreaterThanOrEqual(2);
  });

  it("the Sandbox object's method names are the same actions", async () => {
    const path = fixtureFile({
      steps: [
        SESSION,
        { name: 'expire', action: 'sandbox.expireSession', params: { sessionId: ref('session.sessionId') } },
        { name: 'charge', action: 'pos.createPayment', params: { poiId: 'V400m-TEST-000001', amount: { value: 2099, currency: 'EUR' } } },
        { name: 'resolve', action: 'sandbox.resolvePosPayment', params: { posPaymentId: ref('charge.posPaymentId'), outcome: 'failed' } },
      ],
    });
    const made = await fixture(path);
    expect(made.map((record) => [record.step, record.type, record.status])).toEqual([
      ['session', 'session', 'expired'],
      ['charge', 'pos-payment', 'failed'],
    ]);
    expect(sandbox.records.posPayment(made[1]?.id ?? '')?.status).toBe('failed');
  });

  it('a step that fails at run time: the records made before it are printed, the step named, exit 1', async () => {
    const before = sandbox.records.counts();
    const path = fixtureFile({
      steps: [
        SESSION,
        { ...PAY, params: { ...PAY.params, holderName: 'DECLINED' } },
        { name: 'refund', action: 'modifications.refund', params: { paymentReference: ref('pay.paymentReference') } },
        { name: 'never', action: 'sandbox.expire', params: { sessionId: ref('session.sessionId') } },
      ],
    });
    const result = await cli(['trigger', '--fixture', path, '--format', 'json']);
    expect(result.code).toBe(1);
    const made = JSON.parse(result.stdout) as Made[];
    expect(made).toEqual([expect.objectContaining({ step: 'session', status: 'failed' })]);
    expect(result.stderr).toMatch(/step refund \(modifications\.refund\) failed: .*params\.paymentReference must be a string/);
    expect(sandbox.records.counts()).toMatchObject({ sessions: before.sessions + 1, modifications: before.modifications });
  });

  it('table and csv: one row per record, the step first', async () => {
    const csv = await cli(['trigger', '--fixture', join(EXAMPLES, 'declined.json'), '--format', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const [header, row] = csv.stdout.trim().split('\r\n');
    expect(header?.split(',').slice(0, 8)).toEqual([
      'step',
      'type',
      'id',
      'status',
      'reference',
      'amount.value',
      'amount.currency',
      'webhooks',
    ]);
    expect(row).toMatch(/^session,session,[^,]+,failed,[^,]+,4500,EUR,$/);
    const table = await cli(['trigger', '--fixture', join(EXAMPLES, 'declined.json'), '--format', 'table']);
    expect(table.stdout.split('\n')[0]).toMatch(/^step\s+type\s+id\s+status/);
  });
});

describe('help', () => {
  it('trigger --help shows --fixture and --override, and where the format is described', async () => {
    const help = await cli(['trigger', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: payment-service-sdk trigger \[options\] \[scenario\]/);
    expect(help.stdout).toMatch(/--fixture <file>\s+run the steps of a fixture file/);
    expect(help.stdout).toMatch(/--override <step\.field=value>\s+set a field of a fixture step/);
    expect(help.stdout).toContain('payment-service-sdk/fixture.schema.json');
  });
});

describe('--override', () => {
  it('sets amounts as cents, booleans and strings, fields absent from the file included', async () => {
    const [made] = await fixture(
      join(EXAMPLES, 'declined.json'),
      '--override',
      'session.amount.value=777',
      '--override',
      'session.amount.currency=GBP',
      '--override',
      'pay.holderName=CARD_EXPIRED',
      '--override',
      'session.customReference=ci-run-1',
      '--override',
      'session.isPreAuth=true',
    );
    expect(made).toMatchObject({ status: 'failed', amount: { value: 777, currency: 'GBP' } });
    const stored = sandbox.records.session(made?.id ?? '');
    expect(stored).toMatchObject({ customReference: 'ci-run-1', isPreAuth: true });
    expect(stored?.attempts.at(-1)?.reason).toMatch(/expired/i);
  });
});

/** A refused file or command line: its content (JSON, or raw text), the extra arguments, the message, and what the JSON Schema says of it. */
interface Refused {
  file: unknown;
  args?: string[];
  message: RegExp;
  /** `rejects`: the shipped JSON Schema refuses the file too; `beyond`: JSON Schema cannot say it (the CLI does); absent: not a file matter. */
  schema?: 'rejects' | 'beyond';
}

const REFUSED: Record<string, Refused> = {
  'not JSON': { file: '{ "steps": [', message: /the fixture \S+ is not JSON: it ends before its last value is complete/ },
  'not JSON, with the place': { file: '{ "steps": [],\n  }', message: /the fixture \S+ is not JSON \(at line 2, column 3\)/ },
  'params nested 10 000 levels deep': {
    file: `{"steps":[{"name":"deep","action":"sessions.create","params":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}]}`,
    message: /the fixture \S+: step deep: params nests objects and lists more than 32 levels deep/,
  },
  'a whole file nested 10 000 levels deep': {
    file: `{"steps":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
    message: /the fixture \S+ nests objects and lists more than 35 levels deep/,
  },
  'bytes that are not UTF-8': {
    file: Buffer.concat([Buffer.from('{"steps": [{"name": "caf'), Buffer.from([0xc3, 0x28]), Buffer.from('"}]}')]),
    message: /the fixture \S+ is not UTF-8 text: the bytes from offset 24 are no UTF-8 character/,
  },
  'a reference into a prototype': {
    file: after({ ...PAY, params: { sessionId: ref('session.amount.__proto__') } }),
    message:
      /step pay \(sandbox\.pay\): params\.sessionId refers to \$\{session\.amount\.__proto__\}, but amount has no field __proto__ \(it has value, currency\)/,
    schema: 'beyond',
  },
  'a reference to a constructor': {
    file: after({ ...PAY, params: { sessionId: ref('session.constructor') } }),
    message: /params\.sessionId refers to \$\{session\.constructor\}, but sessions\.create answers with no constructor/,
    schema: 'beyond',
  },
  "a reference to a field the result's schema does not have": {
    file: after({ ...PAY, params: { sessionId: ref('session.amount.cents') } }),
    message: /refers to \$\{session\.amount\.cents\}, but amount has no field cents \(it has value, currency\)/,
    schema: 'beyond',
  },
  'a reference past a string': {
    file: after({ ...PAY, params: { sessionId: ref('session.sessionId.length') } }),
    message: /refers to \$\{session\.sessionId\.length\}, but sessionId has no field length \(it is a string, with no fields\)/,
    schema: 'beyond',
  },
  'not an object': { file: [SESSION], message: /must be a JSON object/, schema: 'rejects' },
  'no steps': { file: { steps: [] }, message: /steps must be a list of at least one step/, schema: 'rejects' },
  'an unknown top-level field': {
    file: { ...session({}), colour: 'red' },
    message: /colour is not a known field \(a fixture has/,
    schema: 'rejects',
  },
  'an unknown step field': {
    file: after({ ...PAY, expect: 'completed' }),
    message: /step pay: expect is not a known field/,
    schema: 'rejects',
  },
  'an unknown params field': {
    file: session({ colour: 'red' }),
    message: /step session \(sessions\.create\): params\.colour is not a known field/,
    schema: 'rejects',
  },
  'an unknown nested field': {
    file: session({ amount: { value: 100, currency: 'EUR', cents: true } }),
    message: /step session \(sessions\.create\): params\.amount\.cents is not a known field/,
    schema: 'rejects',
  },
  'an unknown action': {
    file: after({ ...PAY, action: 'sandbox.payNow' }),
    message: /step pay: action "sandbox\.payNow" is not one of sessions\.create/,
    schema: 'rejects',
  },
  'a step without a name': {
    file: after({ action: 'sandbox.pay', params: PAY.params }),
    message: /steps\[1\]: name must be/,
    schema: 'rejects',
  },
  'a malformed reference': {
    file: after({ ...PAY, params: { sessionId: ref('session..id') } }),
    message: /step pay \(sandbox\.pay\): params\.sessionId \$\{session\.\.id\} is not a reference/,
    schema: 'beyond',
  },
  'an unclosed reference': {
    file: after({ ...PAY, params: { sessionId: ref('session.sessionId').slice(0, -1) } }),
    message: /params\.sessionId has a \$\{ without its closing \}/,
    schema: 'beyond',
  },
  'a reference to no step': {
    file: after({ ...PAY, params: { sessionId: ref('sesion.sessionId') } }),
    message: /step pay \(sandbox\.pay\): params\.sessionId refers to \$\{sesion\.sessionId\}, no step of the file/,
    schema: 'beyond',
  },
  'a forward reference': {
    file: { steps: [PAY, SESSION] },
    message: /step pay \(sandbox\.pay\): params\.sessionId refers to \$\{session\.sessionId\}, a later step/,
    schema: 'beyond',
  },
  'a reference to a field the action does not answer with': {
    file: after({ ...PAY, params: { sessionId: ref('session.id') } }),
    message: /params\.sessionId refers to \$\{session\.id\}, but sessions\.create answers with no id/,
    schema: 'beyond',
  },
  'a duplicate name': {
    file: { steps: [SESSION, { ...PAY, name: 'session' }] },
    message: /steps\[1\]: name session is used by an earlier step/,
    schema: 'beyond',
  },
  'an amount of 0': {
    file: session({ amount: { value: 0, currency: 'EUR' } }),
    message: /step session \(sessions\.create\): params\.amount\.value must be greater than 0/,
    schema: 'rejects',
  },
  'an amount with cents after a point': {
    file: session({ amount: { value: 25.99, currency: 'EUR' } }),
    message: /params\.amount\.value must be an integer number of cents/,
    schema: 'beyond',
  },
  'an amount as text': {
    file: session({ amount: { value: '2599', currency: 'EUR' } }),
    message: /params\.amount\.value must be a number of cents/,
    schema: 'rejects',
  },
  'a currency not accepted': {
    file: session({ amount: { value: 100, currency: 'JPY' } }),
    message: /params\.amount\.currency must be one of EUR, GBP, USD/,
    schema: 'rejects',
  },
  'a URL that is not http(s)': {
    file: session({ urlOk: 'ftp://shop.example/ok' }),
    message: /params\.urlOk must be an absolute http\(s\) URL/,
    schema: 'beyond',
  },
  'a required field missing': {
    file: after({ ...PAY, params: {} }),
    message: /step pay \(sandbox\.pay\): params\.sessionId is required/,
    schema: 'rejects',
  },
  'a holder name too short': {
    file: after({ ...PAY, params: { ...PAY.params, holderName: 'Al' } }),
    message: /params\.holderName must be a name of at least 3 characters/,
    schema: 'beyond',
  },
  'an unknown resolve outcome': {
    file: { steps: [{ name: 'resolve', action: 'sandbox.resolve', params: { posPaymentId: 'P-1', outcome: 'maybe' } }] },
    message: /params\.outcome must be success or failed/,
    schema: 'rejects',
  },
  'a clock advance with both ms and duration': {
    file: { steps: [{ name: 'clock', action: 'sandbox.advanceClock', params: { ms: 1000, duration: '1m' } }] },
    message: /step clock \(sandbox\.advanceClock\): give either ms or duration/,
    schema: 'beyond',
  },
  'a webhook URL that is not one': {
    file: { steps: [{ name: 'hook', action: 'sandbox.addWebhookUrl', params: { url: 'not a url' } }] },
    message: /params\.url must be an absolute http\(s\) URL/,
    schema: 'beyond',
  },
  'no such file': {
    file: undefined,
    args: ['--fixture', '/nonexistent/fixture.json'],
    message: /cannot read the fixture \/nonexistent\/fixture\.json: no such file/,
  },
  'an override without =': {
    file: session({}),
    args: ['--override', 'session.amount.value'],
    message: /--override takes step\.field=value/,
  },
  'an override without a field': { file: session({}), args: ['--override', 'session=1'], message: /--override takes step\.field=value/ },
  'an override of a missing step': {
    file: session({}),
    args: ['--override', 'refund.reason=x'],
    message: /--override refund\.reason: the fixture has no step refund \(it has session, pay\)/,
  },
  'an override of a missing field': {
    file: session({}),
    args: ['--override', 'pay.colour=red'],
    message: /--override pay\.colour: step pay \(sandbox\.pay\) has no field colour/,
  },
  'an override into a prototype': {
    file: { steps: [{ name: 'extend', action: 'modifications.extend', params: { paymentReference: 'P-1' } }] },
    args: ['--override', 'extend.__proto__=yes'],
    message: /--override extend\.__proto__: step extend \(modifications\.extend\) has no field __proto__/,
  },
  'an override of an object': {
    file: session({}),
    args: ['--override', 'session.amount=100'],
    message: /--override session\.amount: amount is an object/,
  },
  'an override amount in euros': {
    file: session({}),
    args: ['--override', 'session.amount.value=25.99'],
    message: /--override session\.amount\.value is in cents: for 25\.99 EUR pass --override session\.amount\.value=2599/,
  },
  'an override boolean that is not one': {
    file: session({}),
    args: ['--override', 'session.isPreAuth=yes'],
    message: /--override session\.isPreAuth must be true or false, got yes/,
  },
  'an override the SDK refuses': {
    file: session({}),
    args: ['--override', 'session.amount.currency=JPY'],
    message: /step session \(sessions\.create\): params\.amount\.currency must be one of EUR/,
  },
  'an override given twice': {
    file: session({}),
    args: ['--override', 'pay.holderName=DECLINED', '--override', 'pay.holderName=FRAUD'],
    message: /--override pay\.holderName is given twice/,
  },
  'a scenario with --fixture': {
    file: session({}),
    args: ['payment.authorised'],
    message: /--fixture runs a file instead of a scenario: drop payment\.authorised/,
  },
  '--override without --fixture': {
    file: undefined,
    args: ['--override', 'session.amount.value=1'],
    message: /--override sets a field of a --fixture step/,
  },
};

describe('a bad file or override: exit 2, one line, nothing made', () => {
  it.each(Object.entries(REFUSED))('%s', async (_name, { file, args = [], message }) => {
    const before = sandbox.records.counts();
    const hooks = receiver.received.length;
    const result = await cli(['trigger', ...(file === undefined ? [] : ['--fixture', fixtureFile(file)]), ...args]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(sandbox.records.counts()).toEqual(before);
    expect(receiver.received).toHaveLength(hooks);
  });

  it('every problem of a file is said at once', async () => {
    const result = await cli([
      'trigger',
      '--fixture',
      fixtureFile({
        steps: [
          { ...SESSION, params: { ...SESSION.params, urlOk: 'nope' } },
          { ...PAY, params: { sessionId: ref('nope.x') } },
        ],
      }),
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /params\.urlOk must be an absolute http\(s\) URL; step pay \(sandbox\.pay\): params\.sessionId refers to/,
    );
  });
});

describe('what a fixture file is read as', () => {
  it('a UTF-8 byte order mark is skipped: the file runs', async () => {
    const example = readFileSync(join(EXAMPLES, 'declined.json'), 'utf8');
    const [made] = await fixture(fixtureFile(`\uFEFF${example}`));
    expect(made).toMatchObject({ step: 'session', status: 'failed' });
  });

  it('a link to a file that is not JSON: refused without quoting any of that file', async () => {
    const secret = join(dir, 'secret.txt');
    writeFileSync(secret, 'root:x:0:0:TOPSECRET\n');
    const link = join(dir, 'linked.json');
    symlinkSync(secret, link);
    const result = await cli(['trigger', '--fixture', link]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/the fixture \S+linked\.json is not JSON/);
    expect(result.stderr).not.toMatch(/root|TOPSECRET/);
  });

  it('100 000 bad steps: the first 10 problems and a count of the rest, on one short line', async () => {
    const steps = Array.from({ length: 100_000 }, (_, index) => ({ name: `s${index}`, action: 'nope' }));
    const result = await cli(['trigger', '--fixture', fixtureFile({ steps })]);
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(result.stderr.length).toBeLessThan(10_000);
    expect(result.stderr.match(/is not one of/g)).toHaveLength(10);
    expect(result.stderr).toMatch(
      /step s0: action "nope" is not one of .*step s9: action "nope" .*; and 99990 more problems \(see --help\)$/m,
    );
  });
});

describe('the JSON Schema', () => {
  const shipped = JSON.parse(readFileSync(join(ROOT, 'dist/fixture.schema.json'), 'utf8'));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

  it('is built from the action table the CLI checks with, and exported as payment-service-sdk/fixture.schema.json', () => {
    expect(shipped).toEqual(fixtureJsonSchema());
    expect(shipped.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(manifest.exports['./fixture.schema.json']).toBe('./dist/fixture.schema.json');
    expect(manifest.files).toContain('dist');
  });

  it("the guide's fixture is the paid-then-refunded example, pointing at the installed package's schema", () => {
    const guide = readFileSync(join(ROOT, 'docs/sandbox-tenants-fixtures.md'), 'utf8');
    const block = /## Fixtures[\s\S]*?```json\n([\s\S]*?)```/.exec(guide)?.[1];
    const shown = JSON.parse(block ?? 'null');
    const example = JSON.parse(readFileSync(join(EXAMPLES, 'paid-then-refunded.json'), 'utf8'));
    expect(shown.$schema).toBe('./node_modules/payment-service-sdk/fixture.schema.json');
    expect(shown.steps).toEqual(example.steps);
  });

  it('accepts every example, and the examples point at it', () => {
    for (const name of readdirSync(EXAMPLES)) {
      const example = JSON.parse(readFileSync(join(EXAMPLES, name), 'utf8'));
      expect(example.$schema, name).toBe('../../dist/fixture.schema.json');
      expect(validates(shipped, example), name).toBe(true);
    }
  });

  it('refuses the bad files it can describe, and passes the ones only the CLI can judge (no false refusal)', () => {
    for (const [name, { file, schema }] of Object.entries(REFUSED)) {
      if (schema === undefined || typeof file === 'string') continue;
      expect(validates(shipped, file), name).toBe(schema === 'beyond');
    }
  });
});
