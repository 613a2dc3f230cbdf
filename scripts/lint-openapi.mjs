#!/usr/bin/env node
// Lints both OpenAPI documents with Redocly CLI and its recommended rules (redocly.yaml): the
// service's as the built sandbox (dist/) serves it at /openapi.json, and the control API's at
// /_sandbox/openapi.json. Fails on any error AND any warning: a rule that should not apply is
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
const DOCUMENTS = [
  { path: '/openapi.json', file: 'openapi.json' },
  { path: '/_sandbox/openapi.json', file: 'sandbox-openapi.json' },
];

const { createSandbox } = await import(pathToFileURL(join(root, 'dist/sandbox.mjs')).href);
const sandbox = createSandbox();
const dir = mkdtempSync(join(tmpdir(), 'lint-openapi-'));
try {
  const files = [];
  for (const { path, file } of DOCUMENTS) {
    // In process: the sandbox answers without listening anywhere.
    const response = await sandbox.handle(new Request(`${sandbox.baseUrl}${path}`));
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
    writeFileSync(join(dir, file), `${JSON.stringify(await response.json(), null, 2)}\n`);
    files.push(join(dir, file));
  }
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
      ...files,
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
    process.exitCode = 1;
  }
  if (report) {
    for (const problem of report.problems) {
      const where = problem.location?.[0];
      const place = where
        ? `${where.source?.ref ?? '?'}:${where.start?.line ?? '?'}:${where.start?.col ?? '?'} ${where.pointer ?? ''}`
        : '?';
      process.stdout.write(`${place}\n  ${problem.severity} ${problem.ruleId}: ${problem.message}\n`);
    }
    const { errors, warnings, ignored } = report.totals;
    const names = DOCUMENTS.map((document) => document.path).join(' and ');
    process.stdout.write(`redocly ${report.version} lint of ${names}: ${errors} errors, ${warnings} warnings, ${ignored} ignored\n`);
    if (errors > 0 || warnings > 0) process.exitCode = 1;
  }
} finally {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
