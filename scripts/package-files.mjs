// What the published tarball must hold, and nothing more: used by scripts/check-package.mjs on the
// repository's `npm pack` and by test/package.test.ts on a fresh clone's.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Files a user of the package reads or loads, beside everything under dist/ and the guides. */
const DOCUMENTS = ['package.json', 'README.md', 'CHANGELOG.md'];

/** The guides the README links to, docs/*.md (not the generated API reference of docs/api/, nor docs' JSON and images). */
export function guides(root) {
  const docs = join(root, 'docs');
  return existsSync(docs)
    ? readdirSync(docs)
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`)
    : [];
}

/** What `payment-service-sdk sandbox image` builds the container image from, beside dist's CommonJS files. */
const IMAGE_FILES = ['Dockerfile', 'container/healthcheck.cjs'];

/** Every file package.json points at (`main`, `module`, `types`, `bin`, each `exports` target), without `./`. */
export function declaredFiles(manifest) {
  const targets = [manifest.main, manifest.module, manifest.types];
  if (typeof manifest.bin === 'string') targets.push(manifest.bin);
  else targets.push(...Object.values(manifest.bin ?? {}));
  const walk = (value) => {
    if (typeof value === 'string') targets.push(value);
    else if (value && typeof value === 'object') for (const inner of Object.values(value)) walk(inner);
  };
  walk(manifest.exports);
  return [...new Set(targets.filter(Boolean).map((path) => path.replace(/^\.\//, '')))];
}

/**
 * The problems of a tarball holding `paths` (as `npm pack --json` lists them), packed from `root`
 * once dist/ is built there: a file missing (every file of dist/, every file package.json names,
 * the README, the guides of docs/, the CHANGELOG, the container image's Dockerfile and health check,
 * a LICENSE when the repository has one), or a file that is not the package's (sources, tests,
 * examples, scripts, the API reference and the other files of docs/). Empty when the tarball is right.
 */
export function tarballProblems(paths, root) {
  const packed = new Set(paths);
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const dist = join(root, 'dist');
  const built = existsSync(dist)
    ? readdirSync(dist, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'))
    : [];
  const licenses = readdirSync(root).filter((name) => /^(LICENSE|LICENCE)(\.\w+)?$/i.test(name));
  const docs = guides(root);
  const required = [...new Set([...DOCUMENTS, ...docs, ...IMAGE_FILES, ...licenses, ...declaredFiles(manifest), ...built])];
  const problems = required.filter((path) => !packed.has(path)).map((path) => `missing: ${path}`);
  const allowed = (path) =>
    path.startsWith('dist/') || DOCUMENTS.includes(path) || docs.includes(path) || IMAGE_FILES.includes(path) || licenses.includes(path);
  problems.push(...paths.filter((path) => !allowed(path)).map((path) => `not the package's: ${path}`));
  return problems;
}
