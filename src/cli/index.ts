#!/usr/bin/env node
/**
 * The `payment-service-sdk` command: every endpoint of the service from the shell, exports,
 * webhook listening, sandbox triggers, and the local sandbox itself. `payment-service-sdk --help`.
 */
import { registerExport } from './export.js';
import { processTerminal } from './io.js';
import { registerListen } from './listen.js';
import { run } from './program.js';
import { registerTrigger } from './trigger.js';

run(process.argv.slice(2), processTerminal(), [registerExport, registerListen, registerTrigger]).then(
  (code) => {
    // A server (sandbox, listen) keeps running; anything else ends with its code.
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`payment-service-sdk: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
