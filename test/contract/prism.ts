/**
 * Prism's validating proxy (`prism proxy --errors`, @stoplight/prism-cli) as a child process in
 * front of a sandbox: started on a free 127.0.0.1 port, its output kept to be scanned for violation
 * lines, stopped by its pid. It runs on this Node when that is 24 or later (Prism 5.16 requires
 * it), else on the Node 24 pinned as a devDependency (when vitest itself runs on Node 22), with
 * scripts/loopback-only.cjs preloaded, so it can connect to nothing but loopback.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const PRISM_CLI = require.resolve('@stoplight/prism-cli/dist/index.js');
const LOOPBACK_ONLY = join(import.meta.dirname, '../../scripts/loopback-only.cjs');
const PRISM_NODE =
  Number(process.versions.node.split('.')[0]) >= 24 ? process.execPath : join(require.resolve('node/package.json'), '..', 'bin', 'node');

/** Lines of Prism's log that report a broken request or answer. */
export const VIOLATION_LINE =
  /violation|VIOLATIONS|UNPROCESSABLE_ENTITY|NO_PATH_MATCHED|NO_METHOD_MATCHED|UNAUTHORIZED|Request terminated with error|loopback-only/i;

export interface Prism {
  /** `http://127.0.0.1:<port>`, to use as the SDK's `baseUrl`. */
  origin: string;
  /** Everything Prism printed so far. */
  output(): string;
  /** The lines of {@link output} that report a violation. */
  violationLines(): string[];
  /** Resolves once a violation line was logged (Prism logs after answering); rejects after `ms`. */
  violationLogged(ms?: number): Promise<void>;
  /** Stops it (SIGTERM, then SIGKILL after 5 s); resolves once it exited. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts `prism proxy --errors document upstream`; rejects if it is not listening within `startMs`. */
export async function startPrism(document: string, upstream: string, startMs = 30_000): Promise<Prism> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1' };
  // Prism is told its upstream; no proxy variable may send it anywhere else.
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy']) delete env[name];
  const child: ChildProcess = spawn(
    PRISM_NODE,
    ['--require', LOOPBACK_ONLY, PRISM_CLI, 'proxy', '--errors', document, upstream, '--host', '127.0.0.1', '--port', String(port)],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const readers = new Set<() => void>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const listening = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not listen within ${startMs} ms:\n${output}`)), startMs);
    const read = (chunk: string) => {
      output += chunk;
      for (const reader of readers) reader();
      if (output.includes('Prism is listening on')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.setEncoding('utf8').on('data', read);
    child.stderr?.setEncoding('utf8').on('data', read);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`Prism exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };
  try {
    await listening;
  } catch (error) {
    await stop();
    throw error;
  }
  const violationLines = () => output.split('\n').filter((line) => VIOLATION_LINE.test(line));
  return {
    origin: `http://127.0.0.1:${port}`,
    output: () => output,
    violationLines,
    violationLogged: (ms = 5_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (violationLines().length === 0) return;
          readers.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          readers.delete(check);
          reject(new Error(`Prism logged no violation within ${ms} ms`));
        }, ms);
        readers.add(check);
        check();
      }),
    stop,
  };
}
