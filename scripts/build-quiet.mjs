#!/usr/bin/env node
// Runs `npm run build` and shows its output only when it fails (then on stderr, with its exit code).
// `npm run demo`, `npm run example` and `prepack` build first: their output starts with what was
// asked for, not some 80 lines of tsup's progress, and `npm pack --json` prints clean JSON.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// Under an npm script, the npm that runs it (its JS file, so no `npm.cmd` lookup on Windows).
const npm = process.env.npm_execpath;
const [command, prefix] = npm ? [process.execPath, [npm]] : ['npm', []];
const build = spawn(command, [...prefix, 'run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
const output = [];
build.stdout.on('data', (chunk) => output.push(chunk));
build.stderr.on('data', (chunk) => output.push(chunk));
build.on('error', (error) => {
  process.stderr.write(`Could not run npm run build: ${error.message}\n`);
  process.exitCode = 1;
});
build.on('close', (code, signal) => {
  if (code === 0) return;
  process.stderr.write(Buffer.concat(output));
  process.stderr.write(`\nnpm run build failed (${signal ?? `exit ${code}`})\n`);
  process.exitCode = code > 0 ? code : 1;
});
