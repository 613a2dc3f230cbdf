#!/usr/bin/env node
// `npm run image`: the sandbox's container image, `payment-service-sdk/sandbox:<version>` and
// `:latest`, from the root Dockerfile. It builds dist with the repository's own build (skipped with
// `--no-build`, when dist was just built), then runs `docker build` of the repository root, or
// `podman build` where no Docker engine answers (PAYMENT_SDK_IMAGE_ENGINE picks one): the same build
// as `npm run build && docker build -t payment-service-sdk/sandbox .`, plus the build arguments
// VERSION, SOURCE, LICENSE, REVISION (git's HEAD) and BUILD_DIGEST (see buildDigest). .dockerignore
// sends only what the image copies (dist's CommonJS files, the health check), so the build needs no
// network beyond the base image. BASE (an environment variable) is passed on as the BASE argument.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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
 * The digest of what the image is made of: dist's CommonJS files, the Dockerfile, .dockerignore and
 * the health check (names and contents, in that order), put on the image as the label
 * `payment-service-sdk.build-digest` (the BUILD_DIGEST argument): the container tests rebuild an
 * image made from anything else (test/support/containers.ts computes the same digest).
 */
function buildDigest(files) {
  const hash = createHash('sha256');
  const inputs = [
    ...[...files].sort().map((file) => join('dist', file)),
    'Dockerfile',
    '.dockerignore',
    join('container', 'healthcheck.cjs'),
  ];
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
  const cjs = existsSync(join(root, 'dist')) ? readdirSync(join(root, 'dist')).filter((file) => file.endsWith('.cjs')) : [];
  if (!cjs.includes('cli.cjs')) fail('dist/cli.cjs is missing: run npm run build (or npm run image without --no-build)');
  const tool = engine();
  const source = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
  const buildArgs = [
    `VERSION=${pkg.version}`,
    `SOURCE=${source}`,
    `LICENSE=${pkg.license}`,
    `REVISION=${revision()}`,
    `BUILD_DIGEST=${buildDigest(cjs)}`,
  ];
  if (process.env.BASE) buildArgs.push(`BASE=${process.env.BASE}`);
  run(tool, [
    'build',
    // podman's default OCI format has no HEALTHCHECK.
    ...(tool === 'podman' ? ['--format', 'docker'] : []),
    ...buildArgs.flatMap((arg) => ['--build-arg', arg]),
    '-t',
    `${IMAGE}:${pkg.version}`,
    '-t',
    `${IMAGE}:latest`,
    // The repository is the context; .dockerignore keeps it to what the image copies.
    root,
  ]);
  process.stderr.write(
    `Built ${IMAGE}:${pkg.version} and ${IMAGE}:latest with ${tool}${process.env.BASE ? ` on ${process.env.BASE}` : ''}.\n`,
  );
}

main();
