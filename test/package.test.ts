/**
 * The package from a fresh clone (what is committed; no dist/): `npm pack` builds first and packs
 * what users need and nothing else, `npm run demo` and `npm run example` start with their own output
 * (the build is quiet unless it fails), and the README and CHANGELOG, as the registry shows them,
 * link to the repository by absolute URLs that lead to files and headings that exist.
 *
 * The clone shares this repository's installed node_modules (a symlink to its real folder). Each
 * build takes about 15 s: the three processes below are the suite's slowest, and bounded.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without declarations
import { tarballProblems as problemsOf } from '../scripts/package-files.mjs';
import { slug } from './support/markdown.js';

const ROOT = join(import.meta.dirname, '..');
const tarballProblems = problemsOf as (paths: string[], root: string) => string[];

const children = new Set<ChildProcess>();

/** Runs a command in its own process group, killed as a whole after `timeoutMs`. */
function run(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('PAYMENT_SERVICE_')) env[name] = value;
  Object.assign(env, {
    // npm and the scripts run on this Node; npm asks no registry anything.
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
    NO_COLOR: '1',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  });
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const timer = setTimeout(() => process.kill(-(child.pid ?? 0), 'SIGKILL'), timeoutMs);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** stdout without the two lines npm prints to name the script it runs. */
const withoutNpmBanner = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => !line.startsWith('> '))
    .join('\n')
    .trimStart();

/** Lines tsup prints while building. */
const BUILD_NOISE = /^(CLI|ESM|CJS|DTS) /m;

describe('a fresh clone', () => {
  let clone: string;
  beforeAll(async () => {
    clone = mkdtempSync(join(tmpdir(), 'payment-sdk-clone-'));
    const cloned = await run('git', ['clone', '--quiet', ROOT, clone], tmpdir(), 30_000);
    expect(cloned.code, cloned.stderr).toBe(0);
    // node_modules is a symlink in a worktree and a folder in CI: link to the real one.
    symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(clone, 'node_modules'), 'dir');
  }, 60_000);
  afterAll(() => {
    for (const child of children) process.kill(-(child.pid ?? 0), 'SIGKILL');
    if (clone) rmSync(clone, { recursive: true, force: true });
  });

  it('npm pack builds first and packs dist/, the README, the guides and the CHANGELOG, and nothing from src/ or test/', async () => {
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    const packed = await run('npm', ['pack', '--dry-run', '--json'], clone, 150_000);
    expect(packed.code, packed.stderr).toBe(0);
    expect(packed.stderr).not.toMatch(BUILD_NOISE);
    const [info] = JSON.parse(packed.stdout) as [{ files: { path: string }[] }]; // nothing but npm's JSON on stdout
    const paths = info.files.map((file) => file.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'CHANGELOG.md',
        // The guides the README links to, as the MCP server serves them from the installed package.
        'docs/README.md',
        'docs/webhooks.md',
        'docs/sandbox.md',
        'docs/testing.md',
        'dist/cli.cjs',
        'dist/stores/postgres.sql',
        'dist/fixture.schema.json',
        'dist/openapi.json',
        ...[
          'index',
          'sandbox',
          'testing',
          'stores/sqlite',
          'stores/postgres',
          'stores/redis',
          'queues/pg-boss',
          'queues/bullmq',
          'testcontainers',
        ].flatMap((name) => ['mjs', 'cjs', 'd.ts', 'd.cts'].map((extension) => `dist/${name}.${extension}`)),
      ]),
    );
    expect(paths.filter((path) => /^(src|test|examples|scripts)\//.test(path))).toEqual([]);
    // From docs/, the guides only: not the generated API reference, the JSON documents or the images.
    expect(paths.filter((path) => path.startsWith('docs/') && !/^docs\/[\w-]+\.md$/.test(path))).toEqual([]);
    // Every file of the build and everything package.json names is in it, and nothing else.
    expect(tarballProblems(paths, clone)).toEqual([]);
  }, 180_000);

  it('npm run demo prints the demo from its first line, without the build output', async () => {
    const demo = await run('npm', ['run', 'demo'], clone, 150_000);
    expect(demo.code, demo.stdout + demo.stderr).toBe(0);
    expect(withoutNpmBanner(demo.stdout).split('\n')[0]).toMatch(/^Against the local sandbox at http:\/\/127\.0\.0\.1:\d+$/);
    expect(demo.stdout).toMatch(/\nDone\.\n$/);
    expect(demo.stdout + demo.stderr).not.toMatch(BUILD_NOISE);
  }, 180_000);

  it('npm run example and npm run demo show the errors of a build that fails, and run nothing', async () => {
    // A mistake in the build's configuration fails in a second or two (one in src/ waits for the
    // declarations build): the quiet build shows tsup's output all the same.
    const config = join(clone, 'tsup.config.ts');
    const source = readFileSync(config, 'utf8');
    writeFileSync(config, `${source}\nexport const broken = ;\n`);
    try {
      for (const args of [
        ['run', 'example', 'examples/usage.ts'],
        ['run', 'demo'],
      ]) {
        const result = await run('npm', args, clone, 60_000);
        expect(result.code).not.toBe(0);
        expect(result.stderr).toMatch(/tsup\.config\.ts:\d+:\d+: ERROR: Unexpected ";"/);
        expect(result.stderr).toMatch(/npm run build failed \(exit 1\)/);
        expect(withoutNpmBanner(result.stdout)).toBe('');
      }
    } finally {
      writeFileSync(config, source);
    }
  }, 150_000);
});

describe('package.json and the README as the registry shows them', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const repository = manifest.homepage?.replace(/#readme$/, '') ?? '';

  it('package.json names one GitHub repository as repository, homepage and bug tracker', () => {
    expect(repository).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/);
    expect(manifest.repository).toEqual({ type: 'git', url: `git+${repository}.git` });
    expect(manifest.homepage).toBe(`${repository}#readme`);
    expect(manifest.bugs).toEqual({ url: `${repository}/issues` });
  });

  const anchors = (path: string) =>
    new Set([...readFileSync(path, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map(([, heading = '']) => slug(heading)));

  for (const file of ['README.md', 'CHANGELOG.md']) {
    it(`${file}: every link and image is absolute or an anchor, and those into the repository lead somewhere`, () => {
      const markdown = readFileSync(join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
      const targets = [...markdown.matchAll(/\]\(([^)\s]+)\)|\s(?:src|href)="([^"]+)"/g)].map(([, link, html]) => link ?? html ?? '');
      expect(targets.length).toBeGreaterThan(0);
      const [owner, name] = repository.split('/').slice(-2);
      const inRepository = new RegExp(
        `^(?:${repository}/blob/main/|https://raw\\.githubusercontent\\.com/${owner}/${name}/main/)([^#]+)(?:#(.+))?$`,
      );
      const broken: string[] = [];
      for (const target of targets) {
        if (target.startsWith('#')) {
          if (!anchors(join(ROOT, file)).has(target.slice(1))) broken.push(`${target}: no such heading`);
          continue;
        }
        if (!/^https?:\/\//.test(target)) {
          broken.push(`${target}: relative, so broken on the registry's page`);
          continue;
        }
        const [, path, anchor] = inRepository.exec(target) ?? [];
        if (!path) continue;
        if (!existsSync(join(ROOT, path))) broken.push(`${target}: ${path} is not in the repository`);
        else if (anchor && !anchors(join(ROOT, path)).has(anchor)) broken.push(`${target}: no heading #${anchor} in ${path}`);
      }
      expect(broken).toEqual([]);
    });
  }
});
