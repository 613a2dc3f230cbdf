/**
 * The money-safety rules of the MCP server, in one place: which tools are served (Live only with an
 * explicit allow-list; `readOnly` keeps the reads), the `maxAmount` bound checked before anything
 * is sent, and the person's confirmation of every money move in Live, through MCP elicitation.
 */
import type { Environment } from '../core/options.js';
import type { McpTool, MoneyMove } from './tool.js';

/** The safety settings of {@link createMcpServer}. */
export interface SafetyOptions {
  /**
   * The tools served, by name (`refund`, `retrieveSession`, `sandbox_paySession`...). Required in
   * Live (unless `readOnly`): a Live server without it refuses to start. Default in Test: every tool.
   */
  allow?: readonly string[] | undefined;
  /** Serve the tools that only read, in either environment. */
  readOnly?: boolean | undefined;
  /**
   * Ask the person to confirm each money move in Live, through MCP elicitation (default `true`).
   * `false` lets the assistant move Live money on its own: dangerous, for a client that cannot elicit
   * and a person who accepts that.
   */
  confirm?: boolean | undefined;
  /** The largest amount (minor units, as every amount of the API) a single call may carry; a larger one is refused before sending. */
  maxAmount?: number | undefined;
}

/** The server cannot start with these settings (a Live server without `allow`, an unknown tool name). */
export class McpSettingsError extends Error {
  override name = 'McpSettingsError';
}

/** A call the safety rules refused, or the person declined: nothing was sent. */
export class McpRefusal extends Error {
  override name = 'McpRefusal';
}

/** The tools served under `safety`, in `environment`. Throws {@link McpSettingsError} for settings it cannot serve. */
export function selectTools(tools: readonly McpTool[], environment: Environment, safety: SafetyOptions): McpTool[] {
  const names = new Set(tools.map((tool) => tool.name));
  if (environment === 'live' && safety.allow === undefined && !safety.readOnly) {
    throw new McpSettingsError(
      'Live needs the list of the operations allowed (--allow refund,retrieveSession,... or the `allow` option): nothing is served in Live by default. ' +
        `--read-only serves the reads alone. The tools: ${[...names].join(', ')}`,
    );
  }
  const unknown = (safety.allow ?? []).filter((name) => !names.has(name));
  if (unknown.length > 0) throw new McpSettingsError(`No tool is named ${unknown.join(', ')}; the tools: ${[...names].join(', ')}`);
  if (safety.maxAmount !== undefined && (!Number.isSafeInteger(safety.maxAmount) || safety.maxAmount < 0)) {
    throw new McpSettingsError('maxAmount must be a whole number of minor units (cents), 0 or more');
  }
  const allowed = safety.allow === undefined ? undefined : new Set(safety.allow);
  return tools.filter((tool) => (allowed === undefined || allowed.has(tool.name)) && (!safety.readOnly || tool.annotations.readOnlyHint));
}

/** `1000` `EUR` → `10.00 EUR`: the three accepted currencies have two decimals. */
export function formatAmount(value: number, currency: string | undefined): string {
  const sign = value < 0 ? '-' : '';
  const whole = Math.abs(value);
  return `${sign}${Math.floor(whole / 100)}.${String(whole % 100).padStart(2, '0')} ${currency ?? ''}`.trim();
}

/** `maxAmount`: any call whose `amount.value` is above it is refused before anything is sent. */
export function checkMaxAmount(args: Record<string, unknown>, safety: SafetyOptions): void {
  if (safety.maxAmount === undefined) return;
  const value = (args.amount as { value?: unknown } | undefined)?.value;
  if (typeof value === 'number' && value > safety.maxAmount) {
    throw new McpRefusal(
      `amount.value ${value} is above the server's --max-amount ${safety.maxAmount} (minor units): nothing was sent. Ask the person to do it another way, or to restart the server with a higher --max-amount.`,
    );
  }
}

/** How the person answered a confirmation. */
export type ConfirmAnswer = 'accept' | 'decline' | 'cancel' | 'unsupported';

/** Asks the person about a move, through the client (elicitation). */
export type Confirmer = (message: string) => Promise<ConfirmAnswer>;

const VERBS: Record<string, string> = {
  refund: 'Refund',
  capture: 'Capture',
  cancel: 'Cancel the pre-authorisation',
  extend: 'Extend the pre-authorisation',
  createPosPayment: 'Charge',
};

/** The question put to the person: what, how much, of which payment (or on which terminal), in which environment. */
export function confirmationMessage(tool: McpTool, move: MoneyMove, environment: Environment): string {
  const verb = VERBS[tool.name] ?? tool.name;
  const amount = move.value === undefined ? 'no amount (the whole pre-authorisation)' : formatAmount(move.value, move.currency);
  const where = tool.name === 'createPosPayment' ? `on terminal ${move.reference ?? '?'}` : `of payment ${move.reference ?? '?'}`;
  return `${verb}: ${amount} ${where}, in ${environment === 'live' ? 'LIVE (real money)' : 'Test'}. Allow it?`;
}

/** In Live with `confirm` on, a money move goes ahead only once the person accepts it. */
export async function confirmMove(
  tool: McpTool,
  args: Record<string, unknown>,
  environment: Environment,
  safety: SafetyOptions,
  confirmer: Confirmer,
): Promise<void> {
  if (!tool.movesMoney || environment !== 'live' || safety.confirm === false) return;
  const answer = await confirmer(confirmationMessage(tool, tool.move?.(args) ?? {}, environment));
  if (answer === 'accept') return;
  if (answer === 'unsupported') {
    throw new McpRefusal(
      `${tool.name} moves Live money and needs the person's confirmation, which this MCP client cannot ask for (it does not support elicitation): nothing was sent. ` +
        'Use a client that supports elicitation, or start the server with --no-confirm (dangerous: the assistant then moves Live money without asking anyone).',
    );
  }
  throw new McpRefusal(`The person ${answer === 'decline' ? 'declined' : 'cancelled'} the ${tool.name}: nothing was sent.`);
}
