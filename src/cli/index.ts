#!/usr/bin/env node
/**
 * The `payment-service-sdk` command: every endpoint of the service from the shell, exports,
 * webhook listening, sandbox triggers, and the local sandbox itself. `payment-service-sdk --help`.
 */
import { isPageWorker, registerExport, servePages } from './export.js';
import { BROKEN_PIPE, processTerminal, terminalSafe } from './io.js';
import { registerListen } from './listen.js';
import { registerLogs } from './logs.js';
import { registerMcp } from './mcp.js';
import { run } from './program.js';
import { registerTrigger } from './trigger.js';

function main(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    // A command that watches its own output (export, listen) ends in its own way; elsewhere stop quietly.
    if (error.code !== 'EPIPE') throw error;
    if (process.stdout.listenerCount('error') === 1) process.exit(BROKEN_PIPE);
  });

  run(process.argv.slice(2), processTerminal(), [registerExport, registerListen, registerTrigger, registerLogs, registerMcp]).then(
    (code) => {
      // A server (sandbox, listen) keeps running; anything else ends with its code.
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`payment-service-sdk: ${terminalSafe(error instanceof Error ? error.message : String(error), true)}\n`);
      process.exitCode = 1;
    },
  );
}

// The bin also runs as the export's page worker (a thread of its own, with a small young generation).
if (isPageWorker()) void servePages();
else main();
