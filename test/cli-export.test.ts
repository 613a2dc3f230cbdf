/**
 * `payment-service-sdk export sessions|pos|modifications`: the built bin (dist/cli.cjs) spawned
 * against a sandbox on 127.0.0.1. Every record once in CSV and NDJSON, on stdout and in --out;
 * the filters; Ctrl-C (SIGINT) leaves whole lines and a cursor whose --resume appends exactly the
 * rest; a failure mid-way does the same with exit 1; and, in tmux, the progress bar, which a pipe
 * never gets. A small proxy in front of the sandbox slows pages down or fails them.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../src/index.js';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import { posTestAmount } from '../src/testing/index.js';
import { buildOnce, CLI, cliEnv, killAll, ROOT, run, sandboxVariables } from './sandbox/cli-process.js';

/** Sessions in the sandbox: enough that a walk with --take 10 through the slow proxy lasts seconds. */
const SESSIONS = 3_000;
const SESSION_COLUMNS = [
  'sessionId',
  'status',
  'amount.value',
  'amount.currency',
  'description',
  'customReference',
  'isPreAuth',
  'createdAt',
  'completedAt',
  'paymentReference',
  'paymentStatus',
];
const POS_COLUMNS = [
  'posPaymentId',
  'paymentReference',
  'poiId',
  'amount.value',
  'amount.currency',
  'status',
  'isPreAuth',
  'pspReference',
  'errorMessage',
  'description',
  'customReference',
  'createdAt',
];
const MODIFICATION_COLUMNS = [
  'operationReference',
  'operationType',
  'paymentReference',
  'sessionId',
  'status',
  'requestedAt',
  'createdAt',
  'resolvedAt',
  'amount.value',
  'amount.currency',
  'reason',
];

type Item = Record<string, unknown>;

let sandbox: Sandbox;
let client: PaymentClient;
let proxy: Proxy;
let dir: string;
const tmuxSessions: string[] = [];

interface Proxy {
  baseUrl: string;
  /** Each request waits this long before it is forwarded. */
  delayMs: number;
  /** Listing requests answered after this many; later ones get a 503 failure envelope. */
  failAfter: number;
  listings: number;
  close(): Promise<void>;
}

/** A proxy on 127.0.0.1 in front of the sandbox: it slows every request down, and can fail listings from the n-th on. */
async function startProxy(target: string): Promise<Proxy> {
  const state = { delayMs: 0, failAfter: Number.POSITIVE_INFINITY, listings: 0 };
  const server: Server = createServer((request, response) => {
    void (async () => {
      await new Promise((done) => setTimeout(done, state.delayMs));
      if (request.url?.includes('/payment/sessions') && ++state.listings > state.failAfter) {
        response.writeHead(503, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ success: false, error: { message: 'down for a test', code: 19503, statusCode: 503, traceId: 't' } }));
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of ['x-api-key', 'accept']) if (typeof request.headers[name] === 'string') headers[name] = request.headers[name];
      const answer = await fetch(`${target}${request.url}`, { headers });
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      response.end(await answer.text());
    })().catch(() => response.destroy());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((done) => server.close(() => done())),
  });
}

async function post(path: string, body: Item): Promise<Item> {
  const response = await sandbox.handle(
    new Request(`${sandbox.baseUrl}/external/v1/test${path}`, {
      method: 'POST',
      headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json' },
      body: JSON.stringify({ webcode: sandbox.webcode, ...body }),
    }),
    { remoteAddress: '127.0.0.1' },
  );
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${path} answered ${response.status}: ${text}`);
  return JSON.parse(text).data;
}

const session = (extra: Item = {}) =>
  post('/payment/session', {
    amount: { value: 2599, currency: 'EUR' },
    urlOk: 'https://shop.example/ok',
    urlKo: 'https://shop.example/ko',
    ...extra,
  });

beforeAll(async () => {
  buildOnce();
  dir = mkdtempSync(join(tmpdir(), 'cli-export-'));
  // Modifications resolve an hour after their acknowledgement, on the sandbox clock: it is moved on once to have both states.
  sandbox = createSandbox({ posDelayMs: 0, modificationResolveMs: 3_600_000, posTimeoutResolveMs: 3_600_000 });
  await sandbox.listen();
  client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl: sandbox.baseUrl, maxRetries: 0 });
  // Fields that CSV must quote: a comma, a quote, a line break, spaces at the ends.
  const awkward = ['Order "42", gift', 'two\r\nlines', ' padded ', 'plain'];
  const created: string[] = [];
  for (let index = 0; index < SESSIONS; index++) {
    const extra = index < 40 ? { description: awkward[index % awkward.length], customReference: `ref-${index}` } : {};
    created.push((await session(index % 7 === 0 ? { ...extra, isPreAuth: true } : extra)).sessionId as string);
  }
  // 30 paid (every 7th a pre-authorisation), 10 expired.
  for (const id of created.slice(0, 30)) await sandbox.paySession('test', id);
  for (const id of created.slice(30, 40)) sandbox.expireSession('test', id);
  const paid = await client.sessions.list({ status: 'completed' }).toArray();
  // Refunds resolved an hour later, then more refunds and captures left pending.
  const sales = paid.filter((item) => !item.isPreAuth);
  const preAuthorised = paid.filter((item) => item.isPreAuth);
  for (const item of sales.slice(0, 8))
    await client.modifications.refund({ paymentReference: item.paymentReference ?? '', amount: { value: 100, currency: 'EUR' } });
  await sandbox.advanceClock(3_600_001);
  for (const item of sales.slice(8, 12))
    await client.modifications.refund({ paymentReference: item.paymentReference ?? '', reason: 'damaged, "returned"' });
  for (const item of preAuthorised) await client.modifications.capture({ paymentReference: item.paymentReference ?? '' });
  // POS payments: success, failed and timeout.
  for (const outcome of ['success', 'failed', 'timeout', 'success', 'failed', 'success'] as const)
    await client.pos.createPayment(
      { poiId: 'V400m-TEST-000001', amount: { value: posTestAmount(outcome), currency: 'EUR' }, customReference: `pos-${outcome}` },
      { recover: false },
    );
  proxy = await startProxy(sandbox.baseUrl);
}, 120_000);

afterAll(async () => {
  killAll();
  for (const name of tmuxSessions) quiet('tmux', ['kill-session', '-t', name]);
  await proxy?.close();
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function quiet(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

/** The child's environment: the sandbox's Test settings (or the proxy's address), no profile file. */
function envFor(baseUrl = sandbox.baseUrl): NodeJS.ProcessEnv {
  return cliEnv(join(dir, 'no-config.json'), { ...sandboxVariables(sandbox), PAYMENT_SERVICE_BASE_URL: baseUrl });
}

async function cli(args: string[], baseUrl?: string) {
  const started = run(args, { env: envFor(baseUrl) });
  const { code, signal } = await started.exit;
  return { code, signal, stdout: started.stdout(), stderr: started.stderr() };
}

/** RFC 4180: fields quoted when they hold a comma, a quote or a line break; lines end in CRLF. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let index = 0;
  while (index < text.length) {
    const char = text[index];
    if (char === '"' && field === '') {
      const end = /^"((?:[^"]|"")*)"/.exec(text.slice(index));
      if (!end) throw new Error(`unterminated quote at ${index}`);
      field = (end[1] ?? '').replaceAll('""', '"');
      index += end[0].length;
      if (!/^(,|\r\n)/.test(text.slice(index))) throw new Error(`text after a quoted field at ${index}`);
      continue;
    }
    if (char === ',') {
      row.push(field);
      field = '';
      index++;
    } else if (text.startsWith('\r\n', index)) {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      index += 2;
    } else {
      field += char;
      index++;
    }
  }
  if (field !== '' || row.length > 0) throw new Error('the text ends inside a line');
  return rows;
}

const cell = (item: Item, column: string): string => {
  const [outer = '', inner] = column.split('.');
  const value = inner === undefined ? item[outer] : (item[outer] as Item | undefined)?.[inner];
  return value === null || value === undefined ? '' : String(value);
};

/** The records as the CLI must write them in CSV, header first. */
const csvOf = (items: Item[], columns: string[]) => [columns, ...items.map((item) => columns.map((column) => cell(item, column)))];

const ndjson = (text: string): Item[] => {
  expect(text.endsWith('\n') || text === '').toBe(true);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
};

const allSessions = async () => (await client.sessions.list({ take: 100 }).toArray()) as unknown as Item[];
const idsOf = (rows: string[][]) => rows.slice(1).map((row) => row[0]);
const SUMMARY = /^Exported ([\d,]+) (sessions|POS payments|modifications) in \d+\.\d s \([\d,]+ rows\/s\) to .+\.\n$/;

describe('export to stdout and to a file', () => {
  it('writes every session once as CSV on stdout, header once, fields quoted as RFC 4180; stderr has only the summary', async () => {
    const expected = await allSessions();
    expect(expected).toHaveLength(SESSIONS);
    const result = await cli(['export', 'sessions', '--format', 'csv']);
    expect(result.code, result.stderr).toBe(0);
    const rows = parseCsv(result.stdout);
    expect(rows).toEqual(csvOf(expected, SESSION_COLUMNS));
    expect(rows.filter((row) => row[0] === 'sessionId')).toHaveLength(1);
    expect(new Set(idsOf(rows)).size).toBe(SESSIONS);
    expect(rows.some((row) => row[4] === 'two\r\nlines')).toBe(true);
    // Not a terminal: no progress bar, one summary line.
    expect(result.stderr).toMatch(SUMMARY);
    expect(result.stderr).toContain(`Exported ${SESSIONS.toLocaleString('en-US')} sessions`);
    expect(result.stderr).not.toContain('\r');
    expect(result.stderr).not.toContain('\u001b[');
  });

  it('writes NDJSON on stdout by default, one record a line as the listing gives it; --take sets the page size', async () => {
    const expected = await allSessions();
    const result = await cli(['export', 'sessions', '--take', '37']);
    expect(result.code, result.stderr).toBe(0);
    expect(ndjson(result.stdout)).toEqual(expected);
  });

  it('writes --out FILE: CSV by the .csv extension, NDJSON otherwise or with --format; stdout stays empty', async () => {
    const expected = await allSessions();
    const csvFile = join(dir, 'sessions.csv');
    const csv = await cli(['export', 'sessions', '--out', csvFile]);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toBe('');
    expect(csv.stderr).toMatch(SUMMARY);
    expect(csv.stderr).toContain(`to ${csvFile}.`);
    expect(parseCsv(readFileSync(csvFile, 'utf8'))).toEqual(csvOf(expected, SESSION_COLUMNS));

    const jsonFile = join(dir, 'sessions.ndjson');
    expect((await cli(['export', 'sessions', '--out', jsonFile])).code).toBe(0);
    expect(ndjson(readFileSync(jsonFile, 'utf8'))).toEqual(expected);

    // An existing file is replaced, not appended to, without --resume.
    const forced = join(dir, 'forced.csv');
    writeFileSync(forced, 'old content\n');
    expect((await cli(['--format', 'ndjson', 'export', 'sessions', '--out', forced])).code).toBe(0);
    expect(ndjson(readFileSync(forced, 'utf8'))).toEqual(expected);
  });

  it('refuses other formats, a bad --take and a bad filter: one line, exit 2, nothing written', async () => {
    for (const args of [
      ['export', 'sessions', '--format', 'table'],
      ['--format', 'json', 'export', 'pos'],
      ['export', 'sessions', '--take', '0'],
      ['export', 'modifications', '--take', '101'],
      ['export', 'sessions', '--status', 'paid'],
      ['export', 'pos', '--order', 'sideways'],
      ['export', 'bogus'],
    ]) {
      const result = await cli(args);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n'), args.join(' ')).toHaveLength(1);
    }
    expect(existsSync(join(dir, 'never.csv'))).toBe(false);
    expect((await cli(['export', 'sessions', '--take', '0', '--out', join(dir, 'never.csv')])).code).toBe(2);
    expect(existsSync(join(dir, 'never.csv'))).toBe(false);
  });
});

describe('filters', () => {
  it('sessions --status', async () => {
    for (const status of ['completed', 'expired', 'pending'] as const) {
      const expected = (await client.sessions.list({ status, take: 100 }).toArray()) as unknown as Item[];
      expect(expected.length).toBeGreaterThan(0);
      const result = await cli(['export', 'sessions', '--status', status, '--format', 'csv']);
      expect(result.code, result.stderr).toBe(0);
      const rows = parseCsv(result.stdout);
      expect(rows).toEqual(csvOf(expected, SESSION_COLUMNS));
      expect(new Set(rows.slice(1).map((row) => row[1]))).toEqual(new Set([status]));
    }
    // Nothing matches: the header alone.
    const none = await cli(['export', 'sessions', '--status', 'cancelled', '--format', 'csv']);
    expect(none.stdout).toBe(`${SESSION_COLUMNS.join(',')}\r\n`);
    expect(none.stderr).toContain('Exported 0 sessions');
  });

  it('pos --status, --order, --created-at-start and --created-at-end', async () => {
    const all = (await client.pos.list({ take: 100 }).toArray()) as unknown as Item[];
    expect(all).toHaveLength(6);
    const everything = await cli(['export', 'pos', '--format', 'csv', '--take', '4']);
    expect(parseCsv(everything.stdout)).toEqual(csvOf(all, POS_COLUMNS));
    const failed = await cli(['export', 'pos', '--status', 'failed', '--order', 'desc']);
    expect(failed.code, failed.stderr).toBe(0);
    expect(ndjson(failed.stdout)).toEqual(all.filter((item) => item.status === 'failed').reverse());
    expect(failed.stderr).toContain('Exported 2 POS payments');
    const window = ['--created-at-start', '2000-01-01 00:00:00', '--created-at-end', '2999-01-01 00:00:00'];
    expect(ndjson((await cli(['export', 'pos', ...window])).stdout)).toEqual(all);
    expect((await cli(['export', 'pos', '--created-at-start', '2999-01-01 00:00:00'])).stdout).toBe('');
  });

  it('modifications --type and --status', async () => {
    const all = (await client.modifications.list({ take: 100 }).toArray()) as unknown as Item[];
    const refunds = all.filter((item) => item.operationType === 'refund');
    expect(refunds).toHaveLength(12);
    expect(all.filter((item) => item.operationType === 'capture').length).toBeGreaterThan(0);
    const csv = await cli(['export', 'modifications', '--format', 'csv']);
    expect(parseCsv(csv.stdout)).toEqual(csvOf(all, MODIFICATION_COLUMNS));
    const pendingRefunds = await cli(['export', 'modifications', '--type', 'refund', '--status', 'pending']);
    expect(ndjson(pendingRefunds.stdout)).toEqual(refunds.filter((item) => item.status === 'pending'));
    expect(ndjson(pendingRefunds.stdout)).toHaveLength(4);
    const success = await cli(['export', 'modifications', '--status', 'success', '--take', '3']);
    expect(ndjson(success.stdout)).toEqual(all.filter((item) => item.status === 'success'));
    expect(ndjson(success.stdout)).toHaveLength(8);
  });
});

/** Resolves once `file` has at least `bytes` bytes. */
async function fileGrows(file: string, bytes: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(existsSync(file) && readFileSync(file).length >= bytes)) {
    if (Date.now() > deadline) throw new Error(`${file} did not reach ${bytes} bytes`);
    await new Promise((done) => setTimeout(done, 5));
  }
}

/** The arguments of the `Resume with:` command printed on stderr (single-quoted words unquoted). */
function resumeArgs(stderr: string): string[] {
  const command = /Resume with: payment-service-sdk (.+)$/m.exec(stderr)?.[1];
  if (command === undefined) throw new Error(`no resume command in: ${stderr}`);
  return [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((match) => match[2] ?? (match[1] ?? '').replaceAll(`'\\''`, "'"));
}

describe('interrupted and resumed', () => {
  it('Ctrl-C (SIGINT) mid-export: whole lines only, the cursor printed, exit 130; --resume appends exactly the rest', async () => {
    proxy.delayMs = 3;
    try {
      const expected = await allSessions();
      const file = join(dir, 'interrupted.csv');
      const started = run(['export', 'sessions', '--take', '10', '--out', file], { env: envFor(proxy.baseUrl) });
      await fileGrows(file, 2_000);
      started.child.kill('SIGINT');
      const exit = await started.exit;
      expect(exit, started.stderr()).toEqual({ code: 130, signal: null });
      const stderr = started.stderr();
      expect(stderr).toMatch(
        /^Interrupted after ([\d,]+) sessions in .*\. Resume with: payment-service-sdk .*export sessions .*--resume \S+\n$/,
      );
      const written = Number(/Interrupted after ([\d,]+)/.exec(stderr)?.[1]?.replaceAll(',', ''));
      const text = readFileSync(file, 'utf8');
      expect(text.endsWith('\r\n')).toBe(true);
      const rows = parseCsv(text);
      expect(rows.length - 1).toBe(written);
      expect(written).toBeGreaterThan(0);
      expect(written).toBeLessThan(SESSIONS);
      expect(written % 10).toBe(0);
      expect(rows).toEqual(csvOf(expected, SESSION_COLUMNS).slice(0, written + 1));

      // The printed command as it is: the same filters, format and file, and the cursor.
      const args = resumeArgs(stderr);
      expect(args).toEqual(expect.arrayContaining(['--out', file, '--take', '10', '--format', 'csv', '--resume']));
      const resumed = await cli(args, proxy.baseUrl);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain(`Exported ${(SESSIONS - written).toLocaleString('en-US')} sessions`);
      const all = parseCsv(readFileSync(file, 'utf8'));
      expect(all).toEqual(csvOf(expected, SESSION_COLUMNS));
      expect(new Set(idsOf(all)).size).toBe(SESSIONS);
    } finally {
      proxy.delayMs = 0;
    }
  }, 30_000);

  it('a service failure mid-way: the error and the cursor on stderr, exit 1, the file whole; --resume completes it (NDJSON on stdout too)', async () => {
    const expected = await allSessions();
    const file = join(dir, 'failed.ndjson');
    proxy.listings = 0;
    proxy.failAfter = 7;
    let failed: Awaited<ReturnType<typeof cli>>;
    try {
      failed = await cli(['export', 'sessions', '--take', '50', '--out', file], proxy.baseUrl);
    } finally {
      proxy.failAfter = Number.POSITIVE_INFINITY;
    }
    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.stderr).toMatch(
      /^payment-service-sdk: .*down for a test.*Stopped after 350 sessions in .*\. Resume with: .*--resume \S+\n$/,
    );
    expect(ndjson(readFileSync(file, 'utf8'))).toEqual(expected.slice(0, 350));
    const args = resumeArgs(failed.stderr);
    const resumed = await cli(args, proxy.baseUrl);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(ndjson(readFileSync(file, 'utf8'))).toEqual(expected);

    // The same cursor to stdout: the rest, and in CSV no second header.
    const cursor = args[args.indexOf('--resume') + 1] ?? '';
    const rest = await cli(['export', 'sessions', '--format', 'csv', '--resume', cursor]);
    expect(parseCsv(rest.stdout)).toEqual(csvOf(expected, SESSION_COLUMNS).slice(351));
  }, 30_000);

  it('refuses to resume into a file that ends in the middle of a line', async () => {
    const file = join(dir, 'torn.csv');
    writeFileSync(file, 'sessionId,status\r\nSANDBOX-EXTT-1,pen');
    const result = await cli(['export', 'sessions', '--out', file, '--resume', 'a10']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ends in the middle of a line');
    expect(readFileSync(file, 'utf8')).toBe('sessionId,status\r\nSANDBOX-EXTT-1,pen');
  });
});

const hasTmux = quiet('tmux', ['-V']).startsWith('tmux');

describe.skipIf(!hasTmux && !process.env.CI)('on a terminal (tmux)', () => {
  it('draws a progress bar on stderr with count / total and rate; Ctrl-C stops with the resume command and exit 130', async () => {
    proxy.delayMs = 3;
    const name = `cli-export-${process.pid}`;
    tmuxSessions.push(name);
    const file = join(dir, 'tty.csv');
    const env = envFor(proxy.baseUrl);
    const exports = ['PAYMENT_SERVICE_API_KEY', 'PAYMENT_SERVICE_WEBCODE', 'PAYMENT_SERVICE_BASE_URL', 'PAYMENT_SERVICE_CONFIG']
      .map((key) => `${key}='${env[key]}'`)
      .join(' ');
    const command = `env ${exports} '${process.execPath}' '${CLI}' export sessions --take 10 --out '${file}'; echo "[exit $?]"; sleep 30`;
    try {
      execFileSync('tmux', ['new-session', '-d', '-s', name, '-x', '120', '-y', '20', '-c', ROOT, command]);
      const screen = () => quiet('tmux', ['capture-pane', '-p', '-J', '-t', name]);
      const until = async (pattern: RegExp) => {
        for (let index = 0; index < 200; index++) {
          const text = screen();
          if (pattern.test(text)) return text;
          await new Promise((done) => setTimeout(done, 25));
        }
        throw new Error(`tmux screen never matched ${pattern}:\n${screen()}`);
      };
      const bar = await until(/sessions [\d,]+ \/ 3,000 \[[#-]+\]\s+\d+%\s+[\d,]+ rows\/s/);
      expect(bar.split('\n')[0]).toMatch(/^sessions [\d,]+ \/ 3,000 \[#*-+\]\s+\d+%\s+[\d,]+ rows\/s(\s+ETA \d+ s)?\s*$/);
      // Redrawn in place: a moment later the count has moved on the same line.
      const first = /sessions ([\d,]+) \//.exec(bar)?.[1];
      const later = await until(new RegExp(`sessions (?!${first} )[\\d,]+ \\/ 3,000`));
      expect(later.split('\n').filter((line) => line.includes('rows/s'))).toHaveLength(1);
      execFileSync('tmux', ['send-keys', '-t', name, 'C-c']);
      const done = await until(/\[exit \d+\]/);
      expect(done).toContain('[exit 130]');
      expect(done).toMatch(/^Interrupted after [\d,]+ sessions in/m);
      expect(done.replaceAll('\n', '')).toContain('Resume with: payment-service-sdk export sessions --format csv --take 10 --out');
      // The bar was cleared: no line of it is left.
      expect(done).not.toMatch(/\[[#-]{10,}\]/);
      const rows = parseCsv(readFileSync(file, 'utf8'));
      expect(rows.length).toBeGreaterThan(1);
    } finally {
      proxy.delayMs = 0;
    }
  }, 30_000);
});
