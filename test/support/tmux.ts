/**
 * The built CLI on a real terminal: a detached tmux session per run, its screen read back. The
 * child's `PAYMENT_SERVICE_*` and `NO_COLOR` come from `env` (no `NO_COLOR` there: unset).
 */
import { execFileSync } from 'node:child_process';
import { CLI, ROOT } from '../sandbox/cli-process.js';

export interface Pane {
  /** The screen's text; `escapes` keeps colours and attributes. */
  screen(escapes?: boolean): string;
  /** Waits (up to 20 s) for the screen to match, and returns it. */
  until(pattern: RegExp, escapes?: boolean): Promise<string>;
  /** Types `keys` and Enter. */
  type(keys: string): void;
  /** Presses one key (`C-c`, ...). */
  press(key: string): void;
}

export function quietly(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

export const hasTmux = quietly('tmux', ['-V']).startsWith('tmux');

/** Runs the bin with `args` in a new tmux session `name`; `[exit N]` shows on the screen when it ends. */
export function inTmux(name: string, args: string[], env: NodeJS.ProcessEnv): Pane {
  const exports = Object.entries(env)
    .filter(([key]) => key.startsWith('PAYMENT_SERVICE_') || key === 'NO_COLOR')
    .map(([key, value]) => `${key}='${value ?? ''}'`)
    .join(' ');
  const unset = env.NO_COLOR === undefined ? 'unset NO_COLOR;' : '';
  const command = `${unset} env ${exports} '${process.execPath}' '${CLI}' ${args.map((arg) => `'${arg}'`).join(' ')}; echo "[exit $?]"; sleep 30`;
  execFileSync('tmux', ['new-session', '-d', '-s', name, '-x', '200', '-y', '50', '-c', ROOT, command]);
  const screen = (escapes = false) => quietly('tmux', ['capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', name]);
  const until = async (pattern: RegExp, escapes = false) => {
    for (let index = 0; index < 400; index++) {
      const text = screen(escapes);
      if (pattern.test(text)) return text;
      await new Promise((done) => setTimeout(done, 50));
    }
    throw new Error(`tmux screen never matched ${pattern}:\n${screen(escapes)}`);
  };
  const type = (keys: string) => execFileSync('tmux', ['send-keys', '-t', name, keys, 'Enter']);
  const press = (key: string) => execFileSync('tmux', ['send-keys', '-t', name, key]);
  return { screen, until, type, press };
}
