#!/usr/bin/env node
/**
 * Checks the package as users get it: the `npm pack` tarball, not the repository.
 *
 *   1. `npm pack` (its `prepack` builds dist/), with every file the package needs and no other;
 *   2. attw on the tarball with the node16 profile, and `publint --strict` on the tarball;
 *   3. a clean install of the tarball in a temporary folder (dependencies from the registry), then
 *      consumers from scripts/consumers/: ESM `import`, CJS `require`, the `payment-service-sdk`
 *      bin, and TypeScript strict consumers (node16 ESM, bundler, node16 CJS) compiled with this
 *      repository's tsc and run.
 *
 * One line per check, a summary, exit code 1 on any failure. Every child process has a time limit.
 * KEEP_TMP=1 keeps the temporary folder for debugging.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { access, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tarballProblems } from './package-files.mjs';

const repo = fileURLToPath(new URL('..', import.meta.url));
const fixtures = join(repo, 'scripts', 'consumers');
const bin = (name) => join(repo, 'node_modules', '.bin', name);
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
const keepTmp = process.env.KEEP_TMP === '1';
/** Node 22, the lowest supported major, as `npm run test:node22` installs it: the JS consumers run on it too when present. */
const node22 = join(repo, '.tools', 'node_modules', '.bin', 'node');

/** The node running this script runs every child too, npm and package bins included (`#!/usr/bin/env node`). */
const childEnv = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`, NO_COLOR: '1' };
const running = new Set();

/**
 * Runs a command with a time limit (the whole process group is killed when it runs out).
 * Resolves with its exit code and output; never rejects on a non-zero exit.
 */
function run(command, args, { cwd = repo, timeoutMs = 60_000, onStdout, stdoutFile } = {}) {
  return new Promise((resolve, reject) => {
    // A file takes the output of a child that exits with process.exit() whole: a pipe loses what was not yet flushed.
    const out = stdoutFile === undefined ? 'pipe' : openSync(stdoutFile, 'w');
    const child = spawn(command, args, { cwd, env: childEnv, stdio: ['ignore', out, 'pipe'], detached: true });
    if (typeof out === 'number') closeSync(out);
    running.add(child);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child, 'SIGKILL');
    }, timeoutMs);
    child.stdout?.setEncoding('utf8').on('data', (chunk) => {
      stdout += chunk;
      onStdout?.(stdout, child);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      running.delete(child);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      if (stdoutFile !== undefined) stdout = readFileSync(stdoutFile, 'utf8');
      resolve({ code, signal, stdout, stderr, timedOut, command: [command, ...args].join(' ') });
    });
  });
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

class CheckError extends Error {
  constructor(message, output = '') {
    super(message);
    this.output = output;
  }
}

/** Throws unless the command exited 0 in time. */
function succeeded(result, what = result.command) {
  const output = `${result.stdout}${result.stderr}`;
  if (result.timedOut) throw new CheckError(`${what}: timed out`, output);
  if (result.code !== 0) throw new CheckError(`${what}: exit ${result.code ?? result.signal}`, output);
  return result;
}

const results = [];
let pending = 0;
const seconds = (since) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
const indent = (text) =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => `    | ${line}`)
    .join('\n');

/** Runs one check and prints its line; `fn` returns a detail for that line or throws. */
async function check(name, fn) {
  const started = performance.now();
  const order = results.length + pending++;
  try {
    const detail = await fn();
    results.push({ order, name, status: 'PASS', time: seconds(started) });
    console.log(`PASS ${name} (${seconds(started)})${detail ? `: ${detail}` : ''}`);
    return true;
  } catch (error) {
    results.push({ order, name, status: 'FAIL', time: seconds(started) });
    console.log(`FAIL ${name} (${seconds(started)}): ${error.message}`);
    if (error.output) console.log(indent(error.output));
    return false;
  } finally {
    pending--;
  }
}

function skip(name, reason) {
  results.push({ order: results.length + pending, name, status: 'SKIP', time: '-' });
  console.log(`SKIP ${name}: ${reason}`);
}

const readJson = async (path) => JSON.parse(await readFile(path, 'utf8'));

const tmp = await mkdtemp(join(tmpdir(), 'payment-sdk-check-package-'));
const app = join(tmp, 'app');
let tarball;

async function cleanup() {
  for (const child of running) killGroup(child, 'SIGKILL');
  if (!keepTmp) await rm(tmp, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    void cleanup().finally(() => process.exit(130));
  });
}

const started = performance.now();
try {
  const packed = await check('npm pack', async () => {
    // `prepack` builds dist/ first, quietly: stdout is only npm's JSON.
    const result = succeeded(await run('npm', ['pack', '--json', '--pack-destination', tmp], { timeoutMs: 120_000 }));
    const [info] = JSON.parse(result.stdout);
    tarball = join(tmp, info.filename);
    const paths = info.files.map((file) => file.path);
    const problems = tarballProblems(paths, repo);
    if (problems.length > 0) throw new CheckError(`the tarball is wrong: ${problems.join(', ')}`);
    return `${info.filename}, ${paths.length} files, ${(info.size / 1024).toFixed(1)} kB packed, ${(info.unpackedSize / 1024).toFixed(1)} kB unpacked`;
  });
  if (!packed) throw new CheckError('nothing to check without a tarball');

  await check('attw --profile node16', async () => {
    // postgres.sql is SQL for the app's migrations, not a module: there are no types to resolve for it.
    const result = await run(
      process.execPath,
      [bin('attw'), tarball, '--profile', 'node16', '--format', 'json', '--exclude-entrypoints', './stores/postgres.sql'],
      {
        timeoutMs: 60_000,
        stdoutFile: join(tmp, 'attw.json'),
      },
    );
    if (result.timedOut || !result.stdout.trimStart().startsWith('{')) succeeded(result, 'attw');
    const { analysis } = JSON.parse(result.stdout);
    // attw exits 0 for a package with no types at all: refuse that too.
    if (!analysis.types) throw new CheckError('attw found no types in the package');
    // The node16 profile ignores node10 resolution (no `exports` support), as attw's exit code does.
    const problems = analysis.problems.filter((problem) => problem.resolutionKind !== 'node10');
    if (problems.length > 0 || result.code !== 0) {
      const lines = problems.map(
        (problem) => `${problem.kind} ${problem.entrypoint ?? ''} (${problem.resolutionKind ?? 'any resolution'})`,
      );
      throw new CheckError(`attw reported ${problems.length} problem(s)`, lines.join('\n') || result.stderr);
    }
    const entrypoints = Object.keys(analysis.entrypoints).join(', ');
    return `no problems for ${entrypoints} (node16 CJS, node16 ESM, bundler; node10 ignored by the profile)`;
  });

  await check('publint --strict', async () => {
    const result = succeeded(await run(process.execPath, [bin('publint'), 'run', tarball, '--strict'], { timeoutMs: 60_000 }));
    if (!result.stdout.includes('All good!')) throw new CheckError('publint reported messages', result.stdout);
    return 'All good!';
  });

  const installed = await check('clean install of the tarball', async () => {
    await mkdir(app, { recursive: true });
    await writeFile(join(app, 'package.json'), `${JSON.stringify({ name: 'consumer-app', private: true, type: 'module' }, null, 2)}\n`);
    succeeded(
      await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error'], {
        cwd: app,
        timeoutMs: 180_000,
      }),
    );
    const own = await readJson(join(app, 'node_modules', 'payment-service-sdk', 'package.json'));
    const versions = [];
    for (const name of Object.keys(own.dependencies ?? {})) {
      versions.push(`${name}@${(await readJson(join(app, 'node_modules', name, 'package.json'))).version}`);
    }
    return `${own.name}@${own.version} with ${versions.join(', ')}`;
  });

  const consumers = [
    ['ESM import consumer', 'esm.mjs'],
    ['CJS require consumer', 'cjs.cjs'],
  ];
  const tsConsumers = [
    ['TypeScript node16 ESM consumer', 'ts-node16-esm'],
    ['TypeScript bundler consumer (module preserve)', 'ts-bundler'],
    // The toolchain notes expected TS1479 here; it does not occur with this package's .d.cts files.
    ['TypeScript node16 CJS consumer', 'ts-node16-cjs'],
  ];
  if (!installed) {
    for (const [name] of [...consumers, ...tsConsumers, ['CLI payment-service-sdk sandbox']]) skip(name, 'the install failed');
  } else {
    const hasNode22 = await access(node22).then(
      () => true,
      () => false,
    );
    for (const [name, file] of consumers) {
      await cp(join(fixtures, file), join(app, file));
      await check(`${name} (Node ${process.versions.node})`, async () => {
        const result = succeeded(await run(process.execPath, [file], { cwd: app, timeoutMs: 30_000 }));
        return result.stdout.trim().split('\n').at(-1);
      });
      if (hasNode22) {
        await check(`${name} (Node 22, .tools)`, async () => {
          const version = succeeded(await run(node22, ['--version'], { cwd: app, timeoutMs: 15_000 })).stdout.trim();
          const result = succeeded(await run(node22, [file], { cwd: app, timeoutMs: 30_000 }));
          return `${version}: ${result.stdout.trim().split('\n').at(-1)}`;
        });
      }
    }
    if (!hasNode22)
      console.log('note: Node 22 consumers not run: .tools/node_modules/.bin/node is missing (`npm run test:node22` installs it)');

    await check('CLI payment-service-sdk sandbox', async () => {
      const cli = join(app, 'node_modules', '.bin', 'payment-service-sdk');
      const help = succeeded(await run(cli, ['--help'], { cwd: app, timeoutMs: 15_000 }));
      if (!help.stdout.startsWith('Usage: payment-service-sdk')) throw new CheckError('--help printed no usage', help.stdout);
      let announced;
      let probe;
      const result = await run(cli, ['sandbox', '--port', '0'], {
        cwd: app,
        timeoutMs: 15_000,
        onStdout: (stdout, child) => {
          if (probe || !stdout.includes('\n')) return;
          probe = Promise.resolve()
            .then(() => {
              announced = JSON.parse(stdout.slice(0, stdout.indexOf('\n')));
              return fetch(announced.baseUrl, { signal: AbortSignal.timeout(5_000) });
            })
            .then((response) => response.status)
            .finally(() => child.kill('SIGTERM'));
          probe.catch(() => {}); // awaited below, after the process has exited
        },
      });
      succeeded(result, 'payment-service-sdk sandbox --port 0, stopped with SIGTERM');
      if (!announced?.baseUrl || !announced.keys?.test) throw new CheckError('no JSON line with baseUrl and keys', result.stdout);
      const status = await probe;
      return `listened on ${announced.baseUrl} (GET / answered ${status}), exit 0 on SIGTERM`;
    });

    // tsc is the slow part: compile the three consumers at the same time.
    await Promise.all(
      tsConsumers.map(([name, folder]) =>
        check(name, async () => {
          const dir = join(app, folder);
          await cp(join(fixtures, folder), dir, { recursive: true });
          await cp(join(fixtures, 'ts', 'consumer.ts'), join(dir, 'consumer.ts'));
          // Types come from the clean install; @types/node (for the node16 fixtures) from this repository.
          const compiled = await run(
            process.execPath,
            [tsc, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false', '--typeRoots', join(repo, 'node_modules', '@types')],
            {
              cwd: dir,
              timeoutMs: 60_000,
            },
          );
          succeeded(compiled, 'tsc');
          const result = succeeded(await run(process.execPath, [join('out', 'consumer.js')], { cwd: dir, timeoutMs: 30_000 }));
          return `compiled (skipLibCheck false) and ran: ${result.stdout.trim().split('\n').at(-1)}`;
        }),
      ),
    );
  }
} catch (error) {
  if (!(error instanceof CheckError)) {
    console.log(`FAIL unexpected error: ${error.stack ?? error}`);
    results.push({ order: Number.MAX_SAFE_INTEGER, name: 'unexpected error', status: 'FAIL', time: '-' });
  }
} finally {
  await cleanup();
}

results.sort((a, b) => a.order - b.order);
const failed = results.filter((result) => result.status === 'FAIL' || result.status === 'SKIP');
console.log(`\n${'check'.padEnd(50)} ${'status'.padEnd(6)} time`);
for (const result of results) console.log(`${result.name.padEnd(50)} ${result.status.padEnd(6)} ${result.time}`);
console.log(
  `\ncheck-package: ${results.length - failed.length} passed, ${failed.length} failed or skipped, in ${seconds(started)}${keepTmp ? ` (kept ${tmp})` : ''}`,
);
process.exitCode = failed.length > 0 ? 1 : 0;
