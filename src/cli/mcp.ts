/**
 * `payment-service-sdk mcp`: the MCP server of `payment-service-sdk/mcp` for an AI assistant, over
 * stdio (the default: the assistant starts it) or Streamable HTTP (`--http [port]`, at `/mcp`, on
 * 127.0.0.1, with a bearer token). It takes the client settings every command takes (`--api-key`,
 * `--webcode`, `--base-url`, `--env`, the profile), or a sandbox: `--sandbox URL`, or `--sandbox`
 * alone to start one in this process. Test by default; Live only with `--live` and `--allow`.
 * The MCP code and `@modelcontextprotocol/sdk` (an optional peer) load only when this command runs;
 * without the SDK it says how to install it.
 */
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import type { Environment } from '../index.js';
import { EXIT, ExitError, UsageError } from './io.js';
import type { CommandContext } from './program.js';

interface McpFlags {
  http?: boolean | string;
  host?: string;
  sandbox?: boolean | string;
  dataDir?: string;
  live?: boolean;
  allow?: string;
  readOnly?: boolean;
  confirm?: boolean;
  maxAmount?: string;
}

export const SDK_MISSING =
  'payment-service-sdk mcp needs the MCP SDK, an optional peer dependency: npm install @modelcontextprotocol/sdk@^1.32.0';

const MCP_HELP = `
Safety:
  Test by default. Live only with --live and --allow (the tools served, by name); --read-only serves
  the reads alone, in either environment. In Live each refund, capture, cancel, extend and POS charge
  is confirmed by the person through MCP elicitation (a client without it is refused; --no-confirm
  lets the assistant move Live money without asking: dangerous). --max-amount refuses a single call
  above it before sending. A write called again with the same arguments sends the same
  Idempotency-Key (derived, 24 h): it never refunds twice.

Examples:
  payment-service-sdk mcp --sandbox                     a sandbox in this process, every tool
  payment-service-sdk mcp --sandbox http://127.0.0.1:4010
  payment-service-sdk mcp --http 8765                   Streamable HTTP at http://127.0.0.1:8765/mcp
  payment-service-sdk mcp --live --allow retrieveSession,refund --max-amount 5000
`;

/** An error of a missing module that is the MCP SDK. */
function sdkMissing(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return (
    (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
    String((error as Error).message).includes('@modelcontextprotocol/sdk')
  );
}

async function loadMcp() {
  try {
    const [mcp, stdio] = await Promise.all([import('../mcp/index.js'), import('@modelcontextprotocol/sdk/server/stdio.js')]);
    return { ...mcp, StdioServerTransport: stdio.StdioServerTransport };
  } catch (error) {
    if (sdkMissing(error)) throw new ExitError(SDK_MISSING, EXIT.failure);
    throw error;
  }
}

/** README.md and docs/*.md of the package this bin belongs to (the npm package ships both, as a checkout has them). */
function packageGuides(): { path: string; name?: string }[] {
  try {
    const root = dirname(dirname(realpathSync(process.argv[1] ?? '')));
    const guides: { path: string; name?: string }[] = existsSync(join(root, 'README.md')) ? [{ path: join(root, 'README.md') }] : [];
    const docs = join(root, 'docs');
    // Named by their path in the package: docs/README.md, the guides' index, beside the README.
    if (existsSync(docs))
      for (const name of readdirSync(docs).sort()) if (name.endsWith('.md')) guides.push({ path: join(docs, name), name: `docs/${name}` });
    return guides;
  } catch {
    return [];
  }
}

function maxAmountOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new UsageError('--max-amount must be a whole number of minor units (cents)');
  return Number(value);
}

function portOf(value: boolean | string | undefined): number {
  if (value === undefined || value === true) return 0;
  const port = Number(value);
  if (!/^\d+$/.test(String(value)) || port > 65_535) throw new UsageError('--http takes a port from 0 to 65535');
  return port;
}

async function serve(context: CommandContext, command: Command, flags: McpFlags): Promise<void> {
  const { terminal } = context;
  const say = (line: string) => terminal.stderr.write(`payment-service-sdk mcp: ${line}\n`);
  const settings = { ...context.settings(command) };
  const configured = (settings.environment as Environment | undefined) ?? 'test';
  if (configured === 'live' && !flags.live)
    throw new UsageError(
      'the settings say Live (--env, PAYMENT_SERVICE_ENVIRONMENT or the profile): serving Live needs --live and --allow',
    );
  const environment: Environment = flags.live ? 'live' : 'test';
  const allow = flags.allow
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (flags.live && allow === undefined && !flags.readOnly)
    throw new UsageError(
      '--live needs --allow with the operations the assistant may use (--allow retrieveSession,refund,...), or --read-only: nothing is served in Live by default',
    );
  const maxAmount = maxAmountOf(flags.maxAmount);
  const port = flags.http === undefined ? undefined : portOf(flags.http);
  if (flags.host !== undefined && port === undefined) throw new UsageError('--host is for --http');
  if (flags.dataDir !== undefined && flags.sandbox !== true)
    throw new UsageError('--data-dir is for --sandbox without a URL (a sandbox in this process)');

  const mcp = await loadMcp();
  const started: { closeSandbox?: () => Promise<void> } = {};
  try {
    await start(context, command, flags, { mcp, settings, environment, allow, maxAmount, port, say }, started);
  } catch (error) {
    // A server that failed to start must not keep the process alive (the sandbox listens).
    await started.closeSandbox?.().catch(() => {});
    throw error;
  }
}

interface Prepared {
  mcp: Awaited<ReturnType<typeof loadMcp>>;
  settings: ReturnType<CommandContext['settings']>;
  environment: Environment;
  allow: string[] | undefined;
  maxAmount: number | undefined;
  port: number | undefined;
  say: (line: string) => void;
}

async function start(
  context: CommandContext,
  _command: Command,
  flags: McpFlags,
  { mcp, settings, environment, allow, maxAmount, port, say }: Prepared,
  started: { closeSandbox?: () => Promise<void> },
): Promise<void> {
  const { terminal } = context;
  const secrets: string[] = [];
  let closeSandbox: (() => Promise<void>) | undefined;
  let sandboxUrl: string | undefined;
  if (flags.sandbox === true) {
    const { createSandbox } = await import('../sandbox/index.js');
    const sandbox = createSandbox({ dataDir: flags.dataDir, onError: (error) => say(`sandbox: ${(error as Error).message ?? error}`) });
    const { baseUrl } = await sandbox.listen();
    Object.assign(settings, { baseUrl, webcode: sandbox.webcode, apiKey: sandbox.keys[environment] });
    secrets.push(sandbox.keys.test, sandbox.keys.live, sandbox.clientSecrets.test, sandbox.clientSecrets.live);
    closeSandbox = () => sandbox.close();
    started.closeSandbox = closeSandbox;
    sandboxUrl = baseUrl;
    say(`sandbox at ${baseUrl} (${sandbox.location})`);
  } else if (typeof flags.sandbox === 'string') {
    sandboxUrl = flags.sandbox.replace(/\/+$/, '');
    settings.baseUrl = sandboxUrl;
    settings.apiKey ??= environment === 'live' ? 'sk_live_sandbox' : 'sk_test_sandbox';
    settings.webcode ??= 'SANDBOX';
  }
  for (const key of ['apiKey', 'webcode', 'baseUrl'] as const)
    if (settings[key] === undefined)
      throw new UsageError(
        `mcp needs ${key === 'apiKey' ? 'an API key' : `a ${key}`} (flags, PAYMENT_SERVICE_* variables or the profile), or --sandbox`,
      );

  const options = {
    client: {
      apiKey: settings.apiKey,
      webcode: settings.webcode,
      baseUrl: settings.baseUrl,
      environment,
      appInfo: { name: 'payment-service-sdk-mcp' },
    },
    sandbox: sandboxUrl ? { baseUrl: sandboxUrl } : undefined,
    allow,
    readOnly: flags.readOnly,
    confirm: flags.confirm,
    maxAmount,
    guides: packageGuides(),
    secrets,
  };
  let parts: ReturnType<typeof mcp.mcpServerParts>;
  try {
    parts = mcp.mcpServerParts(options);
  } catch (error) {
    if (error instanceof mcp.McpSettingsError) throw new UsageError(error.message);
    throw error;
  }
  const served = `${parts.tools.length} tools, ${environment === 'live' ? 'LIVE' : 'Test'}${sandboxUrl ? ', sandbox' : ''}`;

  let stopHttp: (() => Promise<void>) | undefined;
  let stopped = false;
  const stop = async (code: number) => {
    if (stopped) return;
    stopped = true;
    await stopHttp?.().catch(() => {});
    await closeSandbox?.().catch(() => {});
    process.exit(code);
  };
  process.once('SIGINT', () => void stop(0));
  process.once('SIGTERM', () => void stop(0));

  if (port === undefined) {
    const server = mcp.createMcpServer(options, parts);
    const transport = new mcp.StdioServerTransport(terminal.stdin, terminal.stdout);
    transport.onclose = () => void stop(0);
    terminal.stdin.once('end', () => void stop(0));
    await server.connect(transport);
    say(`serving MCP over stdio (${served})`);
    return;
  }
  const given = terminal.env.PAYMENT_SERVICE_MCP_TOKEN;
  const token = given && given.trim() !== '' ? given.trim() : mcp.newToken();
  const http = await mcp.serveMcpHttp({ server: () => mcp.createMcpServer(options, parts), token, host: flags.host, port });
  stopHttp = () => http.close();
  say(`serving MCP over Streamable HTTP at ${http.url} (${served})`);
  if (given && given.trim() !== '') say('token: PAYMENT_SERVICE_MCP_TOKEN (send Authorization: Bearer <token>)');
  else say(`token (shown once; set PAYMENT_SERVICE_MCP_TOKEN to choose it): ${token}`);
}

export function registerMcp(program: Command, context: CommandContext): void {
  program
    .command('mcp')
    .description('an MCP server of the service (and of the sandbox) for AI assistants: stdio, or --http')
    .option('--http [port]', 'serve Streamable HTTP at /mcp instead of stdio (default port: a free one)')
    .option('--host <host>', 'the address --http listens on (default 127.0.0.1)')
    .option('--sandbox [url]', 'the target is a sandbox (its control actions become tools); alone: start one in this process')
    .option('--data-dir <dir>', 'the store of the sandbox started by --sandbox (default: memory)')
    .option('--live', 'serve Live (real money): needs --allow, or --read-only')
    .option('--allow <tools>', 'the tools served, by name, comma-separated (refund,retrieveSession,...)')
    .option('--read-only', 'serve only the tools that read')
    .option('--no-confirm', 'DANGEROUS: move Live money without asking the person (for clients without elicitation)')
    .option('--max-amount <cents>', 'refuse a single call whose amount is above this, in minor units')
    .addHelpText('after', MCP_HELP)
    .action((flags: McpFlags, command: Command) => serve(context, command, flags));
}
