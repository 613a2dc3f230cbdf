/**
 * `payment-service-sdk logs tail`, `logs list` and `logs show <id>`: the sandbox's request log from the shell.
 * `tail` follows it live: it polls the control listing (`GET /_sandbox/{env}/requests`, newest
 * first) and walks its pages back to the last entry it printed, so that each entry is printed
 * once, in the order the sandbox logged them, however many clients write at once. `show` prints
 * one entry with both bodies. Against the real service (no request log) both say so and exit 1.
 */
import type { Command } from 'commander';
import { type SandboxLink, sandboxOnly } from './control.js';
import { paint, safeJson, terminalSafe, UsageError, useColor } from './io.js';
import type { CommandContext } from './program.js';

/** The entry of the request log, as the control API answers it (issue 31). */
export interface RequestLogEntry {
  id: string;
  at: string;
  environment: 'test' | 'live';
  tenant: string | null;
  method: string;
  route: string | null;
  operation: string | null;
  path: string;
  query: Record<string, string | string[]>;
  requestHeaders: Record<string, string>;
  requestBody: string | null;
  requestBodyTruncated: boolean;
  idempotencyKey: string | null;
  replayed: boolean;
  status: number;
  responseBody: string | null;
  responseBodyTruncated: boolean;
  traceId: string | null;
  durationMs: number;
  faultRule: string | null;
  references: Record<string, string[]>;
  issues: { path: string; message: string }[];
}

interface RequestLogPage {
  items: RequestLogEntry[];
  cursor: string | null;
  hasMore: boolean;
  total: number;
}

/** How often `tail` asks for new entries. */
const POLL_MS = 250;
/** Entries per page: the listing's largest. */
const TAKE = 100;

/** The filters `logs tail` and `logs list` share. */
interface FilterFlags {
  status?: string;
  operation?: string;
  idempotencyKey?: string;
  since?: string;
  until?: string;
}

/** How a tail may end by itself, for a script: after N entries, at a time, after a while. */
interface TailFlags extends FilterFlags {
  count?: string;
  timeout?: string;
}

/** An ISO 8601 date-time with its offset, as the control API's `since` and `until` take it. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** `--since` / `--until`: an ISO 8601 date-time (`2026-01-31T12:00:00Z`). */
function instantFlag(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value.toUpperCase()))) return value;
  throw new UsageError(`--${name} must be an ISO 8601 date-time (2026-01-31T12:00:00Z), got ${value}`);
}

/** The listing's query of the filter flags, checked. */
function filterOf(flags: FilterFlags): Record<string, string | undefined> {
  return {
    status: statusFilter(flags.status),
    operation: flags.operation,
    idempotencyKey: flags.idempotencyKey,
    since: instantFlag('since', flags.since),
    until: instantFlag('until', flags.until),
  };
}

/** `--count N`: a whole number, 1 or more. */
function countFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (/^[1-9]\d{0,8}$/.test(value)) return Number(value);
  throw new UsageError(`--count must be a whole number, 1 or more, got ${value}`);
}

/** `--timeout`: ms, or a duration with a unit (`500ms`, `30s`, `5m`, `1h`). */
function timeoutFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,9})(ms|s|m|h)?$/.exec(value);
  if (!match) throw new UsageError(`--timeout must be a duration (30s, 5m, 500ms, or ms), got ${value}`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(match[2] ?? 'ms') as 'ms' | 's' | 'm' | 'h'];
  return Number(match[1]) * unit;
}

/** The number in an entry's id (`{webcode}-REQ-{n}`): the order the sandbox logged entries in. */
function sequence(entry: RequestLogEntry): number {
  const match = /-REQ-(\d+)$/.exec(entry.id);
  return match ? Number(match[1]) : Number.NaN;
}

/** `--status`: a code (`202`) or a class (`4xx`). */
function statusFilter(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (/^([1-5]xx|[1-5]\d\d)$/i.test(value)) return value.toLowerCase();
  throw new UsageError(`--status must be a status code (202) or a class (4xx, 5xx), got ${value}`);
}

/**
 * The `--format` of the log commands: `json` (and `ndjson`) one entry per line, `table` the readable
 * lines; without one, readable lines on a terminal and JSON lines otherwise (a pipe, a file, CI).
 */
function logFormat(given: string | undefined, stdout: { isTTY?: boolean }): 'json' | 'text' {
  if (given === undefined) return stdout.isTTY ? 'text' : 'json';
  if (given === 'table') return 'text';
  if (given === 'json' || given === 'ndjson') return 'json';
  throw new UsageError(`logs prints readable lines or --format json (one entry per line), not ${given}`);
}

function query(values: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value !== undefined) search.set(key, value);
  return search.toString();
}

/** The colour of a status: green 2xx, yellow 4xx, red 5xx and 0 (a reset connection). */
function statusColor(status: number): number {
  if (status >= 200 && status < 300) return 32;
  if (status >= 400 && status < 500) return 33;
  return status >= 500 || status === 0 ? 31 : 0;
}

/** One readable line: time, status, method and path, operation, duration, id, key, fault, first issue. */
export function entryLine(entry: RequestLogEntry, color: boolean): string {
  const time = /T(\d{2}:\d{2}:\d{2}(\.\d{3})?)/.exec(entry.at)?.[1] ?? entry.at;
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(entry.query ?? {}))
    for (const one of Array.isArray(value) ? value : [value]) search.append(key, one);
  const path = `${entry.path}${search.size > 0 ? `?${search}` : ''}`;
  const parts = [
    time,
    // Escaped before the colour goes on: the colour's own escape must reach the terminal.
    paint(color, statusColor(entry.status), terminalSafe(String(entry.status).padStart(3))),
    `${entry.method.padEnd(6)} ${path}`,
    entry.operation ?? '-',
    `${Math.round(entry.durationMs)} ms`,
    entry.id,
  ];
  if (entry.idempotencyKey !== null) parts.push(`key=${entry.idempotencyKey}${entry.replayed ? ' (replayed)' : ''}`);
  if (entry.faultRule !== null) parts.push(`fault=${entry.faultRule}`);
  const issue = entry.issues?.[0];
  if (issue)
    parts.push(
      `${issue.path === '' ? '' : `${issue.path}: `}${issue.message}${entry.issues.length > 1 ? ` (+${entry.issues.length - 1})` : ''}`,
    );
  const [first, status, ...rest] = parts;
  return [terminalSafe(first ?? ''), status, ...rest.map((part) => terminalSafe(part))].join('  ');
}

/**
 * Follows the log: the entries logged after it started, each once, oldest first, until Ctrl-C or
 * SIGTERM, or, for a script, until `--count` entries, the time `--until` or `--timeout` (exit 0).
 */
async function tail(context: CommandContext, command: Command, flags: TailFlags): Promise<void> {
  const { terminal } = context;
  const format = logFormat(context.options(command).format, terminal.stdout);
  const filter = filterOf(flags);
  const count = countFlag(flags.count);
  const timeoutMs = timeoutFlag(flags.timeout);
  const untilMs = filter.until === undefined ? undefined : Date.parse(filter.until.toUpperCase());
  context.client(command); // the settings, checked before anything is sent
  const sandbox = await sandboxOnly(context.settings(command), 'logs tail');
  const page = (cursor?: string, take = TAKE) =>
    sandbox.request<RequestLogPage>('GET', `${sandbox.environment}/requests?${query({ ...filter, take: String(take), cursor })}`);
  // Only what comes next: the newest entry now is where the tail starts.
  let last = sequence((await page(undefined, 1)).items[0] ?? ({ id: '-REQ-0' } as RequestLogEntry));
  const color = useColor(terminal, terminal.stdout);
  const write = (entry: RequestLogEntry) =>
    terminal.stdout.write(format === 'json' ? `${safeJson(entry)}\n` : `${entryLine(entry, color)}\n`);
  let stopped = false;
  const stop = () => {
    stopped = true;
  };
  const startedAt = Date.now();
  const over = () =>
    stopped || (timeoutMs !== undefined && Date.now() - startedAt >= timeoutMs) || (untilMs !== undefined && Date.now() > untilMs);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // On stderr, once the starting point is known: from here on every entry is printed.
  terminal.stderr.write(
    `Following the request log of the sandbox at ${sandbox.baseUrl} (${sandbox.environment}). ${endsWhen(count, flags)}\n`,
  );
  let printed = 0;
  try {
    while (!over()) {
      const fresh = await since(page, last);
      for (const entry of fresh) {
        write(entry);
        last = sequence(entry);
        if (count !== undefined && ++printed >= count) return;
      }
      if (fresh.length === 0) await sleep(POLL_MS, over);
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** What ends a tail, as its first line on stderr says it. */
function endsWhen(count: number | undefined, flags: TailFlags): string {
  const ends = [
    count === undefined ? undefined : `after ${count} ${count === 1 ? 'entry' : 'entries'}`,
    flags.until === undefined ? undefined : `at ${flags.until}`,
    flags.timeout === undefined ? undefined : `after ${flags.timeout}`,
  ].filter((end) => end !== undefined);
  return ends.length === 0 ? 'Press Ctrl+C to stop.' : `Stops ${ends.join(' or ')}, or on Ctrl+C.`;
}

/** Lists what the log already holds that matches the filters, oldest first, every page of it; then exits. */
async function list(context: CommandContext, command: Command, flags: FilterFlags & { limit?: string }): Promise<void> {
  const { terminal } = context;
  const format = logFormat(context.options(command).format, terminal.stdout);
  const filter = filterOf(flags);
  const limit = flags.limit === undefined ? undefined : countFlag(flags.limit);
  context.client(command);
  const sandbox = await sandboxOnly(context.settings(command), 'logs list');
  const found: RequestLogEntry[] = [];
  let cursor: string | undefined;
  for (;;) {
    const { items, cursor: next } = await sandbox.request<RequestLogPage>(
      'GET',
      `${sandbox.environment}/requests?${query({ ...filter, take: String(TAKE), cursor })}`,
    );
    found.push(...items);
    if (next === null || (limit !== undefined && found.length >= limit)) break;
    cursor = next;
  }
  // Newest first from the listing: the newest `limit` of them, printed oldest first as the tail prints.
  const kept = (limit === undefined ? found : found.slice(0, limit)).reverse();
  const color = useColor(terminal, terminal.stdout);
  for (const entry of kept) terminal.stdout.write(format === 'json' ? `${safeJson(entry)}\n` : `${entryLine(entry, color)}\n`);
}

/**
 * The entries after `last`, oldest first: the listing's pages, newest first, walked back until an
 * entry at or before `last`. A log emptied since (a reset) starts over from its first entry.
 */
async function since(page: (cursor?: string) => Promise<RequestLogPage>, last: number): Promise<RequestLogEntry[]> {
  const found: RequestLogEntry[] = [];
  let cursor: string | undefined;
  let after = last;
  for (let pages = 0; pages < 1_000; pages++) {
    const { items, hasMore, cursor: next } = await page(cursor);
    if (pages === 0 && items[0] !== undefined && sequence(items[0]) < after) after = 0;
    const newer = items.filter((entry) => sequence(entry) > after);
    found.push(...newer);
    if (newer.length < items.length || !hasMore || next === null) break;
    cursor = next;
  }
  return found.reverse();
}

/** Waits `ms`, or less when `stopped` turns true meanwhile (checked every 50 ms). */
function sleep(ms: number, stopped: () => boolean): Promise<void> {
  return new Promise((done) => {
    const started = Date.now();
    const check = () => {
      if (stopped() || Date.now() - started >= ms) done();
      else setTimeout(check, Math.min(50, ms));
    };
    check();
  });
}

/** A body as text: pretty-printed when it is JSON, as it is otherwise; controls escaped. */
function bodyText(body: string | null, truncated: boolean): string {
  if (body === null) return '  (none)';
  let text = body;
  try {
    text = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // not JSON (or cut at 64 KB): as received
  }
  const indented = terminalSafe(text, true)
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
  return truncated ? `${indented}\n  … (cut at 64 KB)` : indented;
}

/** One entry, readable: what it was, the headers, and both bodies. */
export function entryDetail(entry: RequestLogEntry): string {
  const references = Object.values(entry.references ?? {}).flat();
  const rows: [string, string][] = [
    ['id', entry.id],
    ['at', entry.at],
    ['environment', `${entry.environment}${entry.tenant === null ? '' : ` (tenant ${entry.tenant})`}`],
    ['operation', entry.operation === null ? '- (no endpoint matched)' : `${entry.operation} (${entry.route})`],
    ['status', `${entry.status}${entry.replayed ? ' (replayed)' : ''}, ${Math.round(entry.durationMs)} ms`],
    ['idempotencyKey', entry.idempotencyKey ?? '-'],
    ['traceId', entry.traceId ?? '-'],
    ['faultRule', entry.faultRule ?? '-'],
    ['references', references.length > 0 ? references.join(', ') : '-'],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  const issues = (entry.issues ?? []).map((issue) => `  ${issue.path === '' ? '(request)' : issue.path}: ${issue.message}`);
  const headers = Object.entries(entry.requestHeaders ?? {}).map(([name, value]) => `  ${name}: ${value}`);
  return terminalSafe(
    [
      `${entry.method} ${entry.path}${Object.keys(entry.query ?? {}).length > 0 ? `?${new URLSearchParams(entry.query as Record<string, string>)}` : ''}`,
      ...rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`),
      ...(issues.length > 0 ? ['issues', ...issues] : []),
      'request headers',
      ...headers,
      `request body${entry.requestBodyTruncated ? ' (cut)' : ''}`,
    ].join('\n'),
    true,
  )
    .concat(`\n${bodyText(entry.requestBody, entry.requestBodyTruncated)}\n`)
    .concat(`response body${entry.responseBodyTruncated ? ' (cut)' : ''}\n${bodyText(entry.responseBody, entry.responseBodyTruncated)}\n`);
}

async function show(context: CommandContext, command: Command, id: string): Promise<void> {
  const given = context.options(command).format;
  // One entry: readable unless JSON is asked for (a script reads it with --format json).
  const format = logFormat(given ?? 'table', context.terminal.stdout);
  context.client(command);
  const sandbox: SandboxLink = await sandboxOnly(context.settings(command), 'logs show');
  const entry = await sandbox.request<RequestLogEntry>('GET', `${sandbox.environment}/requests/${encodeURIComponent(id)}`);
  context.terminal.stdout.write(format === 'json' ? `${safeJson(entry, 2)}\n` : entryDetail(entry));
}

const TAIL_HELP = [
  'Prints each request to the service API the sandbox receives from now on, once, in the order it',
  'logged them: time, status, method and path, operation, duration, entry id, Idempotency-Key, fault',
  'rule, and why it was refused. On a terminal these are readable lines; otherwise (a pipe, a file,',
  'CI) each entry whole as one JSON line, as --format json prints it (--format table for the lines).',
  'Ctrl-C or SIGTERM stops it (exit 0); so do --count N, --until TIME and --timeout DURATION, for a',
  'script. In a script that signals it, run the bin itself (node_modules/.bin/payment-service-sdk), not',
  'npx: npx does not pass the signal on. The sandbox only: against the real service it says so and exits 1.',
  '',
  'Example: payment-service-sdk logs tail --status 4xx --operation refund',
  'Example: node_modules/.bin/payment-service-sdk logs tail --count 3 --timeout 30s > requests.jsonl',
].join('\n');

const LIST_HELP = [
  'Prints what the request log already holds that matches the filters, oldest first, then exits 0:',
  'the lines of logs tail on a terminal, JSON lines otherwise (--format json or table to choose).',
  '',
  'Example: payment-service-sdk logs list --since 2026-01-31T12:00:00Z --status 4xx --format json',
].join('\n');

/** The filters `logs tail` and `logs list` share. */
function filterOptions(command: Command): Command {
  return command
    .option('--status <status>', 'a status code (202) or a class (4xx, 5xx)')
    .option('--operation <operationId>', 'the operation, as openapi.json names it: createSession, refund, ...')
    .option('--idempotency-key <key>', 'requests with this Idempotency-Key')
    .option('--since <time>', 'requests at or after this ISO 8601 date-time (sandbox clock)')
    .option('--until <time>', 'requests at or before this ISO 8601 date-time (sandbox clock); a tail also stops then');
}

/** Adds `logs tail`, `logs list` and `logs show` to the program. */
export function registerLogs(program: Command, context: CommandContext): void {
  const logs = program.command('logs').description("the sandbox's request log: every request to the service API and its answer");
  filterOptions(logs.command('tail').description('follow the request log live (sandbox only)'))
    .option('--count <n>', 'stop after N entries (exit 0)')
    .option('--timeout <duration>', 'stop after this long: 30s, 5m, 500ms (exit 0)')
    .addHelpText('after', `\n${TAIL_HELP}`)
    .action((flags: TailFlags, self: Command) => tail(context, self, flags));
  filterOptions(logs.command('list').description('list what the request log already holds, oldest first (sandbox only)'))
    .option('--limit <n>', 'the newest N matching entries only')
    .addHelpText('after', `\n${LIST_HELP}`)
    .action((flags: FilterFlags & { limit?: string }, self: Command) => list(context, self, flags));
  logs
    .command('show <id>')
    .description('one entry of the request log with both bodies (sandbox only); --format json for the entry as JSON')
    .action((id: string, _flags: unknown, self: Command) => show(context, self, id));
}
