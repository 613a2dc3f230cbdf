/**
 * The API key from somewhere other than the command line, so that it never shows in a process list:
 * a file (`--api-key-file PATH`, `PAYMENT_SERVICE_API_KEY_FILE`) or stdin (`--api-key -`). One
 * trailing newline is dropped; what was read is never part of a message.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { ENV_NAMES } from './config.js';
import { EXIT, ExitError, type Terminal, UsageError } from './io.js';
import { ask, whyNotAsk } from './prompt.js';

/** `--api-key -`: the key is read from stdin. */
export const STDIN = '-';

/** The variable twin of `--api-key-file`. */
export const API_KEY_FILE_ENV = 'PAYMENT_SERVICE_API_KEY_FILE';

/** Far longer than any API key: a bigger input is something else, and is not read whole. */
const MAX_KEY_BYTES = 4096;

function refuse(message: string): never {
  throw new ExitError(message, EXIT.usage);
}

/** The key in `text` with one trailing newline (`\n` or `\r\n`) dropped; refused, never quoted, when it is not one. */
function keyOf(text: string, origin: string): string {
  const key = text.replace(/\r?\n$/, '');
  if (key === '') refuse(`${origin} is empty: it must hold the API key`);
  // The SDK would refuse such a key too, naming --api-key; say where it came from instead.
  if (!/^[\x21-\x7e]+$/.test(key))
    refuse(`${origin} must hold only the API key: visible ASCII characters, no spaces, at most one trailing newline`);
  return key;
}

const FILE_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'cannot be read (permission denied)',
  EPERM: 'cannot be read (permission denied)',
  EISDIR: 'is a directory, not a file',
  ENOTDIR: 'no such file (a part of the path is not a directory)',
};

/**
 * The key held in the file at `path`, read by `origin` (`--api-key-file`, the variable). A missing,
 * unreadable or empty file is a usage error (exit 2) that names the path, never the content.
 */
function readKeyFile(path: string, origin: string): string {
  const where = `${origin} ${path}`;
  if (path === STDIN) refuse(`${where} is not a file: --api-key - reads the key from stdin`);
  const buffer = Buffer.alloc(MAX_KEY_BYTES + 1);
  let length = 0;
  try {
    const fd = openSync(path, 'r');
    try {
      let read: number;
      do {
        read = readSync(fd, buffer, length, buffer.length - length, null);
        length += read;
      } while (read > 0 && length < buffer.length);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    refuse(`${where}: ${FILE_PROBLEMS[code] ?? `cannot be read (${code || 'unknown error'})`}`);
  }
  if (length > MAX_KEY_BYTES) refuse(`${where} is larger than ${MAX_KEY_BYTES} bytes: it must hold only the API key`);
  return keyOf(buffer.toString('utf8', 0, length), where);
}

/**
 * `--api-key -`: the key piped on stdin (read to its end), or typed at the terminal without echo.
 * A terminal on stdin when the CLI may not ask (`--no-input`) is refused, never waited on.
 */
async function readKeyFromStdin(terminal: Terminal, noInput: boolean): Promise<string> {
  const origin = 'the API key on stdin (--api-key -)';
  if (terminal.stdin.isTTY) {
    const why = whyNotAsk(terminal, noInput);
    if (why) refuse(`--api-key - reads the key from stdin, a terminal, and nothing is asked ${why}: pipe the key in or use --api-key-file`);
    return keyOf(await ask(terminal, 'API key (not shown): ', { hidden: true }), origin);
  }
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of terminal.stdin as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    chunks.push(bytes);
    length += bytes.length;
    if (length > MAX_KEY_BYTES) refuse(`more than ${MAX_KEY_BYTES} bytes on stdin: --api-key - expects only the API key`);
  }
  return keyOf(Buffer.concat(chunks).toString('utf8'), origin);
}

/** A key and where it came from, as `config show` says it. */
export interface SourcedKey {
  key: string;
  source: string;
}

/**
 * The API key of one run given by `--api-key`, `--api-key-file`, `--api-key -` or
 * `PAYMENT_SERVICE_API_KEY_FILE`. Each source is read once: stdin and a file such as `/dev/stdin`
 * cannot be read twice, and the settings are looked at more than once per command.
 */
export class KeySource {
  #fromStdin: string | undefined;
  readonly #files = new Map<string, string>();

  constructor(private readonly terminal: Terminal) {}

  /** Reads stdin for `--api-key -` (before the command runs: it is asynchronous). */
  async readStdin(flags: { apiKey?: string | undefined; apiKeyFile?: string | undefined }, noInput: boolean): Promise<void> {
    if (flags.apiKey === STDIN && flags.apiKeyFile === undefined && this.#fromStdin === undefined)
      this.#fromStdin = await readKeyFromStdin(this.terminal, noInput);
  }

  /**
   * The key of the flags, else of `PAYMENT_SERVICE_API_KEY_FILE` when `PAYMENT_SERVICE_API_KEY` is
   * not set; `undefined` leaves it to the variable and the profile. Two sources at one level are refused.
   */
  resolve(flags: { apiKey?: string | undefined; apiKeyFile?: string | undefined }): SourcedKey | undefined {
    const env = this.terminal.env;
    if (flags.apiKey !== undefined && flags.apiKeyFile !== undefined)
      throw new UsageError('give the API key once: --api-key or --api-key-file');
    if (flags.apiKeyFile !== undefined) return { key: this.#file(flags.apiKeyFile, '--api-key-file'), source: '--api-key-file' };
    if (flags.apiKey === STDIN) {
      if (this.#fromStdin === undefined) throw new Error('--api-key -: stdin was not read before the command ran');
      return { key: this.#fromStdin, source: 'stdin (--api-key -)' };
    }
    if (flags.apiKey) return { key: flags.apiKey, source: 'flag' };
    const file = env[API_KEY_FILE_ENV];
    if (!file) return undefined;
    if (env[ENV_NAMES.apiKey]) throw new UsageError(`${ENV_NAMES.apiKey} and ${API_KEY_FILE_ENV} are both set: keep one`);
    return { key: this.#file(file, API_KEY_FILE_ENV), source: API_KEY_FILE_ENV };
  }

  #file(path: string, origin: string): string {
    let key = this.#files.get(path);
    if (key === undefined) {
      key = readKeyFile(path, origin);
      this.#files.set(path, key);
    }
    return key;
  }
}
