#!/usr/bin/env node
/**
 * Checks the package as users get it: the `npm pack` tarball, not the repository.
 *
 *   1. `npm pack` (its `prepack` builds dist/), with every file the package needs and no other;
 *   2. attw on the tarball (every resolution: node10, node16 CJS and ESM, bundler), and
 *      `publint --strict` on the tarball;
 *   3. a clean install of the tarball in a temporary folder (dependencies from the registry), then
 *      consumers from scripts/consumers/: ESM `import`, CJS `require`, the `payment-service-sdk`
 *      bin, and TypeScript consumers (node10, node16 and nodenext, CJS and ESM, bundler; strict and
 *      exactOptionalPropertyTypes) compiled with this repository's tsc and run;
 *   4. Jest 30 projects on the tarball, in a folder of their own where Jest, ts-jest and Babel are
 *      installed from the registry (one `npm install`, while the package builds): plain CommonJS in
 *      Jest's default mode, ts-jest with the NestJS 11 scaffold's configuration, babel-jest, all with
 *      no flag and no `transformIgnorePatterns`, and native ESM under `--experimental-vm-modules`.
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
function run(command, args, { cwd = repo, timeoutMs = 60_000, onStdout, stdoutFile, env = childEnv } = {}) {
  return new Promise((resolve, reject) => {
    // A file takes the output of a child that exits with process.exit() whole: a pipe loses what was not yet flushed.
    const out = stdoutFile === undefined ? 'pipe' : openSync(stdoutFile, 'w');
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', out, 'pipe'], detached: true });
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
const jestApp = join(tmp, 'jest-app');

/**
 * What the Jest projects install beside the tarball, pinned. TypeScript 5.9 is the NestJS 11
 * scaffold's (^5.7): its `module: commonjs` implies node10 resolution (TypeScript 6 implies
 * bundler), so ts-jest type-checks the imports as those users' projects do.
 */
const JEST_PACKAGES = [
  'jest@30.5.2',
  'ts-jest@29.4.15',
  'typescript@5.9.3',
  '@types/jest@30.0.0',
  '@types/node@24.19.2',
  '@babel/core@8.1.2',
  '@babel/preset-env@8.0.7',
  '@babel/preset-typescript@8.0.7',
  'babel-jest@30.5.2',
];

/**
 * The Jest projects of scripts/consumers/ (`folder`), each given the shared test body
 * (scripts/consumers/jest/payments.suite.cjs) in `testDir`, and the shared TypeScript test file as
 * `tsEntry` where it has one. Only the ESM project runs with Node's flag.
 */
const JEST_PROJECTS = [
  // Also runs the Jest example of docs/testing.md (the tarball's guide) as readme.test.js.
  { name: 'Jest CommonJS require (default mode)', folder: 'jest-cjs', testDir: '.', readmeTest: 'readme.test.js' },
  { name: 'Jest ts-jest (NestJS 11 scaffold config)', folder: 'jest-ts', testDir: 'src', tsEntry: 'payments.spec.ts' },
  { name: 'Jest babel-jest (preset-env, preset-typescript)', folder: 'jest-babel', testDir: '.', tsEntry: 'payments.test.ts' },
  { name: 'Jest native ESM (--experimental-vm-modules)', folder: 'jest-esm', testDir: '.', nodeFlags: ['--experimental-vm-modules'] },
];

/**
 * Jest, ts-jest, Babel and their types, for every Jest project at once: one `npm install` (which
 * keeps a lockfile, so that the tarball's install after it resolves nothing again).
 */
async function installJestToolchain() {
  await mkdir(jestApp, { recursive: true });
  await writeFile(join(jestApp, 'package.json'), `${JSON.stringify({ name: 'consumer-jest-app', private: true }, null, 2)}\n`);
  succeeded(
    await run('npm', ['install', ...JEST_PACKAGES, '--no-audit', '--no-fund', '--loglevel=error'], { cwd: jestApp, timeoutMs: 240_000 }),
  );
  const { version } = await readJson(join(jestApp, 'node_modules', 'jest', 'package.json'));
  return `jest@${version} and ${JEST_PACKAGES.length - 1} more`;
}

/** The tarball, with its dependencies from the registry, beside Jest. */
async function installTarballForJest() {
  succeeded(
    await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
      cwd: jestApp,
      timeoutMs: 180_000,
    }),
  );
  const { version } = await readJson(join(jestApp, 'node_modules', 'payment-service-sdk', 'package.json'));
  return `payment-service-sdk@${version}`;
}

/** The `js` block of the "Jest" section of docs/testing.md, the guide the tarball ships. */
async function readmeJestExample() {
  const guide = await readFile(join(jestApp, 'node_modules', 'payment-service-sdk', 'docs', 'testing.md'), 'utf8');
  const section = guide.split(/^## /m).find((part) => part.startsWith('Jest\n')) ?? '';
  const code = /^```js\n([\s\S]*?)^```$/m.exec(section)?.[1];
  if (!code) throw new CheckError('docs/testing.md has no js block in a "Jest" section');
  return code;
}

/** Copies a Jest project in with the shared test body and runs Jest in it; it must exit by itself. */
async function runJestProject({ folder, testDir, tsEntry, readmeTest, nodeFlags = [] }) {
  const dir = join(jestApp, folder);
  await cp(join(fixtures, folder), dir, { recursive: true });
  const tests = join(dir, testDir);
  await mkdir(tests, { recursive: true });
  for (const file of ['payments.suite.cjs', 'payments.suite.d.cts']) await cp(join(fixtures, 'jest', file), join(tests, file));
  if (tsEntry) await cp(join(fixtures, 'jest', 'payments.entry.ts'), join(tests, tsEntry));
  if (readmeTest) await writeFile(join(tests, readmeTest), await readmeJestExample());
  const jest = join(jestApp, 'node_modules', 'jest', 'bin', 'jest.js');
  const result = await run(process.execPath, [...nodeFlags, jest, '--ci', '--cacheDirectory', join(tmp, 'jest-cache')], {
    cwd: dir,
    timeoutMs: 120_000,
    // No flag from the environment either: the projects run as Jest's users run them.
    env: { ...childEnv, NODE_OPTIONS: '' },
  });
  if (result.timedOut) throw new CheckError('Jest did not exit on its own (killed after 120 s)', result.stderr);
  succeeded(result, 'jest');
  const summary = /^Tests:\s+(.+)$/m.exec(result.stderr)?.[1];
  if (!summary || /failed|skipped|todo/.test(summary) || !/^\d+ passed, \d+ total$/.test(summary))
    throw new CheckError(`unexpected Jest summary: ${summary}`, result.stderr);
  return `${summary}${nodeFlags.length > 0 ? ` (node ${nodeFlags.join(' ')})` : ', no flag'}`;
}
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
// Jest and its transformers install while the package builds, the two longest steps side by side;
// the tarball joins them once packed.
const jestToolchain = check('install of Jest, ts-jest and Babel', () => installJestToolchain());
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

  await check('attw (node10, node16, bundler)', async () => {
    // postgres.sql is SQL for the app's migrations, not a module: there are no types to resolve for it.
    const result = await run(
      process.execPath,
      [bin('attw'), tarball, '--format', 'json', '--exclude-entrypoints', './stores/postgres.sql'],
      {
        timeoutMs: 60_000,
        stdoutFile: join(tmp, 'attw.json'),
      },
    );
    if (result.timedOut || !result.stdout.trimStart().startsWith('{')) succeeded(result, 'attw');
    const { analysis } = JSON.parse(result.stdout);
    // attw exits 0 for a package with no types at all: refuse that too.
    if (!analysis.types) throw new CheckError('attw found no types in the package');
    // node10 (no `exports`: `module: commonjs` before TypeScript 6) finds the subpaths through `typesVersions`.
    const problems = analysis.problems;
    if (problems.length > 0 || result.code !== 0) {
      const lines = problems.map(
        (problem) => `${problem.kind} ${problem.entrypoint ?? ''} (${problem.resolutionKind ?? 'any resolution'})`,
      );
      throw new CheckError(`attw reported ${problems.length} problem(s)`, lines.join('\n') || result.stderr);
    }
    const entrypoints = Object.keys(analysis.entrypoints).join(', ');
    return `no problems for ${entrypoints} (node10, node16 CJS, node16 ESM, bundler)`;
  });

  await check('publint --strict', async () => {
    const result = succeeded(await run(process.execPath, [bin('publint'), 'run', tarball, '--strict'], { timeoutMs: 60_000 }));
    if (!result.stdout.includes('All good!')) throw new CheckError('publint reported messages', result.stdout);
    return 'All good!';
  });

  // Beside the clean install; the Jest projects run last.
  const jestInstalled = jestToolchain.then((ready) => ready && check('install of the tarball beside Jest', () => installTarballForJest()));
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
    // node10: what `module: commonjs` implies before TypeScript 6; subpaths through `typesVersions`.
    ['TypeScript node10 consumer (module commonjs)', 'ts-node10'],
    ['TypeScript node16 ESM consumer', 'ts-node16-esm'],
    // The toolchain notes expected TS1479 here; it does not occur with this package's .d.cts files.
    ['TypeScript node16 CJS consumer', 'ts-node16-cjs'],
    ['TypeScript nodenext ESM consumer', 'ts-nodenext'],
    // The NestJS 11 scaffold's setting: `module: nodenext` in a package with no "type".
    ['TypeScript nodenext CJS consumer', 'ts-nodenext-cjs'],
    ['TypeScript bundler consumer (module preserve)', 'ts-bundler'],
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

    // The consumers import every subpath's types, /testcontainers too: its declarations need the
    // optional peer, installed here (after the JS consumers checked the subpath without it).
    const peer = `testcontainers@${(await readJson(join(repo, 'package.json'))).devDependencies.testcontainers}`;
    const peerInstalled = await check(`install of the optional peer ${peer} for the TypeScript consumers`, async () => {
      succeeded(
        await run('npm', ['install', peer, '--no-save', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
          cwd: app,
          timeoutMs: 180_000,
        }),
      );
    });
    // tsc is the slow part: compile the consumers at the same time.
    if (!peerInstalled) for (const [name] of tsConsumers) skip(name, 'the optional peer did not install');
    else
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

  if (!(await jestInstalled)) {
    for (const { name } of JEST_PROJECTS) skip(name, 'the install of Jest or of the tarball beside it failed');
  } else {
    await Promise.all(JEST_PROJECTS.map((project) => check(project.name, () => runJestProject(project))));
  }
} catch (error) {
  if (!(error instanceof CheckError)) {
    console.log(`FAIL unexpected error: ${error.stack ?? error}`);
    results.push({ order: Number.MAX_SAFE_INTEGER, name: 'unexpected error', status: 'FAIL', time: '-' });
  }
} finally {
  await cleanup();
  await jestToolchain; // killed by the cleanup when still running: its line comes before the summary
}

results.sort((a, b) => a.order - b.order);
const failed = results.filter((result) => result.status === 'FAIL' || result.status === 'SKIP');
console.log(`\n${'check'.padEnd(50)} ${'status'.padEnd(6)} time`);
for (const result of results) console.log(`${result.name.padEnd(50)} ${result.status.padEnd(6)} ${result.time}`);
console.log(
  `\ncheck-package: ${results.length - failed.length} passed, ${failed.length} failed or skipped, in ${seconds(started)}${keepTmp ? ` (kept ${tmp})` : ''}`,
);
process.exitCode = failed.length > 0 ? 1 : 0;
