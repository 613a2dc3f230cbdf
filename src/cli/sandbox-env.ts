/**
 * `payment-service-sdk sandbox`'s flags as environment variables: `--webhook-url` is also
 * `PAYMENT_SANDBOX_WEBHOOK_URL`, `--pos-delay-ms` `PAYMENT_SANDBOX_POS_DELAY_MS`, and so on, for
 * containers and CI services, where variables are the usual way to set things. A flag given on the
 * command line wins over its variable; an empty variable counts as not set. A repeatable flag's
 * variable holds a list separated by commas or whitespace; a switch's variable is `true`/`1`/`yes`
 * or `false`/`0`/`no`.
 */
import type { Command, Option } from 'commander';
import { UsageError } from './io.js';

/** The variable of a flag: `--webhook-url` → `PAYMENT_SANDBOX_WEBHOOK_URL`. */
export function sandboxVariable(option: Option): string {
  return `PAYMENT_SANDBOX_${option.name().toUpperCase().replaceAll('-', '_')}`;
}

/** Names each flag's variable in `--help`: `(env: PAYMENT_SANDBOX_SEED)`. */
export function describeVariables(command: Command): void {
  for (const option of command.options) option.description = `${option.description} (env: ${sandboxVariable(option)})`;
}

function isSwitch(option: Option): boolean {
  return !option.required && !option.optional;
}

function switchValue(variable: string, raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  throw new UsageError(`${variable} must be true or false (1/0, yes/no), got ${raw}`);
}

/**
 * `flags` with the value of each flag's variable where the command line did not give the flag:
 * a default gives way to a variable, a value given (there, or as the root's `--webcode`) does not.
 * `repeatable` names the flags (camelCase, as commander names them) that may be given more than once.
 */
export function withVariables<T extends object>(command: Command, flags: T, env: NodeJS.ProcessEnv, repeatable: ReadonlySet<string>): T {
  const merged = { ...flags } as Record<string, unknown>;
  for (const option of command.options) {
    const key = option.attributeName();
    const source = command.getOptionValueSource(key);
    if (source === 'cli' || (source !== 'default' && merged[key] !== undefined)) continue;
    const variable = sandboxVariable(option);
    const raw = env[variable];
    if (raw === undefined || raw.trim() === '') continue;
    if (isSwitch(option)) merged[key] = switchValue(variable, raw);
    else if (repeatable.has(key)) merged[key] = raw.split(/[\s,]+/).filter((item) => item !== '');
    else merged[key] = raw.trim();
  }
  return merged as T;
}
