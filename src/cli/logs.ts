/**
 * `payment-service-sdk logs tail` and `logs show <id>`: the sandbox's request log from the shell.
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

interface TailFlags {
  status?: string;
  operation?: string;
  idempotencyKey?: string;
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

/** The `--format` of the log commands: `json` (and `ndjson`) one entry per line, else the readable lines. */
function logFormat(given: string | undefined): 'json' | 'text' {
  if (given === undefined || given === 'table') return 'text';
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

/** Follows the log: the entries logged after it started, each once, oldest first, until Ctrl-C. */
async function tail(context: CommandContext, command: Command, flags: TailFlags): Promise<void> {
  const { terminal } = context;
  const format = logFormat(context.options(command).format);
  const filter = { status: statusFilter(flags.status), operation: flags.operation, idempotencyKey: flags.idempotencyKey };
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
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // On stderr, once the starting point is known: from here on every entry is printed.
  terminal.stderr.write(`Following the request log of the sandbox at ${sandbox.baseUrl} (${sandbox.environment}). Press Ctrl+C to stop.\n`);
  try {
    while (!stopped) {
      const fresh = await since(page, last);
      for (const entry of fresh) write(entry);
      const newest = fresh.at(-1);
      if (newest) last = sequence(newest);
      else await sleep(POLL_MS, () => stopped);
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
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

function sleep(ms: number, stopped: () => boolean): Promise<void> {
  return new Promise((done) => {
    if (stopped()) done();
    else setTimeout(done, ms);
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
  const format = logFormat(context.options(command).format);
  context.client(command);
  const sandbox: SandboxLink = await sandboxOnly(context.settings(command), 'logs show');
  const entry = await sandbox.request<RequestLogEntry>('GET', `${sandbox.environment}/requests/${encodeURIComponent(id)}`);
  context.terminal.stdout.write(format === 'json' ? `${safeJson(entry, 2)}\n` : entryDetail(entry));
}

const TAIL_HELP = [
  'Prints each request to the service API the sandbox receives from now on, once, in the order it',
  'logged them: time, status, method and path, operation, duration, entry id, Idempotency-Key, fault',
  'rule, and why it was refused. --format json prints each entry whole, one per line. Ctrl-C stops (exit 0).',
  'The sandbox only: against the real service it says so and exits 1.',
  '',
  'Example: payment-service-sdk logs tail --status 4xx --operation refund',
].join('\n');

/** Adds `logs tail` and `logs show` to the program. */
export function registerLogs(program: Command, context: CommandContext): void {
  const logs = program.command('logs').description("the sandbox's request log: every request to the service API and its answer");
  logs
    .command('tail')
    .description('follow the request log live (sandbox only)')
    .option('--status <status>', 'a status code (202) or a class (4xx, 5xx)')
    .option('--operation <operationId>', 'the operation, as openapi.json names it: createSession, refund, ...')
    .option('--idempotency-key <key>', 'requests with this Idempotency-Key')
    .addHelpText('after', `\n${TAIL_HELP}`)
    .action((flags: TailFlags, self: Command) => tail(context, self, flags));
  logs
    .command('show <id>')
    .description('one entry of the request log with both bodies (sandbox only); --format json for the entry as JSON')
    .action((id: string, _flags: unknown, self: Command) => show(context, self, id));
}
