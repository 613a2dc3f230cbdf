/**
 * The shape of `src/`: no import cycles (static, dynamic or type-only imports alike), and the
 * layers import downwards only: schemas stand on nothing of ours, the request core on schemas,
 * resources and helpers on both, and nothing in the SDK reaches into the sandbox or the CLI.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Every file of ours each file imports, by path relative to src. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const local = importedFiles
      .map((imported) => imported.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => relative(SRC, resolve(dirname(file), name)).replace(/\.js$/, '.ts'));
    graph.set(relative(SRC, file), local);
  }
  return graph;
}

function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

const layerOf = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file);

/** What each folder may import from, besides itself. */
const ALLOWED: Record<string, string[]> = {
  schemas: [],
  core: ['schemas', 'version.ts'],
  helpers: ['core', 'schemas'],
  resources: ['core', 'schemas', 'helpers'],
  // The webhook stores of `payment-service-sdk/stores/*`: the interface they implement, the errors.
  stores: ['core', 'helpers'],
  // `sandboxTenant` hands each test worker a client of its tenant.
  testing: ['core', 'schemas', 'helpers', 'client.ts'],
  // The OpenAPI generator reads the schemas and the error codes; the sandbox serves its document.
  openapi: ['core', 'schemas', 'version.ts'],
  sandbox: ['core', 'schemas', 'helpers', 'testing', 'openapi', 'version.ts'],
  // The MCP server: tools from the endpoint table (openapi) and the sandbox's control routes, calls through the client.
  mcp: ['core', 'schemas', 'resources', 'openapi', 'sandbox', 'client.ts', 'version.ts'],
  cli: ['core', 'schemas', 'helpers', 'resources', 'sandbox', 'testing', 'mcp', 'client.ts', 'index.ts', 'version.ts'],
};

/** The part of the sandbox a file belongs to: its folder, a file of the request path's top, or `shared` (store, clock, records...). */
function sandboxPart(file: string): string {
  const rest = file.slice('sandbox/'.length);
  if (rest.includes('/')) return rest.slice(0, rest.indexOf('/'));
  return ['index.ts', 'pipeline.ts', 'tenants.ts'].includes(rest) ? rest : 'shared';
}

/**
 * Inside the sandbox, what each part may import from besides itself: the operations stand on the
 * shared modules only, the request steps on the operations and tenants, the pipeline on the steps,
 * the dashboard on the tenants it switches between,
 * and only the composition root (`index.ts`) sees everything. Files are named where a part may use
 * only some of another (HTTP pages use the HTML template, not the dashboard).
 */
const SANDBOX_ALLOWED: Record<string, string[]> = {
  shared: [],
  api: ['shared'],
  http: ['shared', 'views/html.ts', 'views/response.ts'],
  // The request log: its schemas, each tenant's store of entries, the typed methods over them.
  'request-log': ['shared'],
  control: ['shared', 'api', 'http', 'steps', 'tenants.ts', 'request-log'],
  'tenants.ts': ['shared', 'api', 'control/control.ts', 'request-log/store.ts', 'request-log/schema.ts'],
  steps: ['shared', 'api', 'http', 'tenants.ts', 'request-log'],
  views: ['shared', 'api', 'http', 'control/control.ts', 'tenants.ts', 'request-log'],
  'pipeline.ts': ['shared', 'control', 'steps', 'tenants.ts'],
};

describe('source structure', () => {
  const graph = importGraph();

  it('reads the import graph of every source file', () => {
    expect(graph.size).toBeGreaterThan(40);
    expect(graph.get('core/transport.ts')).toContain('schemas/references.ts');
  });

  it('has no import cycle', () => {
    expect(cycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it.each(Object.keys(ALLOWED))('%s/ imports only from the layers below it', (layer) => {
    const crossings = [...graph]
      .filter(([file]) => layerOf(file) === layer)
      .flatMap(([file, imports]) =>
        imports
          .filter((target) => layerOf(target) !== layer && !ALLOWED[layer]?.includes(layerOf(target)))
          .map((target) => `${file} -> ${target}`),
      );
    expect(crossings).toEqual([]);
  });

  it.each(Object.keys(SANDBOX_ALLOWED))('sandbox: %s imports only what lies under it', (part) => {
    const crossings = [...graph]
      .filter(([file]) => file.startsWith('sandbox/') && sandboxPart(file) === part)
      .flatMap(([file, imports]) =>
        imports
          .filter((target) => target.startsWith('sandbox/'))
          .filter((target) => {
            const targetPart = sandboxPart(target);
            const allowed = SANDBOX_ALLOWED[part] ?? [];
            return targetPart !== part && !allowed.includes(targetPart) && !allowed.includes(target.slice('sandbox/'.length));
          })
          .map((target) => `${file} -> ${target}`),
      );
    expect(crossings).toEqual([]);
  });

  it('opens every sandbox module with a comment saying what it is for', () => {
    const silent = sourceFiles(join(SRC, 'sandbox'))
      .filter((file) => !/^\/(\*\*|\/)/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(silent).toEqual([]);
  });

  it('sees the sandbox as its parts (the check itself)', () => {
    expect(graph.get('sandbox/pipeline.ts')).toContain('sandbox/steps/tenant.ts');
    expect(['sandbox/store.ts', 'sandbox/api/pos.ts', 'sandbox/views/html.ts', 'sandbox/index.ts'].map(sandboxPart)).toEqual([
      'shared',
      'api',
      'views',
      'index.ts',
    ]);
  });

  it('finds a cycle when there is one (the check itself)', () => {
    const looped = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(cycles(looped)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});
