import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The CommonJS build (dist/**/*.cjs) is what Jest's default mode, ts-jest and babel-jest load: a
// module system of their own that refuses `import()` without --experimental-vm-modules and cannot
// `require` an ESM-only package. scripts/check-package.mjs runs real Jest projects on the packed
// tarball; this checks the build itself, quickly. `npm test` builds dist/ first.
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const cjsFiles = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.cjs'));
const read = (path: string) => readFileSync(join(dist, path), 'utf8');

describe('the CJS build', () => {
  it('has no import(), and requires none of the ESM-only dependencies (they are bundled)', () => {
    expect(cjsFiles.length).toBeGreaterThan(10);
    const offending = cjsFiles.filter((path) => /\bimport\(|require\(["'](ky|p-retry|jose|uuid)["']\)/.test(read(path)));
    expect(offending).toEqual([]);
  });

  it("loads its lazy chunks with esbuild's require shim, from dist/ where the shim is, by paths that exist", () => {
    const shims = cjsFiles.filter((path) => /^var __require = /m.test(read(path)));
    expect(shims.map((path) => relative(dist, join(dist, path)))).toEqual([expect.not.stringContaining('/')]);
    const lazy = cjsFiles.flatMap((path) =>
      [...read(path).matchAll(/__require\("(\.[^"]+)"\)/g)].map(([, target = '']) => ({ path, target })),
    );
    expect(lazy.length).toBeGreaterThan(3);
    for (const { path, target } of lazy) {
      expect(path, `${path} requires ${target} through the shim`).not.toContain('/');
      expect(existsSync(join(dist, target)), `${target}, required by ${path}`).toBe(true);
    }
  });

  it('has CommonJS declarations that import only CommonJS ones and zod (dual), never an ESM-only .d.ts (TS1479)', () => {
    const declarations = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.d.cts'));
    expect(declarations.length).toBeGreaterThanOrEqual(6);
    // The queues' declarations name their own engine shapes: they need neither pg-boss's nor bullmq's types.
    expect(declarations).toEqual(expect.arrayContaining([join('queues', 'pg-boss.d.cts'), join('queues', 'bullmq.d.cts')]));
    const specifiers = new Set(
      declarations.flatMap((path) =>
        [...read(path).matchAll(/^(?:import|export)\b[^;]*?from '([^']+)'/gm)].map(([, specifier]) => specifier),
      ),
    );
    const packages = [...specifiers].filter((specifier) => !/^\.\.?\/[\w./-]+\.cjs$|^zod\/mini$/.test(specifier ?? ''));
    // Beyond zod, only an optional peer that is itself CommonJS (testcontainers, for its subpath's
    // types), and the MCP SDK for /mcp's: its server is what createMcpServer returns. That SDK
    // ships ESM types only, so a CommonJS consumer meets TS1479 with the SDK itself, ours or not.
    expect(packages.filter((name) => !name?.startsWith('@modelcontextprotocol/sdk/'))).toEqual(['testcontainers']);
    expect(packages.filter((name) => name?.startsWith('@modelcontextprotocol/sdk/')).length).toBeGreaterThan(0);
    const peer = JSON.parse(read(join('..', 'node_modules', 'testcontainers', 'package.json'))) as { type?: string };
    expect(peer.type ?? 'commonjs').toBe('commonjs');
  });

  it('loads ky and the network code on first use only, as the ESM build does', async () => {
    const script = `
const Module = require('node:module');
const loaded = new Set();
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const exported = load.apply(this, arguments);
  try { loaded.add(Module._resolveFilename(request, parent)); } catch {}
  return exported;
};
const chunks = () => [...new Set([...loaded].map((path) => /\\/(network|ky-route|jose|webapi)-\\w+\\.cjs$|node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(path)).filter(Boolean).map((match) => match[1] ?? match[2]))].sort();
const sdk = require(${JSON.stringify(join(dist, 'index.cjs'))});
const afterRequire = chunks();
const options = {
  apiKey: 'sk_test_lazy', webcode: 'SHOP1', baseUrl: 'http://127.0.0.1:9', maxRetries: 0,
  fetch: async () => new Response(JSON.stringify({ success: true, data: { sessionId: 'SHOP1-EXTT-1', paymentUrl: 'http://127.0.0.1/p', status: 'pending', amount: { value: 100, currency: 'EUR' } } })),
  hooks: { afterResponse: () => {} },
};
const params = { amount: { value: 100, currency: 'EUR' }, urlOk: 'https://a.example/ok', urlKo: 'https://a.example/ko' };
new sdk.PaymentClient(options).sessions.create(params).then((session) => {
  console.log(JSON.stringify({ afterRequire, afterRequest: chunks(), sessionId: session.sessionId }));
});
`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: dist });
    expect(JSON.parse(stdout)).toEqual({
      afterRequire: [],
      // @opentelemetry/api is a devDependency here, so the optional peer is found and required.
      afterRequest: ['@opentelemetry/api', 'ky-route', 'network'],
      sessionId: 'SHOP1-EXTT-1',
    });
  }, 20_000);
});
