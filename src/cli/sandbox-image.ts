/**
 * `sandbox image [--tag NAME]... [--base IMAGE] [--engine docker|podman]`: the sandbox's container
 * image, built from this installed package's own files (its `Dockerfile`, dist's CommonJS files
 * and `container/healthcheck.cjs`, all in the published package), with Docker where an engine
 * answers and podman otherwise. Nothing is fetched but the base image, and that only when the
 * engine does not have it yet: offline once the base is there. The engine's output goes to
 * stderr; stdout gets each tag built, one a line.
 */
import { type SpawnOptions, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { EXIT, ExitError, type Terminal, terminalSafe, UsageError } from './io.js';

/** The image's name, as `PaymentSandboxContainer` runs it by default (`payment-service-sdk/sandbox:<version>`). */
export const SANDBOX_IMAGE_NAME = 'payment-service-sdk/sandbox';

/** What the Dockerfile copies, besides dist's CommonJS files: the files of the package the image needs. */
const HEALTHCHECK = join('container', 'healthcheck.cjs');

const ENGINES = ['docker', 'podman'] as const;
type Engine = (typeof ENGINES)[number];

/** How long the question "does this engine answer?" may take. */
const PROBE_TIMEOUT_MS = 15_000;

/**
 * An image reference as the engines take one: `[host[:port]/]path[:tag]`, the path's components
 * lower case (Docker's grammar, without digests: a build makes a tag, not a digest).
 */
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const REFERENCE = new RegExp(`^(?:[a-zA-Z0-9.-]+(?::\\d+)?/)?${COMPONENT}(?:/${COMPONENT})*(?::[\\w][\\w.-]{0,127})?$`);

function reference(option: string, value: string): string {
  if (value.length > 255 || !REFERENCE.test(value))
    throw new UsageError(
      `--${option} must be an image name such as payment-service-sdk/sandbox:dev (lower case, an optional :tag), got ${value}`,
    );
  return value;
}

/** The installed package's folder: the one above the bin's dist/ (dist/cli.cjs defines __filename; the ESM build runs as the main script). */
export function packageRoot(): string {
  const bin = typeof __filename === 'string' ? __filename : realpathSync(process.argv[1] ?? '');
  return dirname(dirname(bin));
}

interface PackageFiles {
  root: string;
  version: string;
  license: string | undefined;
  source: string | undefined;
  /** dist's CommonJS files, by name. */
  cjs: string[];
}

/** The package's own files the Dockerfile needs, or an error saying which one is missing. */
function packageFiles(root: string): PackageFiles {
  let manifest: { name?: string; version?: string; license?: string; repository?: { url?: string } | string };
  try {
    manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  } catch {
    throw new ExitError(`no package.json of payment-service-sdk in ${root}: run the bin of an installed package`, EXIT.failure);
  }
  const dist = join(root, 'dist');
  const cjs = existsSync(dist) ? readdirSync(dist).filter((name) => name.endsWith('.cjs')) : [];
  const missing = [
    ...(existsSync(join(root, 'Dockerfile')) ? [] : ['Dockerfile']),
    ...(existsSync(join(root, HEALTHCHECK)) ? [] : [HEALTHCHECK]),
    ...(cjs.includes('cli.cjs') ? [] : [join('dist', 'cli.cjs')]),
  ];
  if (missing.length > 0)
    throw new ExitError(
      `${root} has no ${missing.join(', ')}: the image is built from the package's own files (in a clone, run npm run build first, or npm run image)`,
      EXIT.failure,
    );
  const url = typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;
  return {
    root,
    version: manifest.version ?? '0.0.0',
    license: manifest.license,
    source: url?.replace(/^git\+/, '').replace(/\.git$/, ''),
    cjs,
  };
}

/** Runs `command args`; resolves with its exit code (`null` when it could not start or was killed) and its output. */
function capture(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string; error?: string }> {
  return new Promise((done) => {
    let output = '';
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    // A timer of its own: spawn's `timeout` outlives a command that never started (ENOENT), holding the process 15 s.
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    const finish = (result: { code: number | null; output: string; error?: string }) => {
      clearTimeout(timer);
      done(result);
    };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', (error: NodeJS.ErrnoException) =>
      finish({ code: null, output, error: error.code === 'ENOENT' ? 'not installed' : error.message }),
    );
    child.on('close', (code, signal) =>
      finish({ code, output, ...(signal ? { error: `no answer within ${PROBE_TIMEOUT_MS / 1000} s` } : {}) }),
    );
  });
}

/** Why an engine does not answer, in one line. */
function why(probe: { code: number | null; output: string; error?: string }): string {
  if (probe.error) return probe.error;
  const line = probe.output.split('\n').find((text) => /error|cannot|denied|not/i.test(text)) ?? probe.output.split('\n').find(Boolean);
  return terminalSafe((line ?? `exit ${probe.code}`).trim().slice(0, 300));
}

/**
 * The engine to build with: the one asked for, else Docker when `docker info` answers (a Docker
 * engine, Docker Desktop, or any Docker API `DOCKER_HOST` names), else podman when `podman info`
 * does. Neither: an error saying why each did not.
 */
async function chooseEngine(asked: Engine | undefined, env: NodeJS.ProcessEnv): Promise<Engine> {
  const probes: Record<Engine, string[]> = {
    docker: ['info', '--format', '{{.ServerVersion}}'],
    podman: ['info', '--format', '{{.Version.Version}}'],
  };
  const reasons: string[] = [];
  for (const engine of asked ? [asked] : ENGINES) {
    const probe = await capture(engine, probes[engine], env);
    if (probe.code === 0) return engine;
    reasons.push(`${engine}: ${why(probe)}`);
  }
  throw new ExitError(
    asked
      ? `${asked} cannot build the image (${reasons.join('; ')}): start it, or leave out --engine to use whichever answers`
      : `neither Docker nor podman can build the image (${reasons.join('; ')}): start Docker (or Docker Desktop), or install podman, and run again`,
    EXIT.failure,
  );
}

/** A build context of exactly what the Dockerfile copies, in a folder of its own (removed by `remove`). */
function stageContext(files: PackageFiles): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'payment-sdk-image-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  // However the process ends (Ctrl-C during the build), the folder goes with it.
  process.once('exit', remove);
  mkdirSync(join(dir, 'dist'));
  mkdirSync(join(dir, 'container'));
  copyFileSync(join(files.root, 'Dockerfile'), join(dir, 'Dockerfile'));
  copyFileSync(join(files.root, HEALTHCHECK), join(dir, HEALTHCHECK));
  for (const name of files.cjs) copyFileSync(join(files.root, 'dist', name), join(dir, 'dist', name));
  return {
    dir,
    remove: () => {
      process.removeListener('exit', remove);
      remove();
    },
  };
}

/** Runs the build, its output (both streams) on `terminal.stderr`; resolves with its exit code. */
function build(engine: Engine, args: string[], terminal: Terminal, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((done, fail) => {
    const options: SpawnOptions = { env, stdio: ['ignore', 'pipe', 'pipe'] };
    const child = spawn(engine, args, options);
    child.stdout?.on('data', (chunk: Buffer) => terminal.stderr.write(chunk));
    child.stderr?.on('data', (chunk: Buffer) => terminal.stderr.write(chunk));
    child.on('error', (error) => fail(new ExitError(`could not run ${engine}: ${error.message}`, EXIT.failure)));
    child.on('close', (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}

interface ImageFlags {
  tag?: string[];
  base?: string;
  engine?: string;
}

/** Builds the image; returns the tags built. */
export async function buildSandboxImage(flags: ImageFlags, terminal: Terminal, root = packageRoot()): Promise<string[]> {
  const engineAsked = flags.engine;
  if (engineAsked !== undefined && !(ENGINES as readonly string[]).includes(engineAsked))
    throw new UsageError(`--engine must be docker or podman, got ${engineAsked}`);
  const base = flags.base === undefined ? undefined : reference('base', flags.base);
  const given = (flags.tag ?? []).map((tag) => reference('tag', tag));
  const files = packageFiles(root);
  const tags = given.length > 0 ? given : [`${SANDBOX_IMAGE_NAME}:${files.version}`, `${SANDBOX_IMAGE_NAME}:latest`];
  const { env } = terminal;
  const engine = await chooseEngine(engineAsked as Engine | undefined, env);
  const buildArgs = [
    `VERSION=${files.version}`,
    ...(files.source ? [`SOURCE=${files.source}`] : []),
    ...(files.license ? [`LICENSE=${files.license}`] : []),
    ...(base ? [`BASE=${base}`] : []),
  ];
  const context = stageContext(files);
  terminal.stderr.write(
    `Building ${tags.join(', ')} with ${engine} from ${root}${base ? ` on ${base}` : " on the Dockerfile's base (node:24-slim; --base IMAGE for another)"}.\n`,
  );
  try {
    const code = await build(
      engine,
      [
        'build',
        // podman's default OCI format has no HEALTHCHECK.
        ...(engine === 'podman' ? ['--format', 'docker'] : []),
        ...buildArgs.flatMap((arg) => ['--build-arg', arg]),
        ...tags.flatMap((tag) => ['-t', tag]),
        '-f',
        join(context.dir, 'Dockerfile'),
        context.dir,
      ],
      terminal,
      env,
    );
    if (code !== 0)
      throw new ExitError(
        `${engine} build failed (exit ${code}; its output is above)${base ? '' : ': without network, give a base the engine has with --base IMAGE'}`,
        EXIT.failure,
      );
  } finally {
    context.remove();
  }
  return tags;
}

/** Adds `image` under `sandbox`. */
export function registerSandboxImage(sandbox: Command, terminal: Terminal): void {
  sandbox
    .command('image')
    .description(
      "build the sandbox's container image from this installed package's own files (Docker where an engine answers, else podman); prints each tag built",
    )
    .option(
      '--tag <name>',
      'tag the image NAME (repeatable; default payment-service-sdk/sandbox:<version> and :latest)',
      (value: string, all: string[] = []) => [...all, value],
    )
    .option(
      '--base <image>',
      "the base image, the Dockerfile's BASE argument (default node:24-slim): one with node 22 or later and a `node` user (uid 1000)",
    )
    .option('--engine <engine>', 'docker or podman (default: docker where an engine answers, else podman)')
    .addHelpText(
      'after',
      '\nNothing is fetched but the base image, and only when the engine does not have it: offline once the base is there.\n' +
        'Exit 0 once built (stdout: the tags, one a line); 1 when neither engine answers or the build fails; 2 for a usage mistake.\n\n' +
        'Example: npx payment-service-sdk sandbox image --tag payment-service-sdk/sandbox:dev\n' +
        '         docker run --rm -p 127.0.0.1:4010:4010 payment-service-sdk/sandbox:dev',
    )
    .action(async (flags: ImageFlags) => {
      const tags = await buildSandboxImage(flags, terminal);
      terminal.stdout.write(`${tags.join('\n')}\n`);
    });
}
