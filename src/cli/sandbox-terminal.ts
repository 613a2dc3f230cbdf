/**
 * `sandbox terminal <poiId> [--processing-ms MS | --default]` and `sandbox terminals`: a running
 * sandbox's simulated terminals and their processing time (how long each takes to answer a POS
 * payment), through its control API at the client's base URL and key, as `sessions pay` reaches it.
 * Against the real service they exit 1 in one line.
 */
import type { Command } from 'commander';
import type { Profile } from './config.js';
import { sandboxOnly } from './control.js';
import { EXIT, ExitError, type Format, type Terminal, UsageError, writeRecord, writeRecords } from './io.js';

/** What the commands need of the CLI's context (program.ts's `CommandContext` is one). */
export interface SandboxCommandContext {
  terminal: Terminal;
  /** The client settings in use: flags, then variables, then the profile. */
  settings(command: Command): Profile;
  format(command: Command): Format;
}

/** A terminal's settings as the control API answers them. */
interface TerminalSettings {
  poiId: string;
  name: string;
  model: string;
  online: boolean;
  processingMs: number | null;
}

const COLUMNS = ['poiId', 'name', 'model', 'online', 'processingMs'];
/** The control API's bound (`MAX_PROCESSING_MS`), checked here first so that a mistake is a usage error (exit 2). */
const MAX_PROCESSING_MS = 600_000;

/** `--processing-ms`: whole ms 0 to 600 000, or `default`; `--default` is the same as `default`. */
function processingOf(flags: { processingMs?: string; default?: boolean }): number | null | undefined {
  if (flags.default && flags.processingMs !== undefined) throw new UsageError('give --processing-ms or --default, not both');
  if (flags.default || flags.processingMs === 'default') return null;
  if (flags.processingMs === undefined) return undefined;
  const ms = Number(flags.processingMs);
  if (!/^\d+$/.test(flags.processingMs) || ms > MAX_PROCESSING_MS)
    throw new UsageError(`--processing-ms must be an integer from 0 to ${MAX_PROCESSING_MS}, or default`);
  return ms;
}

/** `--offline` / `--online`: the terminal's connectivity to set, `undefined` to keep it. */
function onlineOf(flags: { offline?: boolean; online?: boolean }): boolean | undefined {
  if (flags.offline && flags.online) throw new UsageError('give --offline or --online, not both');
  return flags.offline ? false : flags.online ? true : undefined;
}

const TERMINAL_HELP = [
  'A POS payment on the terminal is then answered that many ms after it is sent (sandbox clock), instead of',
  "after the sandbox's --pos-delay-ms: meanwhile it is listed pending, a resend with its Idempotency-Key waits",
  'for the answer, a new payment on the terminal gets 409 / 13005. Once answered, resends and listings come back',
  'at once. --offline takes the terminal offline (its POS payments answered 502 / 13004, nothing charged),',
  '--online brings it online. Without any of these it prints the terminal as it is. Sandbox only.',
  '',
  'Example: payment-service-sdk sandbox terminal V400m-TEST-000001 --processing-ms 35000',
  '         payment-service-sdk sandbox terminal S1F2-TEST-000002 --offline',
].join('\n');

/** Adds `terminal` and `terminals` under `sandbox`. */
export function registerSandboxTerminal(sandbox: Command, context: SandboxCommandContext): void {
  sandbox
    .command('terminal <poiId>')
    .description("set a running sandbox's simulated terminal's processing time or connectivity (or print it); prints the terminal")
    .option('--processing-ms <ms>', `how long the terminal takes per payment, 0 to ${MAX_PROCESSING_MS}, or default`)
    .option('--default', "back to the sandbox's --pos-delay-ms")
    .option('--offline', 'take the terminal offline (its POS payments answered 502 / 13004)')
    .option('--online', 'bring the terminal online')
    .addHelpText('after', `\n${TERMINAL_HELP}`)
    .action(
      async (poiId: string, flags: { processingMs?: string; default?: boolean; offline?: boolean; online?: boolean }, self: Command) => {
        const processingMs = processingOf(flags);
        const online = onlineOf(flags);
        const link = await sandboxOnly(context.settings(self), 'sandbox terminal');
        const path = `${link.environment}/terminals`;
        const change = { ...(processingMs === undefined ? {} : { processingMs }), ...(online === undefined ? {} : { online }) };
        const terminal =
          Object.keys(change).length === 0
            ? (await link.request<{ terminals: TerminalSettings[] }>('GET', path)).terminals.find((each) => each.poiId === poiId)
            : await link.request<TerminalSettings>('PUT', `${path}/${encodeURIComponent(poiId)}`, change);
        // As the control API's 404 for a PUT: exit 1.
        if (!terminal) throw new ExitError(`no simulated terminal ${poiId}: see payment-service-sdk sandbox terminals`, EXIT.failure);
        writeRecord(context.terminal, context.format(self), terminal, COLUMNS);
      },
    );
  sandbox
    .command('terminals')
    .description("a running sandbox's simulated terminals, each with its processing time (null: --pos-delay-ms)")
    .action(async (_flags: unknown, self: Command) => {
      const link = await sandboxOnly(context.settings(self), 'sandbox terminals');
      const { terminals } = await link.request<{ terminals: TerminalSettings[] }>('GET', `${link.environment}/terminals`);
      writeRecords(context.terminal, context.format(self), terminals, COLUMNS, 'only');
    });
}
