/**
 * The integrator's CLI, as a script and a person use it: the built bin (dist/cli.cjs) spawned
 * against a sandbox on 127.0.0.1. Help and exit codes, every resource command with parseable
 * output in each format, settings from flags, variables and a profile file, the Live-write guard,
 * and, in tmux, what only a terminal shows: the table, colour, the confirmation prompt, the spinner,
 * and `listen` printing events as they come.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import { payTestSession } from '../src/testing/index.js';
import { VERSION } from '../src/version.js';
import { buildOnce, CLI, cliEnv, controlsIn, killAll, ROOT, run, sandboxVariables } from './sandbox/cli-process.js';
import { hasTmux, quietly, inTmux as startInTmux } from './support/tmux.js';

let sandbox: Sandbox;
const dirs: string[] = [];
const tmuxSessions: string[] = [];

beforeAll(async () => {
  buildOnce();
  sandbox = createSandbox({ posDelayMs: 0, modificationResolveMs: 0 });
  await sandbox.listen();
}, 60_000);
afterAll(async () => {
  killAll();
  for (const name of tmuxSessions) quietly('tmux', ['kill-session', '-t', name]);
  await sandbox.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cli-'));
  dirs.push(dir);
  return dir;
}

/** The environment of a child: the sandbox's Test settings, no profile file, no colour settings of ours. */
function envFor(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return cliEnv(join(tempDir(), 'config.json'), { ...sandboxVariables(sandbox), ...extra });
}

async function cli(args: string[], extra: Record<string, string | undefined> = {}, input?: string) {
  const started = run(args, { env: envFor(extra), ...(input === undefined ? {} : { input }) });
  const { code } = await started.exit;
  return { code, stdout: started.stdout(), stderr: started.stderr() };
}

async function json(args: string[], extra: Record<string, string | undefined> = {}) {
  const result = await cli(args, extra);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

const SESSION = ['--amount', '2599', '--url-ok', 'https://shop.example/ok', '--url-ko', 'https://shop.example/ko'];

describe('help, version and exit codes', () => {
  it('prints the version and help, exit 0; -h works on every command', async () => {
    expect(await cli(['--version'])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    const root = await cli(['--help']);
    expect(root.code).toBe(0);
    for (const command of [
      'sandbox',
      'sessions',
      'pos',
      'refund',
      'capture',
      'cancel',
      'extend',
      'modifications',
      'terminals',
      'decode-redirect',
      'config',
      'export',
      'listen',
      'trigger',
      'logs',
      'completion',
    ])
      expect(root.stdout).toContain(`  ${command}`);
    for (const path of [
      ['sessions', 'create'],
      ['sessions', 'list'],
      ['pos', 'pay'],
      ['refund'],
      ['terminals', 'list'],
      ['config', 'set'],
      ['sandbox'],
      ['export', 'sessions'],
      ['listen'],
      ['trigger'],
    ]) {
      const help = await cli([...path, '-h']);
      expect(help.code, path.join(' ')).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: payment-service-sdk ${path.join(' ')}`));
    }
    expect((await cli(['sessions', 'create', '--help'])).stdout).toContain('--idempotency-key <key>');
  });

  it('help, help <command> and <group> help <sub> exit 0 with the help on stdout; a missing subcommand is still exit 2', async () => {
    for (const [args, usage] of [
      [['help'], 'payment-service-sdk'],
      [['help', 'sessions'], 'payment-service-sdk sessions'],
      [['sessions', 'help', 'list'], 'payment-service-sdk sessions list'],
      [['pos', 'help', 'pay'], 'payment-service-sdk pos pay'],
    ] as const) {
      const result = await cli([...args]);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout, args.join(' ')).toMatch(new RegExp(`^Usage: ${usage} `));
    }
    const root = (await cli(['help'])).stdout;
    expect(root).toContain('Exit codes:');
    expect(root).toMatch(/^ {2}3 +pos pay: the payment ended failed/m);
    expect(root).toMatch(/^ {2}4 +pos pay: the outcome is not known yet/m);
    expect((await cli(['pos', 'pay', '--help'])).stdout).toMatch(
      /3 when it ended failed \(declined\), 4 when its outcome is not known yet/,
    );
    const missing = await cli(['sessions']);
    expect(missing.code).toBe(2);
  });

  it('stops quietly when the reader of stdout is gone (`| head`): exit 141, no stack trace', async () => {
    for (const args of [['--help'], ['trigger', '--help'], ['terminals', 'list', '--format', 'ndjson']]) {
      const started = run(args, { env: envFor() });
      started.child.stdout?.destroy();
      const { code } = await started.exit;
      expect(code, args.join(' ')).toBe(141);
      expect(started.stderr()).toBe('');
    }
  });

  it('answers a usage mistake with one line on stderr pointing to --help, exit 2, nothing on stdout', async () => {
    for (const args of [
      ['bogus'],
      ['sessions', 'create'],
      ['sessions', 'list', '--take', 'many'],
      ['--format', 'xml', 'terminals', 'list'],
      ['--env', 'prod', 'terminals', 'list'],
    ]) {
      const result = await cli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n'), args.join(' ')).toHaveLength(1);
      expect(result.stderr).toMatch(/^payment-service-sdk: .*\(see --help\)\n$/);
    }
  });

  it('refuses what the SDK refuses, with its messages, before sending (exit 2); a refusal is exit 1, no answer exit 5', async () => {
    const before = sandbox.records.counts().sessions;
    const invalid = await cli(['sessions', 'create', '--amount', '0', '--url-ok', 'nope', '--url-ko', 'https://shop.example/ko']);
    expect(invalid.code).toBe(2);
    // In the CLI's words: the flags, not the SDK's class and field paths.
    expect(invalid.stderr).toBe(
      'payment-service-sdk: --amount must be greater than 0; --url-ok must be an absolute http(s) URL (see --help)\n',
    );
    expect(sandbox.records.counts().sessions).toBe(before);
    for (const take of ['500', '0']) {
      const refused = await cli(['sessions', 'list', '--take', take]);
      expect(refused).toMatchObject({ code: 2, stdout: '' });
      expect(refused.stderr).toBe('payment-service-sdk: --take must be an integer from 1 to 100 (see --help)\n');
    }
    const missing = await cli(['sessions', 'get', 'SANDBOX-EXTT-1']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^payment-service-sdk: NotFoundError: Session not found\n$/);
    const unreachable = await cli(['terminals', 'list'], { PAYMENT_SERVICE_BASE_URL: 'http://127.0.0.1:9' });
    expect(unreachable.code).toBe(5);
    expect(unreachable.stderr).toMatch(/ConnectionError/);
    expect(unreachable.stderr).not.toContain(sandbox.keys.test);
  });

  it('under --format json (or ndjson) a failure is one JSON line on stderr: name, message, status, code, traceId, exitCode', async () => {
    const line = (stderr: string) => {
      expect(stderr.endsWith('\n') && stderr.trimEnd().split('\n').length === 1, stderr).toBe(true);
      return JSON.parse(stderr) as Record<string, unknown>;
    };
    const reference = `${sandbox.webcode}-PXTT-424242`;
    const refused = await cli(['--format', 'json', 'refund', '--payment-reference', reference]);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(line(refused.stderr)).toEqual({
      name: 'NotFoundError',
      message: `paymentReference does not name a payment of this webcode in Test: ${reference} not found`,
      status: 404,
      code: 19404,
      traceId: expect.stringMatching(/\S/),
      exitCode: 1,
    });
    const denied = await cli(['terminals', 'list', '--format=ndjson'], { PAYMENT_SERVICE_API_KEY: 'sk_test_unknown' });
    expect(denied.code).toBe(1);
    expect(line(denied.stderr)).toMatchObject({ name: 'PermissionDeniedError', status: 403, code: 11008, exitCode: 1 });
    expect(denied.stderr).not.toContain('sk_test_unknown');
    const unreachable = await cli(['--format', 'json', 'terminals', 'list'], { PAYMENT_SERVICE_BASE_URL: 'http://127.0.0.1:9' });
    expect(unreachable.code).toBe(5);
    expect(line(unreachable.stderr)).toMatchObject({ name: 'ConnectionError', status: null, code: null, traceId: null, exitCode: 5 });
    expect(unreachable.stderr).not.toContain(sandbox.keys.test);
    const invalid = await cli([
      '--format',
      'json',
      'sessions',
      'create',
      '--amount',
      '0',
      '--url-ok',
      'nope',
      '--url-ko',
      'https://shop.example/ko',
    ]);
    expect(invalid.code).toBe(2);
    expect(line(invalid.stderr)).toEqual({
      name: 'RequestValidationError',
      message: '--amount must be greater than 0; --url-ok must be an absolute http(s) URL (see --help)',
      status: null,
      code: null,
      traceId: null,
      exitCode: 2,
      issues: [
        { path: 'amount.value', flag: '--amount', message: 'must be greater than 0' },
        { path: 'urlOk', flag: '--url-ok', message: 'must be an absolute http(s) URL' },
      ],
    });
    for (const args of [
      ['--format', 'json', 'bogus'],
      ['--format', 'json', 'sessions', 'create'],
      ['sessions', 'list', '--take', 'many', '--format', 'json'],
    ]) {
      const usage = await cli(args);
      expect(usage.code, args.join(' ')).toBe(2);
      expect(usage.stdout).toBe('');
      expect(line(usage.stderr)).toMatchObject({
        name: 'UsageError',
        message: expect.stringMatching(/\(see --help\)$/),
        status: null,
        exitCode: 2,
      });
    }
    // Without an explicit --format json, a failure stays a line of prose (also where data defaults to JSON, off a terminal).
    expect((await cli(['refund', '--payment-reference', reference])).stderr).toMatch(/^payment-service-sdk: NotFoundError: /);
  });
});

describe('amounts are cents written as plain digits', () => {
  const REFUSED = ['15.00', '15.5', '1e3', '0x10', '+5', '-5', ' 15', '15 '];

  /** Runs each command line and checks it was refused in one line, exit 2, with nothing reaching the sandbox; resolves with the lines. */
  async function refusedAll(cases: { args: string[]; line: RegExp }[]): Promise<string[]> {
    const before = sandbox.records.counts();
    const results = await Promise.all(cases.map(({ args }) => cli(args)));
    for (const [index, result] of results.entries()) {
      const { args, line } = cases[index] ?? { args: [], line: /$^/ };
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout, args.join(' ')).toBe('');
      expect(result.stderr, args.join(' ')).toMatch(line);
      expect(result.stderr.trimEnd().split('\n'), args.join(' ')).toHaveLength(1);
    }
    expect(sandbox.records.counts()).toEqual(before);
    return results.map((result) => result.stderr);
  }

  it('pos pay --amount refuses 15.00, 15.5, 1e3, 0x10, +5, -5, " 15" and "15 " before anything is sent (exit 2)', async () => {
    const [decimal] = await refusedAll(
      REFUSED.map((amount) => ({
        args: ['pos', 'pay', '--poi-id', 'V400m-TEST-000001', '--amount', amount],
        line: /^payment-service-sdk: --amount is in cents.*pass --amount \d+ \(see --help\)\n$/,
      })),
    );
    expect(decimal).toBe('payment-service-sdk: --amount is in cents: for 15.00 EUR pass --amount 1500 (see --help)\n');
    const pounds = await cli(['pos', 'pay', '--poi-id', 'V400m-TEST-000001', '--amount', '7.5', '--currency', 'GBP']);
    expect(pounds.stderr).toBe('payment-service-sdk: --amount is in cents: for 7.50 GBP pass --amount 750 (see --help)\n');
  });

  it('trigger --param amount= refuses the same, naming the parameter', async () => {
    const [decimal] = await refusedAll(
      ['15.00', '1e3', '-5', ' 15'].map((amount) => ({
        args: ['trigger', 'pos.success', '--param', `amount=${amount}`],
        line: /^payment-service-sdk: --param amount is in cents.*pass --param amount=\d+ \(see --help\)\n$/,
      })),
    );
    expect(decimal).toBe('payment-service-sdk: --param amount is in cents: for 15.00 EUR pass --param amount=1500 (see --help)\n');
  });

  it('sessions create, refund, capture and refundAmount go through the same parser', async () => {
    const cases = ['15.00', '0x10'].flatMap((amount) => [
      { args: ['sessions', 'create', ...SESSION.slice(2), '--amount', amount], line: /--amount is in cents/ },
      { args: ['refund', '--payment-reference', 'SANDBOX-PXTT-1', '--amount', amount], line: /--amount is in cents/ },
      { args: ['capture', '--payment-reference', 'SANDBOX-POSXT-1', '--amount', amount], line: /--amount is in cents/ },
      {
        args: ['trigger', 'refund.success', '--param', `refundAmount=${amount}`],
        line: /--param refundAmount is in cents.*pass --param refundAmount=\d+ \(see --help\)/,
      },
    ]);
    await refusedAll(cases);
    // Plain digits still work.
    expect(await json(['pos', 'pay', '--poi-id', 'V400m-TEST-000001', '--amount', '1500'])).toMatchObject({
      amount: { value: 1500, currency: 'EUR' },
    });
  });
});

describe('resource commands against the sandbox', () => {
  it('sessions create, get, list and modifications; JSON by default off a terminal; --idempotency-key replays', async () => {
    const created = await json(['sessions', 'create', ...SESSION, '--custom-reference', 'cli-1', '--idempotency-key', 'cli-key-1']);
    expect(created).toMatchObject({ sessionId: expect.stringMatching(/-EXTT-/), status: 'pending', paymentUrl: expect.any(String) });
    expect(await json(['sessions', 'create', ...SESSION, '--custom-reference', 'cli-1', '--idempotency-key', 'cli-key-1'])).toEqual(
      created,
    );
    await payTestSession(created.paymentUrl);
    const fetched = await json(['sessions', 'get', created.sessionId]);
    expect(fetched).toMatchObject({ status: 'completed', paymentReference: expect.stringMatching(/-PXTT-/) });
    await json(['refund', '--payment-reference', fetched.paymentReference, '--amount', '100', '--reason', 'damaged']);
    const modifications = await json(['sessions', 'modifications', created.sessionId]);
    expect(modifications).toEqual([expect.objectContaining({ operationType: 'refund', amount: { value: 100, currency: 'EUR' } })]);

    const ndjson = await cli(['sessions', 'list', '--status', 'completed', '--format', 'ndjson', '--take', '1']);
    const lines = ndjson.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((session) => session.sessionId)).toContain(created.sessionId);
    expect(lines.every((session) => session.status === 'completed')).toBe(true);

    const csv = (await cli(['sessions', 'list', '--format', 'csv', '--limit', '1'])).stdout.trimEnd().split('\r\n');
    expect(csv[0]?.split(',').slice(0, 4)).toEqual(['sessionId', 'status', 'amount.value', 'amount.currency']);
    expect(csv).toHaveLength(2);
    expect(csv[1]?.startsWith(`${created.sessionId},completed,2599,EUR,`)).toBe(true);
  });

  it('pos pay, list and modifications; capture, cancel and extend of pre-authorisations; modifications list; terminals', async () => {
    const paid = await json(['pos', 'pay', '--poi-id', 'V400m-TEST-000001', '--amount', '1500', '--pre-auth']);
    expect(paid).toMatchObject({ status: 'success', isPreAuth: true });
    const captured = await json(['capture', '--payment-reference', paid.posPaymentId, '--amount', '1000']);
    expect(captured).toMatchObject({ captureReference: expect.stringMatching(/-CTXT-/), amount: { value: 1000, currency: 'EUR' } });
    const other = await json(['pos', 'pay', '--poi-id', 'S1F2-TEST-000002', '--amount', '700', '--pre-auth']);
    expect(await json(['extend', '--payment-reference', other.posPaymentId])).toEqual(expect.any(Object));
    expect(await json(['cancel', '--payment-reference', other.posPaymentId])).toMatchObject({
      cancelReference: expect.stringMatching(/-CAXT-/),
    });
    expect(
      (await json(['pos', 'modifications', paid.posPaymentId])).map((record: { operationType: string }) => record.operationType),
    ).toEqual(['capture']);
    const listed = await json(['pos', 'list', '--status', 'success', '--all']);
    expect(listed.map((payment: { posPaymentId: string }) => payment.posPaymentId)).toEqual(
      expect.arrayContaining([paid.posPaymentId, other.posPaymentId]),
    );
    const cancels = await json(['modifications', 'list', '--type', 'cancel']);
    expect(cancels.map((record: { paymentReference: string }) => record.paymentReference)).toEqual([other.posPaymentId]);
    expect((await json(['terminals', 'list', '--sync'])).map((terminal: { poiId: string }) => terminal.poiId)).toEqual([
      'V400m-TEST-000001',
      'S1F2-TEST-000002',
    ]);
    // A declined payment (ending 77) exits 3, an outcome still unknown (ending 99, no recovery) exits 4; the record is printed.
    const declined = await cli(['pos', 'pay', '--poi-id', 'V400m-TEST-000001', '--amount', '1577']);
    expect(declined.code).toBe(3);
    const failed = JSON.parse(declined.stdout);
    expect(failed).toMatchObject({ status: 'failed', amount: { value: 1577 } });
    expect(declined.stderr).toBe(`payment-service-sdk: the payment ${failed.posPaymentId} failed: ${failed.errorMessage}\n`);
    const unknown = await cli(['pos', 'pay', '--poi-id', 'V400m-TEST-000001', '--amount', '1599', '--no-recover']);
    expect(unknown.code).toBe(4);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ status: 'timeout', amount: { value: 1599 } });
    expect(unknown.stderr).toMatch(/the outcome of the payment \S+ is not known yet \(timeout\)/);
    const busy = await cli(['pos', 'pay', '--poi-id', 'V400m-TEST-000001', '--amount', '1555']);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(/TerminalBusyError/);
  });

  it('the table never shortens identifiers, references or URLs; free text gets … ; control characters are escaped', async () => {
    const reference = `order-${'r'.repeat(94)}`;
    const description = `${'long words '.repeat(10)}\u001b]0;retitled\u0007\u009b2J`;
    const table = await cli([
      'sessions',
      'create',
      ...SESSION,
      '--custom-reference',
      reference,
      '--description',
      description,
      '--format',
      'table',
    ]);
    expect(table.code, table.stderr).toBe(0);
    const field = (name: string) => new RegExp(`^${name.replace('.', '\\.')} +(.*)$`, 'm').exec(table.stdout)?.[1];
    const paymentUrl = field('paymentUrl') ?? '';
    expect(paymentUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pay-external-test\/[0-9a-f]{32}$/);
    expect((await fetch(paymentUrl)).status).toBe(200);
    expect(field('customReference')).toBe(reference);
    expect(field('description')).toMatch(/^long words long words .*…$/);
    expect([...(field('description') ?? '')]).toHaveLength(60);
    expect(controlsIn(table.stdout)).toEqual([]);
    // JSON keeps every character (escaped), so the data is the same.
    const sessionId = field('sessionId') ?? '';
    const fetched = await json(['sessions', 'get', sessionId]);
    expect(fetched).toMatchObject({ description, customReference: reference });
    const listed = await cli(['sessions', 'list', '--all', '--format', 'table']);
    expect(listed.stdout).toContain(reference);
    expect(controlsIn(listed.stdout)).toEqual([]);
  });

  it('decode-redirect reads a whole urlOk URL or the token, with the client secret', async () => {
    const created = await json(['sessions', 'create', ...SESSION]);
    const outcome = await payTestSession(created.paymentUrl);
    const byUrl = await json(['decode-redirect', outcome.redirectUrl ?? '', '--secret', sandbox.clientSecrets.test]);
    expect(byUrl).toMatchObject({ sessionId: created.sessionId, paymentReference: expect.any(String) });
    expect(await json(['decode-redirect', outcome.data ?? ''], { PAYMENT_SERVICE_CLIENT_SECRET: sandbox.clientSecrets.test })).toEqual(
      byUrl,
    );
    const wrong = await cli(['decode-redirect', outcome.data ?? '', '--secret', 'not-the-secret']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/RedirectDataError/);
  });
});

describe("messages in the CLI's own words", () => {
  it('a missing setting names the flag, the variable and config set; no secret is printed', async () => {
    for (const [variable, flag, key, noun] of [
      ['PAYMENT_SERVICE_API_KEY', '--api-key', 'apiKey', 'API key'],
      ['PAYMENT_SERVICE_WEBCODE', '--webcode', 'webcode', 'webcode'],
      ['PAYMENT_SERVICE_BASE_URL', '--base-url', 'baseUrl', 'base URL'],
    ] as const) {
      const result = await cli(['terminals', 'list'], { [variable]: undefined });
      expect(result.code, variable).toBe(2);
      expect(result.stderr).toBe(
        `payment-service-sdk: no ${noun}: pass ${flag}, set ${variable}, or run payment-service-sdk config set ${key} …\n`,
      );
      expect(result.stderr).not.toContain(sandbox.keys.test);
    }
    const secret = await cli(['decode-redirect', 'abc']);
    expect(secret.stderr).toMatch(/no client secret: pass --secret, set PAYMENT_SERVICE_CLIENT_SECRET, or run .* config set clientSecret/);
  });

  it('the offline terminal is said to be offline or unreachable', async () => {
    const result = await cli(['pos', 'pay', '--poi-id', 'P400Plus-TEST-000003', '--amount', '1500']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^payment-service-sdk: terminal P400Plus-TEST-000003 is offline or unreachable \(502, 13004/);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('a list cut by --limit says so on stderr, with the total; a whole list says nothing', async () => {
    await json(['sessions', 'create', ...SESSION]);
    await json(['sessions', 'create', ...SESSION]);
    const total = (await json(['sessions', 'list', '--all'])).length;
    const cut = await cli(['sessions', 'list', '--limit', '1', '--take', '1', '--format', 'ndjson']);
    expect(cut.code).toBe(0);
    expect(cut.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(cut.stderr).toBe(`showing 1 of ${total} (--limit); --all shows every one\n`);
    const whole = await cli(['sessions', 'list', '--limit', String(total), '--format', 'ndjson']);
    expect(whole.stderr).toBe('');
  });
});

describe('settings: flags, variables, profile file', () => {
  it('config set writes a 0600 file and never prints a secret; config show says where each setting comes from', async () => {
    const path = join(tempDir(), 'nested', 'config.json');
    const env = {
      PAYMENT_SERVICE_CONFIG: path,
      PAYMENT_SERVICE_API_KEY: undefined,
      PAYMENT_SERVICE_WEBCODE: undefined,
      PAYMENT_SERVICE_BASE_URL: undefined,
    };
    const set = await cli(['config', 'set', 'apiKey', sandbox.keys.test], env);
    expect(set.code).toBe(0);
    expect(set.stdout).toBe('');
    expect(set.stderr).not.toContain(sandbox.keys.test);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await cli(['config', 'set', 'webcode', sandbox.webcode], env);
    await cli(['config', 'set', 'baseUrl', sandbox.baseUrl], env);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      profiles: { default: { apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl: sandbox.baseUrl } },
    });
    // The profile is enough to call the service.
    expect((await json(['terminals', 'list'], env)).length).toBe(3);
    const shown = await cli(['config', 'show', '--format', 'json'], { ...env, PAYMENT_SERVICE_WEBCODE: 'FROMENV' });
    expect(shown.stdout).not.toContain(sandbox.keys.test);
    expect(JSON.parse(shown.stdout)).toEqual(
      expect.arrayContaining([
        { setting: 'apiKey', value: `****${sandbox.keys.test.slice(-4)}`, from: 'profile default' },
        { setting: 'webcode', value: 'FROMENV', from: 'PAYMENT_SERVICE_WEBCODE' },
      ]),
    );
    const flagged = await cli(['--webcode', 'FROMFLAG', 'config', 'show', '--format', 'json'], {
      ...env,
      PAYMENT_SERVICE_WEBCODE: 'FROMENV',
    });
    expect(JSON.parse(flagged.stdout)).toContainEqual({ setting: 'webcode', value: 'FROMFLAG', from: 'flag' });
    expect((await cli(['--profile', 'nope', 'terminals', 'list'], env)).code).toBe(2);
    expect((await cli(['config', 'set', 'colour', 'blue'], env)).code).toBe(2);
  });

  it('a Live write needs --yes off a terminal, and creates nothing without it', async () => {
    const live = { PAYMENT_SERVICE_API_KEY: sandbox.keys.live };
    const before = sandbox.records.sessions({ environment: 'live' }).length;
    const refused = await cli(['--env', 'live', 'sessions', 'create', ...SESSION], live);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/in Live needs --yes/);
    expect(sandbox.records.sessions({ environment: 'live' })).toHaveLength(before);
    const done = await json(['--env', 'live', '--yes', 'sessions', 'create', ...SESSION], live);
    expect(done.sessionId).toMatch(/-EXT-/);
    // Reads need no confirmation.
    expect((await json(['--env', 'live', 'sessions', 'get', done.sessionId], live)).sessionId).toBe(done.sessionId);
  });

  it('prints a bash completion script that completes commands and options', async () => {
    const script = (await cli(['completion', 'bash'])).stdout;
    const file = join(tempDir(), 'completion.bash');
    writeFileSync(file, script);
    const complete = (words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source ${file}; COMP_WORDS=(${words.join(' ')}); COMP_CWORD=${words.length - 1}; _payment_service_sdk; echo "\${COMPREPLY[*]}"`,
        ],
        {
          encoding: 'utf8',
        },
      ).trim();
    expect(complete(['payment-service-sdk', 'ses'])).toBe('sessions');
    expect(complete(['payment-service-sdk', 'sessions', 'cr'])).toBe('create');
    expect(complete(['payment-service-sdk', 'sessions', 'create', '--url-'])).toBe('--url-ok --url-ko');
    expect(complete(['payment-service-sdk', 'trigger', 'pos.'])).toBe('pos.success pos.timeout pos.terminal-busy');
    expect(complete(['payment-service-sdk', 'listen', '--f'])).toBe('--forward-to');
    // A global option's value is not a command; an option's value gets no command offered.
    expect(complete(['payment-service-sdk', '--env', 'test', 'sessions', 'l'])).toBe('list');
    expect(complete(['payment-service-sdk', '--format', 'json', 'pos', 'p'])).toBe('pay');
    expect(complete(['payment-service-sdk', '--format=json', 'pos', 'p'])).toBe('pay');
    expect(complete(['payment-service-sdk', '--profile', 'work', '--env', 'live', 'refund', '--pay'])).toBe('--payment-reference');
    expect(complete(['payment-service-sdk', 'sessions', 'create', '--amount', '2599', '--cu'])).toBe('--currency --custom-reference');
    expect(complete(['payment-service-sdk', '--env', "''"])).toBe('');
    // The commands and flags of issue 31.
    expect(complete(['payment-service-sdk', 'sessions', 'pa'])).toBe('pay');
    expect(complete(['payment-service-sdk', 'logs', ''])).toBe('tail list show --help');
    expect(complete(['payment-service-sdk', 'logs', 'tail', '--i'])).toBe('--idempotency-key');
    expect(complete(['payment-service-sdk', 'sandbox', 'wa'])).toBe('wait');
    expect(complete(['payment-service-sdk', 'sandbox', 'wait', '--'])).toBe('--ready-file --timeout --help');
    expect(complete(['payment-service-sdk', 'modifications', 'list', '--created-'])).toBe('--created-from --created-to');
    expect(complete(['payment-service-sdk', 'export', 'pos', '--su'])).toBe('--summary');
    expect((await cli(['completion', 'zsh'])).stdout).toContain('bashcompinit');
    expect((await cli(['completion', 'fish'])).code).toBe(2);
  });
});

const hasZsh = quietly('zsh', ['--version']).startsWith('zsh');

describe.skipIf(!hasTmux && !process.env.CI)('on a terminal (tmux)', { timeout: 40_000 }, () => {
  /** Runs the bin in a fresh tmux pane and returns a reader of the screen. */
  function inTmux(args: string[], extra: Record<string, string | undefined> = {}) {
    const name = `cli-test-${process.pid}-${tmuxSessions.length}`;
    tmuxSessions.push(name);
    return startInTmux(name, args, envFor(extra));
  }

  it('prints a table by default, in colour unless NO_COLOR is set', async () => {
    const coloured = inTmux(['terminals', 'list']);
    const text = await coloured.until(/\[exit 0\]/, true);
    expect(text).toContain('\u001b[1mpoiId');
    expect(text).toContain('V400m-TEST-000001');
    const plain = inTmux(['terminals', 'list'], { NO_COLOR: '1' });
    const plainText = await plain.until(/\[exit 0\]/, true);
    expect(plainText).not.toContain('\u001b[1m');
    expect(plainText).toMatch(/poiId\s+name\s+model/);
  });

  it('asks before a Live write: no sends nothing (exit 1), yes creates the session', async () => {
    const live = { PAYMENT_SERVICE_API_KEY: sandbox.keys.live };
    const before = sandbox.records.sessions({ environment: 'live' }).length;
    const declined = inTmux(['--env', 'live', 'sessions', 'create', ...SESSION], live);
    await declined.until(/in LIVE \(real money\)\. Continue\? \[y\/N\]/);
    declined.type('n');
    await declined.until(/\[exit 1\]/);
    expect(sandbox.records.sessions({ environment: 'live' })).toHaveLength(before);
    const accepted = inTmux(['--env', 'live', 'sessions', 'create', ...SESSION], live);
    await accepted.until(/Continue\? \[y\/N\]/);
    accepted.type('y');
    const text = await accepted.until(/\[exit 0\]/);
    expect(text).toMatch(/sessionId\s+SANDBOX-EXT-\d+/);
    expect(sandbox.records.sessions({ environment: 'live' })).toHaveLength(before + 1);
  });

  it('sessions create prints the whole paymentUrl in the table, and it answers 200', async () => {
    const pane = inTmux(['sessions', 'create', ...SESSION]);
    const text = await pane.until(/\[exit 0\]/);
    const paymentUrl = /^paymentUrl +(\S+)/m.exec(text)?.[1] ?? '';
    expect(paymentUrl).toMatch(/\/pay-external-test\/[0-9a-f]{32}$/);
    expect((await fetch(paymentUrl)).status).toBe(200);
  });

  it('completes a command after a global option with a value, in zsh', { skip: !hasZsh && !process.env.CI }, async () => {
    const bin = tempDir();
    writeFileSync(join(bin, 'payment-service-sdk'), `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`, { mode: 0o755 });
    const name = `cli-zsh-${process.pid}`;
    tmuxSessions.push(name);
    const home = tempDir();
    execFileSync('tmux', [
      'new-session',
      '-d',
      '-s',
      name,
      '-x',
      '200',
      '-y',
      '20',
      `env -i PATH=${bin}:/usr/bin:/bin HOME=${home} TERM=xterm zsh -f`,
    ]);
    const screen = () => quietly('tmux', ['capture-pane', '-p', '-t', name]);
    const until = async (pattern: RegExp) => {
      for (let index = 0; index < 200; index++) {
        if (pattern.test(screen())) return;
        await new Promise((done) => setTimeout(done, 50));
      }
      throw new Error(`zsh screen never matched ${pattern}:\n${screen()}`);
    };
    execFileSync('tmux', ['send-keys', '-t', name, 'eval "$(payment-service-sdk completion zsh)"; echo loaded', 'Enter']);
    await until(/^loaded$/m);
    for (const [typed, completed] of [
      ['payment-service-sdk --env test sessions l', 'payment-service-sdk --env test sessions list'],
      ['payment-service-sdk --format json pos p', 'payment-service-sdk --format json pos pay'],
    ] as const) {
      execFileSync('tmux', ['send-keys', '-t', name, typed, 'Tab']);
      // tmux drops the space zsh adds after a completed word.
      await until(new RegExp(`${completed}$`, 'm'));
      execFileSync('tmux', ['send-keys', '-t', name, 'C-u']);
    }
  });

  it('export to a terminal prints control characters of the data escaped', async () => {
    await json(['sessions', 'create', ...SESSION, '--description', 'MARK\u001b[2J\u0007\u009b1mEND']);
    const pane = inTmux(['export', 'sessions', '--format', 'csv']);
    const text = await pane.until(/\[exit 0\]/);
    expect(text).toContain('MARK\\x1b[2J\\x07\\u009b1mEND');
  });

  it('shows a spinner while the terminal waits, and clears it', async () => {
    const slow = createSandbox({ posDelayMs: 1_500 });
    await slow.listen();
    try {
      const pane = inTmux(['pos', 'pay', '--poi-id', 'V400m-TEST-000001', '--amount', '1500'], { PAYMENT_SERVICE_BASE_URL: slow.baseUrl });
      await pane.until(/Waiting for terminal V400m-TEST-000001\.\.\. \d s/);
      const done = await pane.until(/\[exit 0\]/);
      expect(done).not.toContain('Waiting for terminal');
      expect(done).toMatch(/status\s+success/);
    } finally {
      await slow.close();
    }
  });

  it('listen prints a line per event as it comes, confirmed in green; Ctrl-C takes it off the sandbox', async () => {
    const pane = inTmux(['listen']);
    await pane.until(/Press Ctrl\+C to stop\./);
    const url = /Listening for webhooks on (\S+)/.exec(pane.screen())?.[1] ?? '';
    expect(sandbox.webhookUrls).toContain(url);
    const triggered = await cli(['trigger', 'payment.authorised', '--param', 'amount=4321']);
    expect(triggered.code, triggered.stderr).toBe(0);
    const text = await pane.until(/AUTHORISATION .*confirmed/, true);
    expect(text).toMatch(/\d\d:\d\d:\d\d {2}AUTHORISATION {2}SANDBOX-PXTT-\d+\s+4321 EUR\s+AUTHORISED\s+\S*confirmed/);
    expect(text).toContain('\u001b[32mconfirmed');
    pane.press('C-c');
    await pane.until(/\[exit 0\]/);
    expect(pane.screen()).toContain(`Removed ${url} from the sandbox's webhook URLs.`);
    expect(sandbox.webhookUrls).not.toContain(url);
  });
});

it('keeps the SDK import free of the CLI: the bundle of the bin carries commander, the package entry does not', () => {
  expect(readFileSync(CLI, 'utf8')).toContain('commander');
  const entry = readFileSync(join(ROOT, 'dist/index.mjs'), 'utf8');
  expect(entry).not.toMatch(/commander/);
  expect(existsSync(join(ROOT, 'node_modules/commander'))).toBe(true);
});
