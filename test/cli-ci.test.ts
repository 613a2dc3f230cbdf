/**
 * The CLI in CI: nothing ever asks under `--no-input` or with stdin off a terminal, the API key from
 * a file (`--api-key-file`, `PAYMENT_SERVICE_API_KEY_FILE`) or stdin (`--api-key -`) so that it is
 * never in a process list, and `sandbox --ready-file`. The built bin against sandboxes on 127.0.0.1;
 * what only a terminal shows, in tmux.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../src/index.js';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import { buildOnce, cliEnv, killAll, run } from './sandbox/cli-process.js';
import { hasTmux, inTmux, quietly } from './support/tmux.js';

const KEYS = { test: 'sk_test_ci_4b1d9e', live: 'sk_live_ci_7c2a0f' };
let sandbox: Sandbox;
const dirs: string[] = [];
const tmuxSessions: string[] = [];

beforeAll(async () => {
  buildOnce();
  sandbox = createSandbox({ posDelayMs: 0, keys: KEYS });
  await sandbox.listen();
}, 60_000);
afterAll(async () => {
  killAll();
  for (const name of tmuxSessions) quietly('tmux', ['kill-session', '-t', name]);
  await sandbox.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cli-ci-'));
  dirs.push(dir);
  return dir;
}

/** The sandbox's webcode and address, no key (each test gives it its own way), no profile file. */
function envFor(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return cliEnv(join(tempDir(), 'config.json'), {
    PAYMENT_SERVICE_WEBCODE: sandbox.webcode,
    PAYMENT_SERVICE_BASE_URL: sandbox.baseUrl,
    ...extra,
  });
}

async function cli(args: string[], options: { env?: Record<string, string | undefined>; input?: string; openStdin?: boolean } = {}) {
  const started = run(args, {
    env: envFor(options.env),
    ...(options.input === undefined ? {} : { input: options.input }),
    openStdin: options.openStdin ?? false,
  });
  const { code } = await started.exit;
  return { code, stdout: started.stdout(), stderr: started.stderr(), spawnargs: started.child.spawnargs };
}

function keyFile(content: string): string {
  const path = join(tempDir(), 'api-key');
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

const SESSION = ['sessions', 'create', '--amount', '2599', '--url-ok', 'https://shop.example/ok', '--url-ko', 'https://shop.example/ko'];
const count = (environment: 'test' | 'live') => sandbox.records.sessions({ environment }).length;

describe('nothing ever asks off a terminal or under --no-input', () => {
  it('a Live write without --yes exits 2 with one line naming --yes, sends nothing, and never waits on an open stdin', async () => {
    const before = count('live');
    for (const [flags, why] of [
      [['--no-input'], /under --no-input/],
      [[], /when stdin is not a terminal/],
    ] as const) {
      // stdin is a pipe nobody writes to or closes: a prompt reading it would never end.
      const refused = await cli([...flags, '--env', 'live', ...SESSION], { env: { PAYMENT_SERVICE_API_KEY: KEYS.live }, openStdin: true });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toMatch(/^payment-service-sdk: Creating a session of 2599 cents in Live needs --yes /);
      expect(refused.stderr).toMatch(why);
      expect(refused.stderr).not.toMatch(/Continue\?/);
      expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(refused.stdout).toBe('');
    }
    expect(count('live')).toBe(before);
    const done = await cli(['--no-input', '--yes', '--env', 'live', ...SESSION], { env: { PAYMENT_SERVICE_API_KEY: KEYS.live } });
    expect(done.code, done.stderr).toBe(0);
    expect(count('live')).toBe(before + 1);
  });

  it('--help lists --no-input, --api-key -, --api-key-file, and sandbox --ready-file', async () => {
    const root = (await cli(['--help'])).stdout;
    expect(root).toMatch(/--no-input +never ask anything \(implied when stdin is not a terminal\)/);
    expect(root).toMatch(/--api-key <key> +API key, or - to read it from stdin/);
    expect(root).toMatch(/--api-key-file <path> +read the API key from a file/);
    expect((await cli(['sandbox', '--help'])).stdout).toMatch(/--ready-file <path> +once listening, write baseUrl/);
  });
});

describe('the API key from a file', () => {
  it('--api-key-file reads the key, once, dropping one trailing newline, and the write goes through', async () => {
    const before = count('test');
    for (const content of [KEYS.test, `${KEYS.test}\n`, `${KEYS.test}\r\n`]) {
      const result = await cli(['--api-key-file', keyFile(content), ...SESSION]);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).sessionId).toMatch(/-EXTT-/);
    }
    // A file that can be read only once (a FIFO, as /dev/stdin of a shell pipe), though the settings are looked at more than once.
    const fifo = join(tempDir(), 'key.fifo');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const started = run(['--api-key-file', fifo, ...SESSION], { env: envFor() });
    createWriteStream(fifo).end(`${KEYS.test}\n`);
    expect((await started.exit).code, started.stderr()).toBe(0);
    expect(count('test')).toBe(before + 4);
  });

  it('a missing, empty, unreadable or malformed file is one line, exit 2, nothing sent, and its content is never printed', async () => {
    const before = count('test');
    const dir = tempDir();
    const secretish = 'not-a-key with spaces';
    const cases: [string, RegExp][] = [
      [join(dir, 'absent'), /absent: no such file$/],
      [keyFile(''), /is empty: it must hold the API key$/],
      [keyFile('\n'), /is empty: it must hold the API key$/],
      [keyFile(`${KEYS.test}\n\n`), /must hold only the API key: visible ASCII characters, no spaces, at most one trailing newline$/],
      [keyFile(`${secretish}\n`), /must hold only the API key/],
      [dir, /is a directory, not a file$/],
      ['-', /is not a file: --api-key - reads the key from stdin$/],
    ];
    if (process.getuid?.() !== 0) {
      const locked = keyFile(KEYS.test);
      writeFileSync(locked, KEYS.test, { mode: 0o000 });
      cases.push([locked, /cannot be read \(permission denied\)$/]);
    }
    for (const [path, message] of cases) {
      const result = await cli(['--api-key-file', path, ...SESSION]);
      expect(result.code, path).toBe(2);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines, result.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^payment-service-sdk: --api-key-file ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      expect(lines[0]).toMatch(message);
      expect(result.stderr).not.toContain(secretish);
      expect(result.stderr).not.toContain(KEYS.test);
    }
    expect(count('test')).toBe(before);
  });

  it('PAYMENT_SERVICE_API_KEY_FILE is the variable twin; config show names it; with PAYMENT_SERVICE_API_KEY too it is refused', async () => {
    const path = keyFile(`${KEYS.test}\n`);
    expect((await cli(['terminals', 'list'], { env: { PAYMENT_SERVICE_API_KEY_FILE: path } })).code).toBe(0);
    const shown = await cli(['config', 'show', '--format', 'json'], { env: { PAYMENT_SERVICE_API_KEY_FILE: path } });
    expect(JSON.parse(shown.stdout)).toContainEqual({
      setting: 'apiKey',
      value: `****${KEYS.test.slice(-4)}`,
      from: 'PAYMENT_SERVICE_API_KEY_FILE',
    });
    expect(shown.stdout).not.toContain(KEYS.test);
    const flagged = await cli(['--api-key-file', path, 'config', 'show', '--format', 'json'], {
      env: { PAYMENT_SERVICE_API_KEY_FILE: join(tempDir(), 'absent') },
    });
    expect(JSON.parse(flagged.stdout)).toContainEqual({ setting: 'apiKey', value: `****${KEYS.test.slice(-4)}`, from: '--api-key-file' });
    const missing = await cli(['terminals', 'list'], { env: { PAYMENT_SERVICE_API_KEY_FILE: join(tempDir(), 'absent') } });
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toMatch(/^payment-service-sdk: PAYMENT_SERVICE_API_KEY_FILE \S+absent: no such file\n$/);
    const both = await cli(['terminals', 'list'], { env: { PAYMENT_SERVICE_API_KEY: KEYS.test, PAYMENT_SERVICE_API_KEY_FILE: path } });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/PAYMENT_SERVICE_API_KEY and PAYMENT_SERVICE_API_KEY_FILE are both set: keep one/);
    const twice = await cli(['--api-key', KEYS.test, '--api-key-file', path, 'terminals', 'list']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/give the API key once: --api-key or --api-key-file/);
  });
});

describe('the API key on stdin: --api-key -', () => {
  it('reads the piped key; the key is in neither the spawned arguments nor the process list, and the write goes through', async () => {
    const before = count('test');
    const started = run(['--api-key', '-', ...SESSION], { env: envFor(), openStdin: true });
    await once(started.child, 'spawn');
    expect(started.child.spawnargs).toContain('-');
    expect(started.child.spawnargs.join(' ')).not.toContain(KEYS.test);
    // What `ps` shows, while the CLI waits for the key.
    const cmdline = `/proc/${started.child.pid}/cmdline`;
    if (existsSync(cmdline)) {
      const shown = readFileSync(cmdline, 'utf8');
      expect(shown).toContain('--api-key');
      expect(shown).not.toContain(KEYS.test);
    }
    started.child.stdin?.end(`${KEYS.test}\n`);
    const { code } = await started.exit;
    expect(code, started.stderr()).toBe(0);
    expect(JSON.parse(started.stdout()).sessionId).toMatch(/-EXTT-/);
    expect(count('test')).toBe(before + 1);
    const shown = await cli(['--api-key', '-', 'config', 'show', '--format', 'json'], { input: KEYS.test });
    expect(JSON.parse(shown.stdout)).toContainEqual({
      setting: 'apiKey',
      value: `****${KEYS.test.slice(-4)}`,
      from: 'stdin (--api-key -)',
    });
    expect(shown.stdout).not.toContain(KEYS.test);
  });

  it('an empty stdin, --api-key-file as well, or a Live write wanting to ask: exit 2, nothing sent', async () => {
    const before = count('test') + count('live');
    const empty = await cli(['--api-key', '-', ...SESSION]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe('payment-service-sdk: the API key on stdin (--api-key -) is empty: it must hold the API key\n');
    const twice = await cli(['--api-key', '-', '--api-key-file', keyFile(KEYS.test), ...SESSION], { input: KEYS.test });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/give the API key once/);
    // The key took stdin: the confirmation cannot have it too.
    const live = await cli(['--api-key', '-', '--env', 'live', ...SESSION], { input: KEYS.live });
    expect(live.code).toBe(2);
    expect(live.stderr).toMatch(/in Live needs --yes when stdin is not a terminal: nothing was sent/);
    const big = await cli(['--api-key', '-', ...SESSION], { input: 'k'.repeat(5000) });
    expect(big.code).toBe(2);
    expect(big.stderr).toMatch(/more than 4096 bytes on stdin/);
    for (const result of [empty, twice, live, big]) expect(result.stderr).not.toMatch(/sk_(test|live)_ci|kkkk/);
    expect(count('test') + count('live')).toBe(before);
  });
});

describe.skipIf(!hasTmux && !process.env.CI)('on a terminal (tmux)', { timeout: 40_000 }, () => {
  function pane(args: string[], extra: Record<string, string | undefined> = {}) {
    const name = `cli-ci-${process.pid}-${tmuxSessions.length}`;
    tmuxSessions.push(name);
    return inTmux(name, args, envFor(extra));
  }

  it('--no-input: a Live write exits 2 naming --yes without asking, and nothing is sent', async () => {
    const before = count('live');
    const screen = await pane(['--no-input', '--env', 'live', ...SESSION], { PAYMENT_SERVICE_API_KEY: KEYS.live }).until(/\[exit \d+\]/);
    expect(screen).toMatch(/in Live needs --yes under --no-input: nothing was sent\n\[exit 2\]/);
    expect(screen).not.toMatch(/Continue\?/);
    expect(count('live')).toBe(before);
  });

  it('--api-key - asks for the key without echoing it, Ctrl-C ends it (130); under --no-input it is refused, never waited on', async () => {
    const before = count('test');
    const asked = pane(['--api-key', '-', ...SESSION]);
    await asked.until(/API key \(not shown\):/);
    asked.type(KEYS.test);
    const screen = await asked.until(/\[exit \d+\]/);
    expect(screen).toMatch(/\[exit 0\]/);
    expect(screen).not.toContain(KEYS.test);
    expect(count('test')).toBe(before + 1);

    const refused = await pane(['--no-input', '--api-key', '-', ...SESSION]).until(/\[exit \d+\]/);
    expect(refused).toMatch(/--api-key - reads the key from stdin, a terminal, and nothing is asked under --no-input/);
    expect(refused).toMatch(/\[exit 2\]/);

    const interrupted = pane(['--api-key', '-', ...SESSION]);
    await interrupted.until(/API key \(not shown\):/);
    interrupted.press('C-c');
    expect(await interrupted.until(/\[exit \d+\]/)).toMatch(/^payment-service-sdk: interrupted: nothing was sent\n\[exit 130\]/m);
    expect(count('test')).toBe(before + 1);
  });
});

interface ReadyFile {
  baseUrl: string;
  webcode: string;
  keys: { test: string; live: string };
  clientSecrets: { test: string; live: string };
  dashboardUrl: string;
  pid: number;
}

/** Resolves once `text()` includes `part` (the sandbox writes the file first, then stdout, then the banner). */
async function until(text: () => string, part: string): Promise<void> {
  for (let polls = 0; !text().includes(part); polls++) {
    if (polls > 300) throw new Error(`never got ${part}: ${text()}`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

/** Starts `sandbox --port 0 --ready-file <path> ...args`, and resolves with the file's JSON once it is there. */
async function startWithReadyFile(path: string, args: string[] = []) {
  const started = run(['sandbox', '--port', '0', '--ready-file', path, ...args]);
  const stale = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  for (let polls = 0; polls < 1_000; polls++) {
    const text = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    // Whenever it is there, it is either what an earlier run left, or whole: never half written.
    if (text !== undefined && text !== stale) {
      const ready = JSON.parse(text) as ReadyFile;
      expect(ready.pid).toBe(started.child.pid);
      return { ...started, ready };
    }
    if (started.child.exitCode !== null) throw new Error(`the sandbox exited: ${started.stderr()}`);
    await new Promise((done) => setTimeout(done, 10));
  }
  throw new Error(`no ready file at ${path}; stderr: ${started.stderr()}`);
}

describe('sandbox --ready-file', () => {
  it('appears once the sandbox answers, whole, mode 0600, with every field; drives the SDK; SIGTERM removes it', async () => {
    const dir = tempDir();
    const path = join(dir, 'sandbox.json');
    writeFileSync(path, '{"left":"by an earlier run"}');
    const running = await startWithReadyFile(path);
    const { ready } = running;
    // Answers at once: the file is written after the server listens.
    const client = new PaymentClient({ apiKey: ready.keys.test, webcode: ready.webcode, baseUrl: ready.baseUrl, maxRetries: 0 });
    const session = await client.sessions.create({
      amount: { value: 2599, currency: 'EUR' },
      urlOk: 'https://shop.example/ok',
      urlKo: 'https://shop.example/ko',
    });
    expect(session.paymentUrl.startsWith(`${ready.baseUrl}/pay-external-test/`)).toBe(true);
    const live = new PaymentClient({
      apiKey: ready.keys.live,
      webcode: ready.webcode,
      baseUrl: ready.baseUrl,
      environment: 'live',
      maxRetries: 0,
    });
    expect((await live.terminals.list()).length).toBeGreaterThan(0);

    expect(ready).toEqual({
      baseUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      webcode: 'SANDBOX',
      keys: { test: 'sk_test_sandbox', live: 'sk_live_sandbox' },
      clientSecrets: { test: 'cs_test_sandbox', live: 'cs_live_sandbox' },
      dashboardUrl: `${ready.baseUrl}/`,
      pid: running.child.pid,
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['sandbox.json']);
    expect((await fetch(ready.dashboardUrl)).status).toBe(200);
    // The stdout line says the same.
    await until(running.stdout, '\n');
    const line = JSON.parse(running.stdout().split('\n')[0] ?? '');
    expect(line).toEqual({ baseUrl: ready.baseUrl, webcode: ready.webcode, keys: ready.keys, clientSecrets: ready.clientSecrets });

    running.child.kill('SIGTERM');
    expect(await running.exit).toEqual({ code: 0, signal: null });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('beyond loopback it holds the random keys and the dashboard link with its token; SIGINT removes it', async () => {
    const dir = tempDir();
    const path = join(dir, 'ready.json');
    const running = await startWithReadyFile(path, ['--host', '0.0.0.0']);
    const { ready } = running;
    expect(ready.keys.test).toMatch(/^sk_test_[\w-]{24}$/);
    const token = new URL(ready.dashboardUrl).searchParams.get('token') ?? '';
    expect(token).toMatch(/^[\w-]{24}$/);
    await until(running.stderr, ready.dashboardUrl);
    const { port } = new URL(ready.baseUrl);
    const local = (query: string) => fetch(`http://127.0.0.1:${port}/${query}`, { redirect: 'manual' });
    expect((await local('')).status).toBe(401);
    expect((await local(`?token=${token}`)).status).toBe(303);
    const client = new PaymentClient({
      apiKey: ready.keys.test,
      webcode: ready.webcode,
      baseUrl: `http://127.0.0.1:${port}`,
      maxRetries: 0,
    });
    expect((await client.terminals.list()).length).toBeGreaterThan(0);
    running.child.kill('SIGINT');
    expect(await running.exit).toEqual({ code: 0, signal: null });
    expect(existsSync(path)).toBe(false);
  });

  it('is never written when the sandbox cannot listen (a port in use), and a stale one is removed; a missing folder is exit 2', async () => {
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const address = taken.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const dir = tempDir();
      const path = join(dir, 'ready.json');
      writeFileSync(path, '{"left":"by an earlier run"}');
      const busy = run(['sandbox', '--port', String(port), '--ready-file', path]);
      expect((await busy.exit).code).toBe(1);
      expect(busy.stderr()).toMatch(/port \d+ is in use/);
      // No ready file; what `sandbox wait` reads to say why at once: the pid and the reason.
      expect(readdirSync(dir)).toEqual(['ready.json.starting']);
      expect(JSON.parse(readFileSync(join(dir, 'ready.json.starting'), 'utf8'))).toEqual({
        pid: busy.child.pid,
        failed: expect.stringMatching(/^port \d+ is in use/),
      });
    } finally {
      await new Promise((done) => taken.close(done));
    }
    const nowhere = join(tempDir(), 'absent', 'ready.json');
    const missing = run(['sandbox', '--port', '0', '--ready-file', nowhere]);
    expect((await missing.exit).code).toBe(2);
    expect(missing.stderr()).toMatch(/^payment-service-sdk: --ready-file \S+: the folder \S+absent does not exist\n$/);
    expect(missing.stdout()).toBe('');
  });
});
