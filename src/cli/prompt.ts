/**
 * The CLI's only way to ask the person at the terminal something. Nothing asks under `--no-input`
 * or when stdin is not a terminal: a script or a CI job gets an error naming the flag instead,
 * and is never left waiting on stdin.
 */
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { ExitError, type Terminal } from './io.js';

/** Exit code of a prompt ended with Ctrl-C, as a shell reports SIGINT. */
const INTERRUPTED = 130;

/**
 * Why the CLI may not ask here, as the end of a sentence (`under --no-input`), or `undefined` when
 * it may: a question needs stdin to answer it and stderr to show it, both terminals.
 */
export function whyNotAsk(terminal: Terminal, noInput: boolean): string | undefined {
  if (noInput) return 'under --no-input';
  if (!terminal.stdin.isTTY) return 'when stdin is not a terminal';
  if (!terminal.stderr.isTTY) return 'when stderr is not a terminal';
  return undefined;
}

/**
 * Asks `question` on stderr and resolves with the line typed. `hidden` echoes nothing (a secret).
 * Ctrl-C ends the command (exit 130). Callers check {@link whyNotAsk} first.
 */
export async function ask(terminal: Terminal, question: string, options: { hidden?: boolean } = {}): Promise<string> {
  // Hidden: readline still edits the line in raw mode, but its echo goes nowhere.
  const output = options.hidden ? new Writable({ write: (_chunk, _encoding, done) => done() }) : terminal.stderr;
  if (options.hidden) terminal.stderr.write(question);
  const prompt = createInterface({ input: terminal.stdin, output, terminal: Boolean(terminal.stdin.isTTY) });
  const interrupted = new Promise<never>((_, fail) =>
    prompt.once('SIGINT', () => fail(new ExitError('interrupted: nothing was sent', INTERRUPTED))),
  );
  let answered = false;
  try {
    const answer = await Promise.race([prompt.question(options.hidden ? '' : question), interrupted]);
    answered = true;
    return answer;
  } finally {
    prompt.close();
    // The typed line's Enter was not echoed (hidden), or Ctrl-C left the cursor after the question.
    if (options.hidden || !answered) terminal.stderr.write('\n');
  }
}
