#!/usr/bin/env node
/**
 * The `payment-service-sdk` command: every endpoint of the service from the shell, exports,
 * webhook listening, sandbox triggers, and the local sandbox itself. `payment-service-sdk --help`.
 */
import { registerExport } from './export.js';
import { processTerminal } from './io.js';
import { run } from './program.js';

run(process.argv.slice(2), processTerminal(), [registerExport]).then(
  (code) => {
    // A server (sandbox, listen) keeps running; anything else ends with its code.
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`payment-service-sdk: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
