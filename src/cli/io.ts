/**
 * What every command shares: where data and messages go, the errors that pick the exit code, and
 * the output formats. Data goes to stdout, everything else to stderr, so that a script can rely on
 * stdout and the exit code alone.
 */

/**
 * Exit codes: 0 done, 1 the service refused or failed the request (it answered an error), or
 * another failure, 2 the command line was wrong (nothing was sent), 3 a payment ended `failed`
 * (declined), 4 a payment's outcome is not known yet (`timeout`, `pending`), 5 no answer from the
 * service (network failure or timeout: the request may or may not have reached it).
 */
export const EXIT = { ok: 0, failure: 1, usage: 2, paymentFailed: 3, outcomeUnknown: 4, noAnswer: 5 } as const;

/** The exit codes as `--help` and the README list them. */
export const EXIT_CODES_HELP = [
  'Exit codes:',
  '  0    done',
  '  1    the service refused or failed the request (an API error: 4xx, 5xx), or another failure',
  '  2    usage mistake (nothing was sent)',
  '  3    pos pay: the payment ended failed (declined); the record is on stdout',
  '  4    pos pay: the outcome is not known yet (timeout, still pending after recovery); the record is on stdout',
  '  5    no answer from the service: a network failure or a timeout (the request may have reached it)',
  '  130  interrupted (Ctrl-C)',
  '  141  the reader of stdout went away (| head)',
].join('\n');

/** Exit code when the reader of stdout went away (`| head`): 128 + SIGPIPE, as a shell reports it. */
export const BROKEN_PIPE = 141;

/** A mistake on the command line (exit 2): said in one line, with a pointer to --help. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The value of `--option`, which must be an absolute http(s) URL. */
export function httpUrl(option: string, value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // reported below
  }
  throw new UsageError(`--${option} must be an absolute http(s) URL, got ${value}`);
}

/**
 * A failure whose message and exit code were decided elsewhere (the export's page worker); its
 * `cause`, when an SDK error, gives `--format json`'s error line its status, code and trace id.
 */
export class ExitError extends Error {
  override name = 'ExitError';

  constructor(
    message: string,
    readonly exitCode: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The streams and the terminal a command runs on. */
export interface Terminal {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
}

export function processTerminal(): Terminal {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}

/** Colour only on a terminal, and never with `NO_COLOR` set (https://no-color.org). */
export function useColor(terminal: Terminal, stream: NodeJS.WriteStream): boolean {
  return Boolean(stream.isTTY) && (terminal.env.NO_COLOR ?? '') === '' && terminal.env.TERM !== 'dumb';
}

export function paint(on: boolean, code: number, text: string): string {
  return on ? `\u001b[${code}m${text}\u001b[0m` : text;
}

/** C0 controls, DEL and C1 controls: what could drive a terminal. `lines` spares newline and tab. */
function isControl(code: number, lines: boolean): boolean {
  if (lines && (code === 0x0a || code === 0x09)) return false;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

function escaped(code: number): string {
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

function escapeWhere(text: string, control: (code: number) => boolean): string {
  let safe = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    safe += control(code) ? escaped(code) : char;
  }
  return safe;
}

/**
 * Text safe for a terminal: control characters (ESC, BEL, other C0, DEL, C1) written as `\x1b`,
 * `\u009b`, so that data from the service or a webhook can never retitle, recolour or clear it.
 * `lines` keeps newlines and tabs (a message of several lines).
 */
export function terminalSafe(text: string, lines = false): string {
  return escapeWhere(text, (code) => isControl(code, lines));
}

/** JSON as `JSON.stringify` writes it, with DEL and C1 controls escaped too (`\u009b`): the same value, safe to print. */
export function safeJson(value: unknown, indent?: number): string {
  return escapeWhere(JSON.stringify(value, null, indent), (code) => code >= 0x7f && code <= 0x9f);
}

/** The output formats of data. */
export const FORMATS = ['table', 'json', 'ndjson', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

/** `--format`, or the default: a table on a terminal, JSON otherwise. */
export function formatOf(given: string | undefined, terminal: Terminal): Format {
  if (given === undefined) return terminal.stdout.isTTY ? 'table' : 'json';
  if (!(FORMATS as readonly string[]).includes(given)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}`);
  return given as Format;
}

type Row = Record<string, unknown>;

/** A record flattened to `a.b` columns, for tables and CSV; arrays stay JSON. */
export function flatten(record: unknown, prefix = '', into: Row = {}): Row {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    into[prefix || 'value'] = record;
    return into;
  }
  for (const [key, value] of Object.entries(record)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) flatten(value, name, into);
    else into[name] = value;
  }
  return into;
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** One CSV field (RFC 4180): quoted only when it must be; control characters escaped when it goes to a terminal. */
export function csvField(value: unknown, forTerminal = false): string {
  const text = forTerminal ? terminalSafe(cellText(value)) : cellText(value);
  return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A CSV line; `forTerminal` (stdout is a terminal) escapes control characters, a file or a pipe gets the data as it is. */
export function csvLine(values: unknown[], forTerminal = false): string {
  return `${values.map((value) => csvField(value, forTerminal)).join(',')}\r\n`;
}

/** Columns of a set of rows: those of the first row, then any new ones in order of appearance. */
export function columnsOf(rows: Row[], preferred: readonly string[] = []): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...preferred.filter((key) => seen.has(key)), ...[...seen].filter((key) => !preferred.includes(key))];
}

/** Free text a table may shorten; identifiers, references and URLs are always shown whole. */
const FREE_TEXT = new Set(['description', 'errorMessage', 'reason', 'message', 'confirmationDetail', 'forwardedBody']);
/** Where a table shortens free text, with `…`. */
const FREE_TEXT_CHARS = 60;

/** The text of a table cell: one line, controls escaped, free text (by its field's last name) shortened with `…`. */
export function tableCell(field: string, value: unknown): string {
  const text = terminalSafe(cellText(value).replaceAll(/\s+/g, ' '));
  const free = FREE_TEXT.has(field.slice(field.lastIndexOf('.') + 1));
  return free && [...text].length > FREE_TEXT_CHARS ? `${[...text].slice(0, FREE_TEXT_CHARS - 1).join('')}…` : text;
}

/** A plain-text table of cells made with {@link tableCell}. */
export function table(cells: string[][], columns: string[], color: boolean): string {
  if (cells.length === 0) return '(none)\n';
  const heads = columns.map((column) => terminalSafe(column));
  const widths = heads.map((column, index) => Math.max(column.length, ...cells.map((line) => line[index]?.length ?? 0)));
  const line = (values: string[]) =>
    values
      .map((value, index) => value.padEnd(widths[index] ?? 0))
      .join('  ')
      .trimEnd();
  return `${paint(color, 1, line(heads))}\n${cells.map(line).join('\n')}\n`;
}

/**
 * How the columns of CSV are chosen: `seen` the rows' fields, `preferred` first; `declared` every
 * preferred column (a record type's, empty where absent), then the rows' other fields; `only` the
 * preferred columns alone, as `export` writes them, so that a listing's CSV has one header.
 */
export type CsvColumns = 'seen' | 'declared' | 'only';

function csvColumnsOf(rows: Row[], preferred: readonly string[], mode: CsvColumns): string[] {
  if (mode === 'seen') return columnsOf(rows, preferred);
  if (mode === 'only') return [...preferred];
  return [...preferred, ...columnsOf(rows).filter((column) => !preferred.includes(column))];
}

/** Writes a list of records in `format` to stdout. */
export function writeRecords(
  terminal: Terminal,
  format: Format,
  records: unknown[],
  preferred: readonly string[] = [],
  csv: CsvColumns = 'seen',
): void {
  const out = terminal.stdout;
  if (format === 'json') {
    out.write(`${safeJson(records, 2)}\n`);
    return;
  }
  if (format === 'ndjson') {
    for (const record of records) out.write(`${safeJson(record)}\n`);
    return;
  }
  const rows = records.map((record) => flatten(record));
  const columns = format === 'csv' ? csvColumnsOf(rows, preferred, csv) : columnsOf(rows, preferred);
  if (format === 'csv') {
    const tty = Boolean(out.isTTY);
    out.write(csvLine(columns, tty));
    for (const row of rows)
      out.write(
        csvLine(
          columns.map((column) => row[column]),
          tty,
        ),
      );
    return;
  }
  const cells = rows.map((row) => columns.map((column) => tableCell(column, row[column])));
  out.write(table(cells, columns, useColor(terminal, out)));
}

/** Writes one record: a two-column table (field, value), or the record in the data formats (CSV: the `declared` columns of its type first). */
export function writeRecord(terminal: Terminal, format: Format, record: unknown, declared: readonly string[] = []): void {
  if (format === 'json') {
    terminal.stdout.write(`${safeJson(record, 2)}\n`);
    return;
  }
  if (format !== 'table') {
    writeRecords(terminal, format, [record], declared, declared.length > 0 ? 'declared' : 'seen');
    return;
  }
  const cells = Object.entries(flatten(record)).map(([field, value]) => [terminalSafe(field), tableCell(field, value)]);
  terminal.stdout.write(table(cells, ['field', 'value'], useColor(terminal, terminal.stdout)));
}

/** A message for the person at the terminal (stderr), control characters escaped. */
export function say(terminal: Terminal, text: string): void {
  terminal.stderr.write(`${terminalSafe(text, true)}\n`);
}
