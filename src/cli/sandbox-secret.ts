/**
 * `sandbox rotate-secret`: gives a running sandbox's environment (the client's, `--environment`) a
 * new client secret, through its control API, and prints it. Against the real service it exits 1
 * in one line: rotate there in the merchant dashboard.
 */
import type { Command } from 'commander';
import { sandboxOnly } from './control.js';
import { writeRecord } from './io.js';
import type { SandboxCommandContext } from './sandbox-terminal.js';

const HELP = [
  'Payment pages sign the tokens made from now on with the new secret; tokens made before carry the old',
  'one, so decode with both while customers come back, the new one first:',
  '  decodeRedirectData(token, [newSecret, oldSecret])',
  "The sandbox's own tenant keeps the new secret until it stops; a made tenant keeps it with its keys.",
  '',
  'Example: payment-service-sdk sandbox rotate-secret --environment test --format json',
].join('\n');

/** Adds `rotate-secret` under `sandbox`. */
export function registerSandboxSecret(sandbox: Command, context: SandboxCommandContext): void {
  sandbox
    .command('rotate-secret')
    .description("rotate a running sandbox's client secret of the client's environment; prints the new one")
    .addHelpText('after', `\n${HELP}`)
    .action(async (_flags: unknown, self: Command) => {
      const link = await sandboxOnly(context.settings(self), 'sandbox rotate-secret');
      const rotated = await link.request<{ environment: string; clientSecret: string }>(
        'POST',
        `${link.environment}/client-secret/rotate`,
        {},
      );
      writeRecord(context.terminal, context.format(self), rotated, ['environment', 'clientSecret']);
    });
}
