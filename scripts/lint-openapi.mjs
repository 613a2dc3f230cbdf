#!/usr/bin/env node
// Lints both OpenAPI documents with Redocly CLI and its recommended rules (redocly.yaml), as
// committed: docs/openapi.json (the service's: the build ships the same as dist/openapi.json, the
// sandbox serves it at /openapi.json) and docs/sandbox-control.openapi.json (the control API's,
// served at /_sandbox/openapi.json). test/openapi.test.ts fails when a copy differs from what the
// sources generate, so no build is needed here. Fails on any error AND any warning: a rule that
// should not apply is turned off or down in redocly.yaml, with the reason beside it.
// Redocly runs with telemetry and update checks off, and can connect to nothing but loopback.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const redocly = join(require.resolve('@redocly/cli/package.json'), '..', 'bin', 'cli.js');
const DOCUMENTS = ['docs/openapi.json', 'docs/sandbox-control.openapi.json'];

let failed = false;
// One run per file: with several, `--format json` prints one report after the other.
for (const document of DOCUMENTS) {
  const run = spawnSync(
    process.execPath,
    [
      '--require',
      join(root, 'scripts/loopback-only.cjs'),
      redocly,
      'lint',
      '--config',
      join(root, 'redocly.yaml'),
      '--format',
      'json',
      document,
    ],
    {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      timeout: 60_000,
    },
  );
  let report;
  try {
    report = JSON.parse(run.stdout);
  } catch {
    process.stderr.write(`redocly lint ${document} gave no report (status ${run.status ?? run.signal}):\n${run.stdout}${run.stderr}`);
    failed = true;
    continue;
  }
  for (const problem of report.problems) {
    const where = problem.location?.[0];
    const place = where ? `${document}:${where.start?.line ?? '?'}:${where.start?.col ?? '?'} ${where.pointer ?? ''}` : document;
    process.stdout.write(`${place}\n  ${problem.severity} ${problem.ruleId}: ${problem.message}\n`);
  }
  const { errors, warnings, ignored } = report.totals;
  process.stdout.write(`redocly ${report.version} lint of ${document}: ${errors} errors, ${warnings} warnings, ${ignored} ignored\n`);
  if (errors > 0 || warnings > 0) failed = true;
}
if (failed) process.exitCode = 1;
