/**
 * The API key from somewhere other than the command line, so that it never shows in a process list:
 * a file (`--api-key-file PATH`, `PAYMENT_SERVICE_API_KEY_FILE`) or stdin (`--api-key -`). One
 * trailing newline is dropped; what was read is never part of a message.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { EXIT, ExitError, type Terminal } from './io.js';
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
export function readKeyFile(path: string, origin: string): string {
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
export async function readKeyFromStdin(terminal: Terminal, noInput: boolean): Promise<string> {
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
