#!/usr/bin/env node
// `npm run image`: the sandbox's container image, `payment-service-sdk/sandbox:<version>` and
// `:latest`, from the root Dockerfile. It builds dist with the repository's own build (skipped with
// `--no-build`, when dist was just built), then stages what the image copies in a throw-away build
// context, so the build needs no network beyond the base image:
//   app/dist/          the CommonJS files of dist (the CLI and its chunks; no maps, no types, no ESM copy)
//   app/node_modules/  the runtime dependencies dist loads, as npm ci installed them (no dev dependencies)
//   app/healthcheck.cjs, app/package.json
//   volume/data/       an empty folder: /data, owned by the image's `node` user
// and runs `docker build`, or `podman build` where no Docker engine answers (PAYMENT_SDK_IMAGE_ENGINE
// picks one). BASE (an environment variable) is passed on as the Dockerfile's BASE build argument.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
/** The image's name, without its tag. */
const IMAGE = 'payment-service-sdk/sandbox';

function fail(message) {
  process.stderr.write(`npm run image: ${message}\n`);
  process.exit(1);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) fail(`could not run ${command}: ${result.error.message}`);
  if (result.status !== 0) fail(`${command} ${args.slice(0, 2).join(' ')} failed (exit ${result.status ?? result.signal})`);
}

/** Whether `command args` runs and exits 0 within 10 s. */
function succeeds(command, args) {
  return spawnSync(command, args, { stdio: 'ignore', timeout: 10_000 }).status === 0;
}

function engine() {
  const chosen = process.env.PAYMENT_SDK_IMAGE_ENGINE;
  if (chosen) {
    if (chosen !== 'docker' && chosen !== 'podman') fail(`PAYMENT_SDK_IMAGE_ENGINE must be docker or podman, got ${chosen}`);
    return chosen;
  }
  if (succeeds('docker', ['info', '--format', '{{.ServerVersion}}'])) return 'docker';
  if (succeeds('podman', ['--version'])) return 'podman';
  fail('neither a Docker engine nor podman answers: start Docker, or install podman (scripts/podman.sh install)');
}

/**
 * The packages dist's CommonJS files load (`require('x')`, `import('x')`: the runtime dependencies
 * the build left external; zod, bundled, is not among them), with their own dependencies.
 */
function runtimePackages(files) {
  const found = new Set();
  const visit = (name) => {
    if (found.has(name)) return;
    const manifest = join(root, 'node_modules', name, 'package.json');
    if (!existsSync(manifest)) fail(`node_modules/${name} is missing: run npm ci first`);
    found.add(name);
    for (const dependency of Object.keys(JSON.parse(readFileSync(manifest, 'utf8')).dependencies ?? {})) visit(dependency);
  };
  const declared = new Set(Object.keys(pkg.dependencies ?? {}));
  for (const file of files) {
    const text = readFileSync(join(root, 'dist', file), 'utf8');
    for (const [, specifier] of text.matchAll(/\b(?:require|import)\(\s*["'`]([^"'`./][^"'`]*)["'`]\s*\)/g)) {
      const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
      if (declared.has(name)) visit(name);
    }
  }
  return [...found].sort();
}

function stage() {
  const context = mkdtempSync(join(tmpdir(), 'payment-sdk-image-'));
  const app = join(context, 'app');
  mkdirSync(join(app, 'dist'), { recursive: true });
  const cjs = readdirSync(join(root, 'dist')).filter((file) => file.endsWith('.cjs'));
  if (!cjs.includes('cli.cjs')) fail('dist/cli.cjs is missing: run npm run build (or npm run image without --no-build)');
  for (const file of cjs) cpSync(join(root, 'dist', file), join(app, 'dist', file));
  for (const name of runtimePackages(cjs)) {
    cpSync(join(root, 'node_modules', name), join(app, 'node_modules', name), {
      recursive: true,
      // Source maps and type declarations are not run.
      filter: (source) => !/\.(map|d\.ts|d\.cts|d\.mts)$/.test(source),
    });
  }
  cpSync(join(root, 'scripts', 'container', 'healthcheck.cjs'), join(app, 'healthcheck.cjs'));
  const { name, version, license } = pkg;
  writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name, version, license, private: true }, null, 2)}\n`);
  mkdirSync(join(context, 'volume', 'data'), { recursive: true });
  return context;
}

/**
 * The digest of what the image is made of: dist's CommonJS files, the Dockerfile and the health
 * check (names and contents, in that order), put on the image as the label
 * `payment-service-sdk.build-digest`: the container tests rebuild an image made from anything else.
 */
function buildDigest(files) {
  const hash = createHash('sha256');
  const inputs = [...[...files].sort().map((file) => join('dist', file)), 'Dockerfile', join('scripts', 'container', 'healthcheck.cjs')];
  for (const file of inputs) {
    hash.update(file);
    hash.update(readFileSync(join(root, file)));
  }
  return hash.digest('hex');
}

function revision() {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

function main() {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => arg !== '--no-build');
  if (unknown.length > 0) fail(`unknown argument ${unknown[0]} (only --no-build)`);
  if (!args.includes('--no-build')) run(process.execPath, [join(root, 'scripts', 'build-quiet.mjs')]);
  const tool = engine();
  const context = stage();
  const digest = buildDigest(readdirSync(join(root, 'dist')).filter((file) => file.endsWith('.cjs')));
  try {
    const source = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
    const buildArgs = [`VERSION=${pkg.version}`, `SOURCE=${source}`, `LICENSE=${pkg.license}`, `REVISION=${revision()}`];
    if (process.env.BASE) buildArgs.push(`BASE=${process.env.BASE}`);
    run(tool, [
      'build',
      // podman's default OCI format has no HEALTHCHECK.
      ...(tool === 'podman' ? ['--format', 'docker'] : []),
      ...buildArgs.flatMap((arg) => ['--build-arg', arg]),
      '--label',
      `payment-service-sdk.build-digest=${digest}`,
      '-t',
      `${IMAGE}:${pkg.version}`,
      '-t',
      `${IMAGE}:latest`,
      '-f',
      join(root, 'Dockerfile'),
      context,
    ]);
    process.stderr.write(
      `Built ${IMAGE}:${pkg.version} and ${IMAGE}:latest with ${tool}${process.env.BASE ? ` on ${process.env.BASE}` : ''}.\n`,
    );
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}

main();
