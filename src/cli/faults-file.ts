/** `sandbox --faults FILE.json`: a JSON array of fault rules, each checked as `POST /_sandbox/faults` checks it. */
import { readFileSync } from 'node:fs';
import { FaultRuleError, type SandboxFaults } from '../sandbox/index.js';
import { UsageError } from './io.js';

/** The file's rules, read and parsed; a file that cannot be read or is not a JSON array is a usage mistake. */
export function readFaultsFile(path: string): unknown[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--faults ${path}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let rules: unknown;
  try {
    rules = JSON.parse(text);
  } catch {
    throw new UsageError(`--faults ${path}: not JSON`);
  }
  if (!Array.isArray(rules)) throw new UsageError(`--faults ${path}: must be a JSON array of rules`);
  return rules;
}

/** Adds the rules in order; the first the sandbox refuses is a usage mistake naming its place in the file. */
export function addFaultRules(faults: SandboxFaults, rules: readonly unknown[], path: string): void {
  rules.forEach((rule, index) => {
    try {
      faults.add(rule as never);
    } catch (error) {
      if (error instanceof FaultRuleError) throw new UsageError(`--faults ${path}: rule ${index + 1}: ${error.message}`);
      throw error;
    }
  });
}
