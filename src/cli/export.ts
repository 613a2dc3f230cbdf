/**
 * `payment-service-sdk export sessions|pos|modifications`: every matching record of a listing,
 * streamed page by page to CSV or NDJSON, on stdout or into `--out FILE`. A worker thread fetches
 * and formats one page at a time; the main thread writes it as one chunk of whole lines and waits
 * for the output to drain before asking for the next, so memory stays flat however long the
 * listing. A progress bar on stderr when it is a terminal, a summary line always. Ctrl-C stops
 * after the page in hand and prints the cursor to go on from with `--resume`; so does a failure of
 * the service or the network.
 */
import { once } from 'node:events';
import { realpathSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import type { Command } from 'commander';
import { type Paginator, type PaymentClient, PaymentServiceError } from '../index.js';
import { MODIFICATION_COLUMNS, POS_COLUMNS, SESSION_COLUMNS } from './columns.js';
import type { Profile } from './config.js';
import { type CreatedRange, createdHelp, createdRange, inCreatedRange, posDates, type RangeSupport } from './created-range.js';
import { csvLine, ExitError, type Terminal, terminalSafe, UsageError } from './io.js';
import { type CommandContext, clientFor, failure as failureOf, type GlobalOptions } from './program.js';
import { integer } from './sandbox.js';

/** Exit codes after Ctrl-C and SIGTERM: 128 + the signal's number, as a shell reports a process the signal stopped. */
const INTERRUPTED: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143 };
const BIN = 'payment-service-sdk';
/** The bar is redrawn at most this often. */
const REDRAW_MS = 100;
/**
 * The young generation of the page worker's heap, in MB. V8's default grows under the garbage of an
 * export until RSS has risen by 36 to 55 MB over 100 000 rows; with the pages made in a worker of
 * this young generation the rise was 26 to 36 MB, at the same rate (docs/benchmarks.md).
 */
const WORKER_YOUNG_GENERATION_MB = 6;

type Row = Record<string, unknown>;
type ExportFormat = 'csv' | 'ndjson';

interface Filter {
  flags: string;
  description: string;
  /** The listing parameter, also the commander option name. */
  key: string;
}

interface Kind {
  name: 'sessions' | 'pos' | 'modifications';
  /** What the records are called in messages. */
  noun: string;
  description: string;
  /** CSV columns, in order: the record type's, as every CSV of the CLI has them (./columns.ts). */
  columns: readonly string[];
  /** Where `--created-from/--created-to` apply: the service's own filters, or the CLI on each page. */
  created: RangeSupport;
  filters: readonly Filter[];
  list(client: PaymentClient, params: Row): Paginator<unknown>;
}

const KINDS: readonly Kind[] = [
  {
    name: 'sessions',
    noun: 'sessions',
    description: 'every session of the listing, oldest first',
    columns: SESSION_COLUMNS,
    created: 'cli',
    filters: [{ flags: '--status <status>', key: 'status', description: 'pending, completed, failed, expired or cancelled' }],
    list: (client, params) => client.sessions.list(params as never),
  },
  {
    name: 'pos',
    noun: 'POS payments',
    description: 'every POS payment of the listing',
    columns: POS_COLUMNS,
    created: 'service',
    filters: [
      { flags: '--status <status>', key: 'status', description: 'pending, success, failed or timeout' },
      { flags: '--order <order>', key: 'order', description: 'asc or desc' },
      { flags: '--created-at-start <time>', key: 'createdAtStart', description: 'from this time (YYYY-MM-DD HH:MM:SS, UTC)' },
      { flags: '--created-at-end <time>', key: 'createdAtEnd', description: 'up to this time' },
    ],
    list: (client, params) => client.pos.list(params as never),
  },
  {
    name: 'modifications',
    noun: 'modifications',
    description: 'every refund, capture, cancel and extend of the listing, oldest first',
    columns: MODIFICATION_COLUMNS,
    created: 'cli',
    filters: [
      { flags: '--type <type>', key: 'type', description: 'refund, capture, cancel or extend' },
      { flags: '--status <status>', key: 'status', description: 'for example pending or success' },
    ],
    list: (client, params) => client.modifications.list(params as never),
  },
];

interface ExportFlags {
  out?: string;
  resume?: string;
  take?: string;
  createdFrom?: string;
  createdTo?: string;
  summary?: string;
  [filter: string]: string | undefined;
}

/** `--format`, else by the extension of `--out` (`.csv` is CSV), else NDJSON. */
function exportFormat(given: string | undefined, out: string | undefined): ExportFormat {
  if (given === undefined) return out?.toLowerCase().endsWith('.csv') ? 'csv' : 'ndjson';
  if (given !== 'csv' && given !== 'ndjson')
    throw new UsageError(`export writes csv or ndjson; --format ${given} is not a streaming format`);
  return given;
}

/** `--summary`: only `json` (one line `{ rows, pages, durationMs }` on stderr at the end), or none. */
function summaryFormat(given: string | undefined): boolean {
  if (given === undefined) return false;
  if (given !== 'json') throw new UsageError(`--summary takes json, got ${given}`);
  return true;
}

/** Reads `a.b` of a record: one function per column, made once. */
function getter(column: string): (record: Row) => unknown {
  const [first = '', second] = column.split('.');
  if (second === undefined) return (record) => record[first];
  return (record) => {
    const inner = record[first];
    return inner !== null && typeof inner === 'object' ? (inner as Row)[second] : undefined;
  };
}

/** The lines of one page as one string, so that a page is written (or not) whole. */
function formatter(format: ExportFormat, columns: readonly string[]): (items: readonly unknown[]) => string {
  if (format === 'ndjson') {
    return (items) => {
      let chunk = '';
      for (const item of items) chunk += `${JSON.stringify(item)}\n`;
      return chunk;
    };
  }
  const getters = columns.map(getter);
  return (items) => {
    let chunk = '';
    for (const item of items) chunk += csvLine(getters.map((get) => get(item as Row)));
    return chunk;
  };
}

/** What the page worker is given: the client's settings and the listing to walk. */
interface PageJob {
  kind: Kind['name'];
  settings: Profile;
  params: Row;
  format: ExportFormat;
  /** The `--created-from/--created-to` range the worker keeps records of, when the listing has no such filter. */
  created?: CreatedRange | undefined;
}

/** One page as the worker hands it over: its lines, already formatted, and where the listing goes on. */
interface RemotePage {
  type: 'page';
  chunk: string;
  count: number;
  total: number | undefined;
  hasMore: boolean;
  cursor: string | null;
}

type PageMessage = RemotePage | { type: 'done' } | { type: 'failed'; message: string; exitCode: number };

function kindNamed(name: string): Kind {
  const kind = KINDS.find((candidate) => candidate.name === name);
  if (!kind) throw new Error(`no export of ${name}`);
  return kind;
}

/** Whether this thread is an export's page worker (the bin started as one). */
export function isPageWorker(): boolean {
  return parentPort !== null && (workerData as { pageJob?: unknown } | undefined)?.pageJob !== undefined;
}

/**
 * The page worker: walks the listing and posts each page as formatted lines, fetching the next one
 * when the main thread has written the last and asks. Fetching, validating and formatting make nearly
 * all of an export's garbage; a worker's heap can be given a small young generation, the main thread's not.
 */
export async function servePages(): Promise<void> {
  const port = parentPort;
  if (!port) return;
  const job = (workerData as { pageJob: PageJob }).pageJob;
  const kind = kindNamed(job.kind);
  const toLines = formatter(job.format, kind.columns);
  const asked = () => new Promise<void>((done) => port.once('message', () => done()));
  try {
    const keep = job.created ? inCreatedRange(job.created) : undefined;
    for await (const page of kind.list(clientFor(job.settings), job.params).pages()) {
      const items = keep ? page.items.filter(keep) : page.items;
      const message: RemotePage = {
        type: 'page',
        chunk: toLines(items),
        count: items.length,
        // Filtered here, the listing's total is not the export's.
        total: keep ? undefined : page.total,
        hasMore: page.hasMore,
        cursor: page.cursor,
      };
      port.postMessage(message);
      await asked();
    }
    port.postMessage({ type: 'done' } satisfies PageMessage);
  } catch (error) {
    const { message, code } = failureOf(error);
    port.postMessage({ type: 'failed', message, exitCode: code } satisfies PageMessage);
  }
}

/** The pages of `job` from a page worker, each asked for once the one before is written; the worker ends with the walk. */
async function* remotePages(job: PageJob, signal: AbortSignal): AsyncGenerator<RemotePage> {
  // The bin itself (dist/cli.cjs defines __filename; the ESM build is only ever run as the main script).
  const bin = typeof __filename === 'string' ? __filename : realpathSync(process.argv[1] ?? '');
  const worker = new Worker(bin, {
    workerData: { pageJob: job },
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  });
  try {
    for (;;) {
      const [message] = (await once(worker, 'message', { signal })) as [PageMessage];
      if (message.type === 'done') return;
      if (message.type === 'failed') throw new ExitError(message.message, message.exitCode);
      yield message;
      worker.postMessage('next');
    }
  } finally {
    await worker.terminate();
  }
}

/** A word for a shell: quoted unless it is plain. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** 12,345: grouped by hand, as `toLocaleString` would load ICU's locale data (about 20 ms) for one line. */
const number = (value: number) => String(Math.round(value)).replace(/\B(?=(\d{3})+$)/g, ',');

/**
 * The progress line: count / total, a bar, the share, the rate and the time left. A resumed export
 * knows the listing's total but not how much of it came before the cursor: count and total only.
 */
function progressLine(noun: string, count: number, total: number | undefined, seconds: number, width: number, resumed = false): string {
  const rate = seconds > 0 ? count / seconds : 0;
  const rateText = `${number(rate)} rows/s`;
  if (total === undefined) return `${noun} ${number(count)}  ${rateText}`;
  if (resumed) return `${noun} ${number(count)} since the cursor (${number(total)} in the listing)  ${rateText}`;
  if (total <= 0) return `${noun} ${number(count)} / 0  ${rateText}`;
  const share = Math.min(1, count / total);
  const left = rate > 0 && count < total ? `  ETA ${Math.ceil((total - count) / rate)} s` : '';
  const head = `${noun} ${number(count)} / ${number(total)} `;
  const tail = ` ${Math.floor(share * 100)
    .toString()
    .padStart(3)}%  ${rateText}${left}`;
  const barWidth = Math.max(10, Math.min(40, width - head.length - tail.length - 3));
  const filled = Math.round(share * barWidth);
  return `${head}[${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}]${tail}`;
}

/** Resolves when the stream has drained, failed or closed, or the export is being stopped; never rejects. */
function drained(stream: Writable, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const finish = () => {
      stream.off('drain', finish).off('error', finish).off('close', finish);
      signal.removeEventListener('abort', finish);
      done();
    };
    stream.on('drain', finish).on('error', finish).on('close', finish);
    signal.addEventListener('abort', finish);
  });
}

/** Resolves once everything written so far has left the process (a write's callback runs after the earlier ones). */
function flushed(stream: Writable): Promise<void> {
  return new Promise((done) => {
    if (stream.destroyed || stream.writableEnded) done();
    else stream.write('', () => done());
  });
}

/** The output: a file (appended to with --resume), or stdout. */
interface Output {
  stream: Writable;
  /** Whether the CSV header goes first: not when continuing a file or a stream that has lines. */
  fresh: boolean;
  /** Ends the output: a file is flushed to disk and closed. */
  close(): Promise<void>;
}

/** A file to resume into must end with a whole line (an export that was killed, not interrupted, may not). */
async function checkWholeLines(out: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(out, 'r');
  } catch {
    return; // absent or unreadable: opening it for writing says what is wrong
  }
  const last = Buffer.alloc(1);
  let size = 0;
  try {
    size = (await handle.stat()).size;
    if (size > 0) await handle.read(last, 0, 1, size - 1);
  } catch {
    size = 0; // not a readable file (a directory, a device): opening it for writing says what is wrong
  } finally {
    await handle.close();
  }
  if (size > 0 && last[0] !== 0x0a)
    throw new UsageError(`${out} ends in the middle of a line; cut it after its last complete line before resuming`);
}

/** Opens the output when the first page is in, so that a command that fails at once leaves no file behind. */
async function openOutput(terminal: Terminal, out: string | undefined, resuming: boolean): Promise<Output> {
  if (out === undefined) return { stream: terminal.stdout, fresh: !resuming, close: () => flushed(terminal.stdout) };
  let handle: FileHandle;
  try {
    handle = await open(out, resuming ? 'a' : 'w');
  } catch (error) {
    throw new UsageError(`cannot write ${out}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const { size } = await handle.stat();
  const stream = handle.createWriteStream({ autoClose: false, highWaterMark: 256 * 1024 });
  return {
    stream,
    fresh: size === 0,
    async close() {
      try {
        if (!stream.destroyed) {
          const finished = once(stream, 'finish');
          stream.end();
          await finished;
          await handle.sync();
        }
      } finally {
        // The stream holds the handle until it is destroyed: `handle.close()` would wait for it forever.
        if (!stream.closed) {
          const closed = once(stream, 'close');
          stream.destroy();
          await closed;
        }
        await handle.close();
      }
    },
  };
}

/** A bar on stderr, when stderr is a terminal the data is not also going to. */
function progress(terminal: Terminal, show: boolean, line: () => string): { stop(): void } {
  if (!show) return { stop() {} };
  // Cut to the width: a line that wrapped could not be redrawn in place.
  const draw = () => terminal.stderr.write(`\r${line().slice(0, (terminal.stderr.columns ?? 80) - 1)}\u001b[K`);
  const timer = setInterval(draw, REDRAW_MS);
  timer.unref();
  draw();
  return {
    stop() {
      clearInterval(timer);
      terminal.stderr.write('\r\u001b[2K');
    },
  };
}

function errorText(error: unknown): string {
  if (error instanceof PaymentServiceError) return `${error.name}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** The command that goes on from `cursor`: the same settings, filters, format and output. */
function resumeCommand(kind: Kind, global: GlobalOptions, format: ExportFormat, flags: ExportFlags, cursor: string): string {
  const words = [BIN];
  for (const [flag, value] of [
    ['--env', global.env],
    ['--profile', global.profile],
    ['--base-url', global.baseUrl],
    ['--webcode', global.webcode],
  ] as const)
    if (value !== undefined) words.push(flag, value);
  words.push('export', kind.name, '--format', format);
  for (const { flags: spelling, key } of kind.filters) {
    const value = flags[key];
    if (value !== undefined) words.push(spelling.split(' ')[0] ?? '', value);
  }
  for (const [flag, value] of [
    ['--created-from', flags.createdFrom],
    ['--created-to', flags.createdTo],
    ['--summary', flags.summary],
    ['--take', flags.take === undefined ? undefined : String(integer('take', flags.take, 1, 100))],
    ['--out', flags.out],
  ] as const)
    if (value !== undefined) words.push(flag, value);
  words.push('--resume', cursor);
  return words.map(shellWord).join(' ');
}

/** How an export ends early: Ctrl-C or SIGTERM (a second one exits at once), or an output that fails a write. */
interface Stops {
  /** Aborted by either: the page worker stops, a wait for the output to drain ends. */
  signal: AbortSignal;
  /** The signal that stopped the export, if one did. */
  readonly by: NodeJS.Signals | undefined;
  /** The first failed write, if one failed. */
  readonly outputError: Error | undefined;
  /** For the output's `error` event. */
  onOutputError(error: Error): void;
  /** Gives Ctrl-C and SIGTERM back to their defaults. */
  release(): void;
}

function stopsFor(terminal: Terminal, where: string): Stops {
  const controller = new AbortController();
  let by: NodeJS.Signals | undefined;
  let outputError: Error | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (by !== undefined) {
      // A second Ctrl-C: out at once; the output may end with a partial line.
      terminal.stderr.write(`\nInterrupted again: stopped at once; ${where} may end with a partial line.\n`);
      process.exit(INTERRUPTED[signal] ?? 1);
    }
    by = signal;
    controller.abort(new Error(`${signal} received`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    get by() {
      return by;
    },
    get outputError() {
      return outputError;
    },
    onOutputError(error) {
      outputError ??= error;
      controller.abort(error);
    },
    release() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** What an export wrote, and where the rest of the listing starts. */
interface Written {
  count: number;
  pages: number;
  total: number | undefined;
  /** The cursor after the last page written whole; `null` once the listing is done, `undefined` before any page. */
  cursor: string | null | undefined;
  output: Output | undefined;
  complete: boolean;
  failure: unknown;
}

interface ExportRun {
  kind: Kind;
  terminal: Terminal;
  flags: ExportFlags;
  format: ExportFormat;
  /** `--summary json`: the summary as one JSON line. */
  summaryJson: boolean;
  job: PageJob;
  stops: Stops;
}

/** Writes each page the worker makes as it comes, waiting for the output to drain, until the listing ends or a stop. */
async function writePages(run: ExportRun, written: Written): Promise<void> {
  const { kind, terminal, flags, format, stops } = run;
  let header = false;
  const onTerminal = flags.out === undefined && Boolean(terminal.stdout.isTTY);
  const stopped = () => stops.by !== undefined || stops.outputError !== undefined;
  try {
    for await (const page of remotePages(run.job, stops.signal)) {
      if (written.output === undefined) {
        written.output = await openOutput(terminal, flags.out, flags.resume !== undefined);
        // A closed stdout (`| head`) or a full disk fails a write: the export stops there.
        written.output.stream.on('error', stops.onOutputError);
        header = format === 'csv' && written.output.fresh;
      }
      written.total ??= page.total;
      let chunk = page.chunk;
      if (header) {
        chunk = csvLine([...kind.columns]) + chunk;
        header = false;
      }
      // Data read on a terminal gets its control characters escaped (a file or a pipe gets it as it is).
      if (onTerminal) chunk = terminalSafe(chunk.replaceAll('\r\n', '\n'), true);
      // Handed to the stream whole: it reaches the output whether or not the loop goes on.
      const full = !written.output.stream.write(chunk);
      written.count += page.count;
      written.pages += 1;
      written.cursor = page.hasMore ? page.cursor : null;
      if (full && !stopped()) await drained(written.output.stream, stops.signal);
      if (stopped()) break;
    }
    written.complete = written.cursor === null || !stopped();
  } catch (error) {
    // An abort of Ctrl-C or of a failed output is not the service's failure.
    if (!stopped()) written.failure = error;
  }
}

/** Flushes and closes the output; a failure to do so leaves the export incomplete. */
async function closeOutput(written: Written, stops: Stops): Promise<void> {
  if (written.output === undefined) return;
  try {
    await written.output.close();
  } catch (error) {
    written.failure ??= error;
    written.complete = false;
  }
  written.output.stream.off('error', stops.onOutputError);
}

/** The summary on stderr; how an incomplete export ends: the exit code of the signal, or an error with the cursor to resume from. */
async function reportExport(
  run: ExportRun,
  written: Written,
  where: string,
  elapsedMs: number,
  resume: (cursor: string) => string,
): Promise<void> {
  const { kind, terminal, stops } = run;
  const { count, cursor, failure } = written;
  const seconds = elapsedMs / 1000;
  const summary = `${number(count)} ${kind.noun} in ${seconds.toFixed(1)} s (${number(count / Math.max(seconds, 0.001))} rows/s)`;
  // `--summary json`: the export's last line on stderr, whatever its end (a failure's message follows it).
  const json = run.summaryJson ? `${JSON.stringify({ rows: count, pages: written.pages, durationMs: Math.round(elapsedMs) })}\n` : '';
  const next = cursor === undefined || cursor === null ? 'Run the same command again to start over.' : `Resume with: ${resume(cursor)}`;
  if (written.complete && failure === undefined) {
    terminal.stderr.write(json === '' ? `Exported ${summary} to ${where}.\n` : json);
    return;
  }
  if (stops.by !== undefined) {
    const code = INTERRUPTED[stops.by] ?? 1;
    await new Promise<void>((done) => terminal.stderr.write(`Interrupted after ${summary}. ${next}\n${json}`, () => done()));
    process.exit(code);
  }
  if (json !== '') terminal.stderr.write(json);
  if (stops.outputError !== undefined)
    throw new Error(`could not write to ${where} (${errorText(stops.outputError)}) after ${summary}. ${next}`);
  // Nothing written: the same command starts at the same place; the error as it is (a usage mistake exits 2).
  if (count === 0) throw failure;
  throw new Error(`${errorText(failure)}. Stopped after ${summary}. ${next}`);
}

async function runExport(kind: Kind, context: CommandContext, flags: ExportFlags, command: Command): Promise<void> {
  const { terminal } = context;
  const global = context.options(command);
  const format = exportFormat(global.format, flags.out);
  const take = flags.take === undefined ? 100 : integer('take', flags.take, 1, 100);
  const filters: Row = {};
  for (const { key } of kind.filters) if (flags[key] !== undefined) filters[key] = flags[key];
  const range = createdRange(flags);
  if (range && kind.created === 'service') Object.assign(filters, posDates(flags));
  const summaryJson = summaryFormat(flags.summary);
  // The settings are checked here, so that a missing key is said at once, not by the worker.
  context.client(command);
  if (flags.resume !== undefined && flags.out !== undefined) await checkWholeLines(flags.out);

  const where = flags.out === undefined ? 'stdout' : flags.out;
  const job: PageJob = {
    kind: kind.name,
    settings: context.settings(command),
    params: { ...filters, take, ...(flags.resume === undefined ? {} : { cursor: flags.resume }) },
    format,
    created: kind.created === 'cli' ? range : undefined,
  };
  const run: ExportRun = { kind, terminal, flags, format, summaryJson, job, stops: stopsFor(terminal, where) };
  const written: Written = {
    count: 0,
    pages: 0,
    total: undefined,
    cursor: flags.resume,
    output: undefined,
    complete: false,
    failure: undefined,
  };
  const started = performance.now();
  const showBar = Boolean(terminal.stderr.isTTY) && (flags.out !== undefined || !terminal.stdout.isTTY);
  const bar = progress(terminal, showBar, () =>
    progressLine(
      kind.noun,
      written.count,
      written.total,
      (performance.now() - started) / 1000,
      terminal.stderr.columns ?? 80,
      flags.resume !== undefined,
    ),
  );
  try {
    await writePages(run, written);
  } finally {
    bar.stop();
  }
  // Still listening for Ctrl-C while the file is flushed and closed: the default would kill the process mid-write.
  await closeOutput(written, run.stops);
  run.stops.release();
  await reportExport(run, written, where, performance.now() - started, (cursor) => resumeCommand(kind, global, format, flags, cursor));
}

/** Adds `export sessions|pos|modifications` to the program. */
export function registerExport(program: Command, context: CommandContext): void {
  const exporter = program
    .command('export')
    .description('stream every matching record to CSV or NDJSON, in constant memory; Ctrl-C prints a cursor to --resume from');
  for (const kind of KINDS) {
    const command = exporter
      .command(kind.name)
      .description(kind.description)
      .option('--out <file>', 'write to FILE instead of stdout (appended to with --resume)')
      .option('--resume <cursor>', 'start at this cursor, as printed by an interrupted export; no CSV header unless the file is empty')
      .option('--take <n>', 'page size, 1 to 100 (default 100)');
    for (const filter of kind.filters) command.option(filter.flags, filter.description);
    const created = createdHelp(kind.created);
    command
      .option('--created-from <date>', created.from)
      .option('--created-to <date>', created.to)
      .option('--summary <format>', 'json: end with one JSON line { rows, pages, durationMs } on stderr instead of the summary sentence');
    command.addHelpText(
      'after',
      `\n${created.note}\n` +
        'Format: --format csv or ndjson; default CSV when --out ends in .csv, else NDJSON. Data on stdout or in --out,\n' +
        'progress and the summary on stderr. Exit 0 when complete, 1 on a failure (with the cursor to resume from), 130 on Ctrl-C.\n',
    );
    command.action((flags: ExportFlags, self: Command) => runExport(kind, context, flags, self));
  }
}
