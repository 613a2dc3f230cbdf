#!/usr/bin/env node
// Lints both OpenAPI documents with Redocly CLI and its recommended rules (redocly.yaml): the
// service's as the package ships it (dist/openapi.json, `payment-service-sdk/openapi.json`; the
// sandbox serves the same with itself as the server), and the control API's as the built sandbox
// serves it at /_sandbox/openapi.json. Fails on any error AND any warning: a rule that should not apply is
// turned off or down in redocly.yaml, with the reason beside it. `npm run lint:openapi` builds first.
// Redocly runs with telemetry and update checks off, and can connect to nothing but loopback.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const redocly = join(require.resolve('@redocly/cli/package.json'), '..', 'bin', 'cli.js');
const SHIPPED = 'dist/openapi.json';
const SERVED = '/_sandbox/openapi.json';

const { createSandbox } = await import(pathToFileURL(join(root, 'dist/sandbox.mjs')).href);
const sandbox = createSandbox();
const dir = mkdtempSync(join(tmpdir(), 'lint-openapi-'));
try {
  // In process: the sandbox answers without listening anywhere.
  const response = await sandbox.handle(new Request(`${sandbox.baseUrl}${SERVED}`));
  if (response.status !== 200) throw new Error(`GET ${SERVED} answered ${response.status}`);
  writeFileSync(join(dir, 'sandbox-openapi.json'), `${JSON.stringify(await response.json(), null, 2)}\n`);
  const files = [
    { path: SHIPPED, file: join(root, SHIPPED) },
    { path: SERVED, file: join(dir, 'sandbox-openapi.json') },
  ];
  // One run per file: with several, `--format json` prints one report after the other.
  let failed = false;
  for (const { path, file } of files) {
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
        file,
      ],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        timeout: 60_000,
      },
    );
    let report;
    try {
      report = JSON.parse(run.stdout);
    } catch {
      process.stderr.write(`redocly lint gave no report (status ${run.status ?? run.signal}):\n${run.stdout}${run.stderr}`);
      failed = true;
      continue;
    }
    for (const problem of report.problems) {
      const where = problem.location?.[0];
      const place = where ? `${where.start?.line ?? '?'}:${where.start?.col ?? '?'} ${where.pointer ?? ''}` : '?';
      process.stdout.write(`  ${place}\n    ${problem.severity} ${problem.ruleId}: ${problem.message}\n`);
    }
    const { errors, warnings, ignored } = report.totals;
    process.stdout.write(`redocly ${report.version} lint of ${path}: ${errors} errors, ${warnings} warnings, ${ignored} ignored\n`);
    if (errors > 0 || warnings > 0) failed = true;
  }
  if (failed) process.exitCode = 1;
} finally {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
