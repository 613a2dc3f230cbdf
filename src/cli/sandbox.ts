/**
 * `payment-service-sdk sandbox`: the sandbox as a real HTTP server. One JSON line on stdout
 * (`baseUrl`, `webcode`, `keys`, `clientSecrets`), a banner on stderr, a stderr line per failed
 * webhook attempt, and a clean stop on SIGINT or SIGTERM; `--ready-file` writes the same and more to a file.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { hostName, isLoopbackName, publicOrigin } from '../sandbox/http/access.js';
import { createSandbox, type Sandbox, type SandboxOptions, type WebhookAttemptReport } from '../sandbox/index.js';
import { checkStore } from '../sandbox/store.js';
import { addFaultRules, readFaultsFile } from './faults-file.js';
import { EXIT, ExitError, httpUrl, type Terminal, UsageError } from './io.js';
import { markStartFailed, prepareReadyFile, removeReadyFile, writeReadyFile } from './ready-file.js';
import { describeVariables, withVariables } from './sandbox-env.js';
import { registerSandboxImage } from './sandbox-image.js';
import { registerSandboxSecret } from './sandbox-secret.js';
import { registerSandboxTerminal, type SandboxCommandContext } from './sandbox-terminal.js';
import { registerSandboxWait } from './sandbox-wait.js';

export function integer(name: string, value: string, min: number, max: number): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < min || number > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return number;
}

function delay(value: string): number | [number, number] {
  const range = /^(\d+)-(\d+)$/.exec(value);
  if (!range) return integer('pos-delay-ms', value, 0, 600_000);
  const [min, max] = [integer('pos-delay-ms', range[1] ?? '', 0, 600_000), integer('pos-delay-ms', range[2] ?? '', 0, 600_000)];
  if (min > max) throw new UsageError('--pos-delay-ms MIN-MAX needs MIN <= MAX');
  return [min, max];
}

/** One stderr line for a webhook attempt that failed: where, why, and what happens next. */
export function failedAttemptLine({ delivery, attempt, nextAttemptAt }: WebhookAttemptReport, now: number): string | undefined {
  if (delivery.delivered) return undefined;
  const about = [delivery.event.event_code, delivery.event.data.paymentReference].filter((part) => typeof part === 'string').join(' ');
  const why = attempt.status === null ? (attempt.error ?? 'no answer') : `HTTP ${attempt.status}`;
  // Rounded up: a line printed a moment after the retry was scheduled still says its delay (1 s, not 0 s).
  const next =
    nextAttemptAt === null ? 'no retries left, abandoned' : `next retry in ${Math.max(0, Math.ceil((nextAttemptAt - now) / 1000))} s`;
  return `webhook ${delivery.id} (${about}) to ${delivery.url} failed: ${why}, attempt ${delivery.attempts.length}; ${next}`;
}

/** Opens `url` with `$BROWSER` if set, else the platform's opener; says where it is either way. */
function openInBrowser(url: string, terminal: Terminal): void {
  const opener = terminal.env.BROWSER || (process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open');
  try {
    const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => terminal.stderr.write(`Could not start ${opener}: open ${url} yourself.\n`));
    child.unref();
  } catch {
    terminal.stderr.write(`Could not start ${opener}: open ${url} yourself.\n`);
  }
}

/** Whether `--host` is this machine's loopback interface only. */
function isLoopbackHost(host: string): boolean {
  const name = hostName(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);
  return name !== undefined && isLoopbackName(name);
}

/** A secret for a sandbox other machines can reach: 144 random bits, URL-safe. */
function secret(prefix: string): string {
  return `${prefix}${randomBytes(18).toString('base64url')}`;
}

/** `sandbox --check`: verifies the whole database file; one line either way, exit 1 on damage. */
function check(dataDir: string | undefined, terminal: Terminal): void {
  if (dataDir === undefined) throw new UsageError('--check needs --data-dir DIR (the folder of sandbox.db)');
  const { location, problems } = checkStore(dataDir);
  if (problems.length === 0) {
    terminal.stdout.write(`${location}: OK (every page checked)\n`);
    return;
  }
  throw new ExitError(
    `${location} is damaged: ${problems.join('; ')}. Stop the sandbox, move the file aside (mv ${location} ${location}.broken) and start it again.`,
    EXIT.failure,
  );
}

/** V8's semi-space for the sandbox process, in MB: its new space is two of them, 4 MB instead of up to 64 MB. */
const SANDBOX_SEMI_SPACE_MB = 2;

/**
 * Runs this same command again in this same process (`process.execve`: same pid, same streams)
 * with V8's young generation capped at {@link SANDBOX_SEMI_SPACE_MB}. Left to itself, V8 grows its
 * young generation to 32 MB per semi-space under the sandbox's stream of short-lived request
 * objects, and the old space after it: 150 to 250 MB of RSS for a heap that keeps 10 MB. The flag
 * only takes effect when given as node starts. Returns without doing anything where the command
 * cannot be run again as it was (not the bin's own command line, no `process.execve`: Node before
 * 22.15, Windows, other runtimes) or where the process already has a young-generation size.
 */
function restartWithSmallYoungGeneration(command: Command): void {
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  const script = process.argv[1];
  const own = process.argv.slice(2);
  // What commander parsed (its `rawArgs`, untyped): the bin's own arguments, or a program run in-process.
  const parsed: string[] = (command.parent as { rawArgs?: string[] } | null)?.rawArgs ?? [];
  if (typeof execve !== 'function' || script === undefined) return;
  if (parsed.length !== own.length || parsed.some((arg, index) => arg !== own[index])) return;
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (given.some((flag) => /^--(max-semi-space-size|max-heap-size|semi-space-growth-factor)\b/.test(flag.replaceAll('_', '-')))) return;
  try {
    execve(
      process.execPath,
      [process.execPath, `--max-semi-space-size=${SANDBOX_SEMI_SPACE_MB}`, ...process.execArgv, script, ...own],
      process.env,
    );
  } catch {
    // Not restarted: the sandbox runs with V8's defaults, using more memory.
  }
}

interface SandboxFlags {
  port: string;
  host: string;
  webcode?: string | undefined;
  testKey?: string;
  liveKey?: string;
  testSecret?: string;
  liveSecret?: string;
  webhookUrl?: string[];
  posDelayMs?: string;
  dataDir?: string;
  maxBodyBytes?: string;
  idempotencyTtlMs?: string;
  requestLogSize?: string;
  open?: boolean;
  reset?: boolean;
  allowedHost?: string[];
  check?: boolean;
  readyFile?: string;
  seed?: string;
  faults?: string;
  publicUrl?: string;
  trustedNetwork?: boolean;
}

/** The flags that may be given more than once (their variables hold lists). */
const REPEATABLE = new Set(['webhookUrl', 'allowedHost']);

/**
 * How long a stop may take in all: requests in flight get up to {@link Sandbox.close}'s second; a
 * webhook attempt still in flight (up to 10 s) is not waited for past this. Its job stays stored and
 * runs again at the next start; every write already answered is committed.
 */
const STOP_DEADLINE_MS = 1_500;

/** `--public-url`: an http(s) origin, checked as `createSandbox` checks `publicUrl`, refused as a usage error. */
function publicUrl(value: string): string {
  try {
    return publicOrigin(value, '--public-url');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The options of {@link createSandbox} the flags give; `exposed` makes unset keys and secrets random. */
function sandboxOptions(flags: SandboxFlags, exposed: boolean, dashboardToken: string | undefined): SandboxOptions {
  return {
    webcode: flags.webcode,
    keys: {
      test: flags.testKey ?? (exposed ? secret('sk_test_') : undefined),
      live: flags.liveKey ?? (exposed ? secret('sk_live_') : undefined),
    },
    clientSecrets: {
      test: flags.testSecret ?? (exposed ? secret('cs_test_') : undefined),
      live: flags.liveSecret ?? (exposed ? secret('cs_live_') : undefined),
    },
    allowedHosts: flags.allowedHost?.map((name) => {
      if (hostName(name) === undefined) throw new UsageError(`--allowed-host must be a host name, got ${name}`);
      return name;
    }),
    publicUrl: flags.publicUrl === undefined ? undefined : publicUrl(flags.publicUrl),
    dashboardToken,
    webhookUrls: (flags.webhookUrl ?? []).map((url) => httpUrl('webhook-url', url)),
    posDelayMs: flags.posDelayMs === undefined ? undefined : delay(flags.posDelayMs),
    dataDir: flags.dataDir,
    maxBodyBytes: flags.maxBodyBytes === undefined ? undefined : integer('max-body-bytes', flags.maxBodyBytes, 1, 2 ** 31),
    idempotencyTtlMs: flags.idempotencyTtlMs === undefined ? undefined : integer('idempotency-ttl-ms', flags.idempotencyTtlMs, 1, 2 ** 45),
    seed: flags.seed === undefined ? undefined : integer('seed', flags.seed, 0, 2 ** 32 - 1),
    requestLogSize: flags.requestLogSize === undefined ? undefined : integer('request-log-size', flags.requestLogSize, 0, 2 ** 31),
  };
}

/**
 * Stops on SIGINT or SIGTERM (`docker stop`): no new request, those in flight finish, the store
 * closes, exit 0, with one stderr line saying so; past {@link STOP_DEADLINE_MS} it exits 0 anyway.
 */
function stopOnSignals(instance: Sandbox, terminal: Terminal, readyFile: string | undefined): void {
  const stop = (signal: NodeJS.Signals) => {
    const started = performance.now();
    // Stopped before it was ready: the waiter is told so, rather than left to its timeout.
    if (readyFile && !existsSync(readyFile)) markStartFailed(readyFile, `stopped by ${signal}`);
    else if (readyFile) removeReadyFile(readyFile);
    const took = () => `${Math.round(performance.now() - started)} ms`;
    setTimeout(() => {
      terminal.stderr.write(
        `Stopped on ${signal} after ${took()}, with webhook attempts still in flight (they run again at the next start).\n`,
      );
      process.exit(0);
    }, STOP_DEADLINE_MS).unref();
    void instance.close().then(() => {
      terminal.stderr.write(`Stopped on ${signal} in ${took()}: requests in flight answered, store closed.\n`);
      process.exit(0);
    });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** Where it listens, for the banner: the address and port, and what a wildcard means. */
function listening(flags: SandboxFlags, baseUrl: string, port: number): string {
  const wildcard = flags.host === '0.0.0.0' || flags.host === '::' || flags.host === '[::]';
  return wildcard || flags.publicUrl !== undefined
    ? `${baseUrl} (bound to ${flags.host}, port ${port === 0 ? new URL(baseUrl).port : port})`
    : baseUrl;
}

/** The stderr banner: where, the dashboard, the keys and secrets, webhooks, faults, state. */
function banner(
  flags: SandboxFlags,
  instance: Sandbox,
  text: { where: string; dashboardUrl: string; faultRules: number; exposed: boolean },
): string {
  const { baseUrl } = instance;
  const beyond = !isLoopbackHost(flags.host);
  return [
    ...(text.exposed
      ? [
          `Warning: listening on ${flags.host}, beyond loopback: other machines can reach this sandbox.`,
          '  Keys and client secrets are random unless given; the dashboard opens only with the link below (keep it private).',
        ]
      : beyond
        ? [
            `Listening on ${flags.host} with the documented keys (--trusted-network): publish its port only where you choose (-p 127.0.0.1:PORT:PORT).`,
          ]
        : []),
    `Payment service sandbox listening on ${text.where}`,
    `  dashboard ${text.dashboardUrl} (control API under ${baseUrl}/_sandbox/)`,
    `  webcode ${instance.webcode}`,
    `  Test: key ${instance.keys.test}, client secret ${instance.clientSecrets.test}`,
    `  Live: key ${instance.keys.live}, client secret ${instance.clientSecrets.live}`,
    `  webhooks: ${instance.webhookUrls.length > 0 ? instance.webhookUrls.join(', ') : 'none (add --webhook-url)'}`,
    ...(text.faultRules > 0 ? [`  fault rules: ${text.faultRules} from ${flags.faults} (GET ${baseUrl}/_sandbox/faults)`] : []),
    flags.dataDir
      ? `  state kept in ${instance.location}${flags.reset ? ' (reset at start)' : ''}`
      : '  state in memory (add --data-dir DIR to keep it)',
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

/** Adds `sandbox`, with `wait`, `image` and the running sandbox's `terminal` and `terminals` under it. */
export function registerSandbox(program: Command, context: SandboxCommandContext): void {
  const { terminal } = context;
  const command = program
    .command('sandbox')
    .description(
      "run a local emulator of the payment service: Test and Live paths, hosted payment page, webhooks, dashboard. Every flag is also a variable PAYMENT_SANDBOX_<FLAG> (a flag given wins; a repeatable flag's variable takes a list separated by commas or spaces; a switch's takes true or false)",
    )
    .option('--port <n>', 'port to listen on (0 picks a free one)', '4010')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--webcode <code>', 'business identifier bound to the keys (default SANDBOX)')
    .option('--test-key <key>', 'Test API key (default sk_test_sandbox)')
    .option('--live-key <key>', 'Live API key (default sk_live_sandbox)')
    .option('--test-secret <secret>', 'Test client secret, signs the redirect data (default cs_test_sandbox)')
    .option('--live-secret <secret>', 'Live client secret (default cs_live_sandbox)')
    .option('--webhook-url <url>', 'POST every webhook to URL (repeatable)', (value: string, all: string[] = []) => [...all, value])
    .option('--pos-delay-ms <ms>', 'simulated terminal time, N or MIN-MAX (default 2000-3000)')
    .option('--data-dir <dir>', 'keep the state in DIR/sandbox.db (SQLite) across restarts and crashes (default: memory only)')
    .option('--max-body-bytes <n>', 'largest request body accepted; larger ones get 413 (default 1048576)')
    .option('--idempotency-ttl-ms <ms>', 'how long stored idempotent responses are kept (default 86400000, 24 h)')
    .option('--request-log-size <n>', 'entries of the request log each tenant keeps, the newest; 0 turns the log off (default 10000)')
    .option('--open', 'open the dashboard in a browser ($BROWSER, or the system opener)')
    .option('--reset', 'start from empty: delete what --data-dir holds (records, deliveries, scheduled work, made tenants)')
    .option(
      '--allowed-host <name>',
      'also answer requests whose Host is NAME (repeatable; loopback names and the --host address always are)',
      (value: string, all: string[] = []) => [...all, value],
    )
    .option(
      '--public-url <url>',
      'the origin clients open the sandbox at (a published port, a proxy): every link it gives out starts with it (default: the address each request came to)',
    )
    .option(
      '--trusted-network',
      'beyond loopback, keep the documented keys, client secrets and an open dashboard: the network is yours (a container whose port you publish on 127.0.0.1)',
    )
    .option('--check', 'verify every page of --data-dir DIR/sandbox.db and exit (0 and one OK line, 1 if damaged)')
    .option(
      '--ready-file <path>',
      'once listening, write baseUrl, webcode, keys, clientSecrets, dashboardUrl and pid as JSON to PATH (mode 0600); removed on stop',
    )
    .option('--seed <n>', "seed of the sandbox's randomness: tokens, references, delays, fault rules' probability (default 1)")
    .option('--faults <file>', 'add the fault rules of FILE (a JSON array, the shape of POST /_sandbox/faults) at start');
  describeVariables(command);
  registerSandboxWait(command, terminal);
  registerSandboxImage(command, terminal);
  registerSandboxTerminal(command, context);
  registerSandboxSecret(command, context);
  command.action(async (own: SandboxFlags, self: Command) => {
    // `--webcode` is also a root option: whichever level took it, it is the sandbox's.
    const given: SandboxFlags = { ...own, webcode: own.webcode ?? self.optsWithGlobals<{ webcode?: string }>().webcode };
    const flags = withVariables(self, given, terminal.env, REPEATABLE);
    if (flags.check) return check(flags.dataDir, terminal);
    // From here a waiter (`sandbox wait`) learns the pid, and why the sandbox stopped if it does before it is ready.
    const readyFile = flags.readyFile === undefined ? undefined : prepareReadyFile(flags.readyFile);
    try {
      await serve(flags, self, terminal, readyFile);
    } catch (error) {
      if (readyFile && !existsSync(readyFile)) markStartFailed(readyFile, error instanceof Error ? error.message : String(error));
      throw error;
    }
  });
}

/** Starts the sandbox of `flags` and runs until a signal stops it. */
async function serve(flags: SandboxFlags, self: Command, terminal: Terminal, readyFile: string | undefined): Promise<never> {
  for (const name of ['testKey', 'liveKey', 'testSecret', 'liveSecret'] as const)
    if (flags[name] === '') throw new UsageError(`--${name.replace(/[A-Z]/, (letter) => `-${letter.toLowerCase()}`)} must not be empty`);
  const port = integer('port', flags.port, 0, 65_535);
  const faultRules = flags.faults === undefined ? [] : readFaultsFile(flags.faults);
  // Beyond loopback the well-known keys and an open dashboard would face the network, unless it is declared the user's own.
  const exposed = !isLoopbackHost(flags.host) && flags.trustedNetwork !== true;
  const dashboardToken = exposed ? secret('') : undefined;
  const options = sandboxOptions(flags, exposed, dashboardToken);
  restartWithSmallYoungGeneration(self);
  const instance: Sandbox = createSandbox({
    ...options,
    onWebhookAttempt: (report) => {
      const line = failedAttemptLine(report, instance.clock.now());
      if (line) terminal.stderr.write(`${line}\n`);
    },
  });
  try {
    addFaultRules(instance.faults, faultRules, flags.faults ?? '');
  } catch (error) {
    await instance.close();
    throw error;
  }
  if (flags.reset) {
    await instance.reset();
    for (const made of instance.tenants()) await instance.removeTenant(made.webcode);
  }
  // Ready to stop before the JSON line announces the server: a caller may signal as soon as it reads it.
  stopOnSignals(instance, terminal, readyFile);
  const { baseUrl } = await instance.listen({ port, host: flags.host }).catch(async (error: NodeJS.ErrnoException) => {
    await instance.close();
    if (error.code === 'EADDRINUSE') throw new ExitError(`port ${port} is in use: pick another with --port`, EXIT.failure);
    throw error;
  });
  const dashboardUrl = `${baseUrl}/${dashboardToken === undefined ? '' : `?token=${dashboardToken}`}`;
  const announced = { baseUrl, webcode: instance.webcode, keys: instance.keys, clientSecrets: instance.clientSecrets };
  if (readyFile) {
    try {
      writeReadyFile(readyFile, { ...announced, dashboardUrl, pid: process.pid });
    } catch (error) {
      await instance.close();
      throw error;
    }
    // However the process ends from here, the file must not outlive the sandbox it describes.
    process.once('exit', () => removeReadyFile(readyFile));
  }
  terminal.stdout.write(`${JSON.stringify(announced)}\n`);
  terminal.stderr.write(
    banner(flags, instance, { where: listening(flags, baseUrl, port), dashboardUrl, faultRules: faultRules.length, exposed }),
  );
  if (flags.open) openInBrowser(dashboardUrl, terminal);
  // Runs until a signal stops it.
  return await new Promise<never>(() => {});
}
