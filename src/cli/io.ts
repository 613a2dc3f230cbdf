/**
 * What every command shares: where data and messages go, the errors that pick the exit code, and
 * the output formats. Data goes to stdout, everything else to stderr, so that a script can rely on
 * stdout and the exit code alone.
 */

/** Exit codes: 0 done, 1 the service or the network failed, 2 the command line was wrong. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

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

/** A failure whose message and exit code were decided elsewhere (the export's page worker). */
export class ExitError extends Error {
  override name = 'ExitError';

  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
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

/** One CSV field (RFC 4180): quoted only when it must be. */
export function csvField(value: unknown): string {
  const text = cellText(value);
  return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** Columns of a set of rows: those of the first row, then any new ones in order of appearance. */
export function columnsOf(rows: Row[], preferred: readonly string[] = []): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...preferred.filter((key) => seen.has(key)), ...[...seen].filter((key) => !preferred.includes(key))];
}

/** A plain-text table; long cells are cut to keep a line on the screen. */
export function table(rows: Row[], columns: string[], color: boolean): string {
  if (rows.length === 0) return '(none)\n';
  const cells = rows.map((row) => columns.map((column) => cellText(row[column]).replaceAll(/\s+/g, ' ').slice(0, 60)));
  const widths = columns.map((column, index) => Math.max(column.length, ...cells.map((line) => line[index]?.length ?? 0)));
  const line = (values: string[]) =>
    values
      .map((value, index) => value.padEnd(widths[index] ?? 0))
      .join('  ')
      .trimEnd();
  return `${paint(color, 1, line(columns))}\n${cells.map(line).join('\n')}\n`;
}

/** Writes a list of records in `format` to stdout. */
export function writeRecords(terminal: Terminal, format: Format, records: unknown[], preferred: readonly string[] = []): void {
  const out = terminal.stdout;
  if (format === 'json') {
    out.write(`${JSON.stringify(records, null, 2)}\n`);
    return;
  }
  if (format === 'ndjson') {
    for (const record of records) out.write(`${JSON.stringify(record)}\n`);
    return;
  }
  const rows = records.map((record) => flatten(record));
  const columns = columnsOf(rows, preferred);
  if (format === 'csv') {
    out.write(csvLine(columns));
    for (const row of rows) out.write(csvLine(columns.map((column) => row[column])));
    return;
  }
  out.write(table(rows, columns, useColor(terminal, out)));
}

/** Writes one record: a two-column table (field, value), or the record in the data formats. */
export function writeRecord(terminal: Terminal, format: Format, record: unknown): void {
  if (format === 'json') {
    terminal.stdout.write(`${JSON.stringify(record, null, 2)}\n`);
    return;
  }
  if (format !== 'table') {
    writeRecords(terminal, format, [record]);
    return;
  }
  const row = flatten(record);
  const rows = Object.entries(row).map(([field, value]) => ({ field, value }));
  terminal.stdout.write(table(rows, ['field', 'value'], useColor(terminal, terminal.stdout)));
}

/** A message for the person at the terminal (stderr). */
export function say(terminal: Terminal, text: string): void {
  terminal.stderr.write(`${text}\n`);
}
