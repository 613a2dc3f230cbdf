/**
 * Outside tools against `payment-service-sdk mcp`: the MCP Inspector's CLI
 * (`@modelcontextprotocol/inspector-cli`) lists the tools and calls one over stdio, and
 * `@modelcontextprotocol/conformance` runs its server scenarios over Streamable HTTP. The
 * conformance client sends no header of its own, so it reaches the server through a loopback proxy
 * of this test that adds the bearer token (and gives the server's own Host and Origin for the
 * proxy's own, passing any other through, so that its DNS-rebinding scenario still meets
 * the server's checks). Its scenarios made for its reference server (fixed tool, prompt and
 * resource names, sampling, logging, completions, subscriptions) do not apply: the ones run are
 * those about any server.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../src/openapi/endpoints.js';
import { CLI, cleanEnv, ROOT, SENTINELS } from './mcp-client.js';

const INSPECTOR = join(ROOT, 'node_modules/@modelcontextprotocol/inspector-cli/build/cli.js');
const CONFORMANCE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const TOKEN = 'conformance-token-0123456789abcdef';
/** The scenarios about any server; the rest need the reference server's own tools, prompts and resources. */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection'];

/** The inspector CLI reads its own package.json at `../package.json` of its working directory: run it from a folder one below a package. */
const inspector = (args: string[]) =>
  promisify(execFile)(process.execPath, [INSPECTOR, '--cli', process.execPath, CLI, 'mcp', '--sandbox', ...args], {
    cwd: join(ROOT, 'test'),
    env: cleanEnv(),
    timeout: 60_000,
  });

describe('MCP Inspector CLI', () => {
  it('lists the tools of payment-service-sdk mcp', async () => {
    const { stdout } = await inspector(['--method', 'tools/list']);
    const listed = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { tools: { name: string }[] };
    expect(listed.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(ENDPOINTS.map((endpoint) => endpoint.operationId)));
  });

  it('calls one', async () => {
    const { stdout } = await inspector(['--method', 'tools/call', '--tool-name', 'listTerminals', '--tool-arg', 'syncFromProvider=true']);
    const result = JSON.parse(stdout.slice(stdout.indexOf('{'))) as { structuredContent: { terminals: { poiId: string }[] } };
    expect(result.structuredContent.terminals.map((terminal) => terminal.poiId)).toEqual(['V400m-TEST-000001', 'S1F2-TEST-000002']);
    for (const sentinel of SENTINELS) expect(stdout).not.toContain(sentinel);
  });
});

describe('MCP conformance (server scenarios)', () => {
  let child: ReturnType<typeof spawn>;
  let proxy: ReturnType<typeof createServer>;
  let proxyUrl: string;
  const out = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));

  beforeAll(async () => {
    child = spawn(process.execPath, [CLI, 'mcp', '--sandbox', '--http', '0'], {
      cwd: ROOT,
      env: cleanEnv({ PAYMENT_SERVICE_MCP_TOKEN: TOKEN }),
    });
    const target = await new Promise<URL>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(text)), 15_000);
      child.stderr?.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const found = /at (http:\/\/\S+\/mcp)/.exec(text);
        if (found?.[1]) {
          clearTimeout(timer);
          resolve(new URL(found[1]));
        }
      });
    });
    proxy = createServer((req, res) => {
      const ownHost = `:${(proxy.address() as AddressInfo).port}`;
      const own = /^(localhost|127\.0\.0\.1):\d+$/.test(req.headers.host ?? '') && req.headers.host?.endsWith(ownHost);
      const origin = req.headers.origin;
      const ownOrigin = origin !== undefined && /^http:\/\/(localhost|127\.0\.0\.1):\d+$/.test(origin) && origin.endsWith(ownHost);
      const upstream = request(
        target,
        {
          method: req.method,
          path: req.url,
          headers: {
            ...req.headers,
            host: own ? target.host : req.headers.host,
            ...(origin !== undefined && { origin: ownOrigin ? `http://${target.host}` : origin }),
            authorization: `Bearer ${TOKEN}`,
          },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://localhost:${(proxy.address() as AddressInfo).port}/mcp`;
  }, 30_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    proxy?.closeAllConnections();
    await new Promise<void>((resolve) => proxy?.close(() => resolve()));
    rmSync(out, { recursive: true, force: true });
  });

  it.each(SCENARIOS)(
    'passes %s',
    async (scenario) => {
      const dir = join(out, scenario);
      const run = await promisify(execFile)(
        process.execPath,
        [CONFORMANCE, 'server', '--url', proxyUrl, '--scenario', scenario, '-o', dir],
        {
          cwd: ROOT,
          env: cleanEnv(),
          timeout: 60_000,
        },
      ).then(
        (done) => ({ code: 0, output: done.stdout + done.stderr }),
        (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
      );
      const files = readdirSync(dir, { recursive: true })
        .map(String)
        .filter((file) => file.endsWith('checks.json'));
      const checks = files.flatMap((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as { id: string; status: string }[]);
      expect(checks.length, run.output).toBeGreaterThan(0);
      expect(
        checks.filter((check) => check.status === 'FAILURE'),
        run.output,
      ).toEqual([]);
      expect(run.code, run.output).toBe(0);
    },
    90_000,
  );
});
