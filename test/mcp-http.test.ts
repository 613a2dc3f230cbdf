/**
 * `payment-service-sdk mcp --http`: Streamable HTTP at /mcp on 127.0.0.1, with the official
 * `StreamableHTTPClientTransport`; requests without the token, with a foreign `Host` or a foreign
 * `Origin` refused; a token made and printed once when none is given.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../src/openapi/endpoints.js';
import { ajv, CLI, cleanEnv, ROOT, SENTINELS, startTarget, type Target, targetArgs } from './mcp-client.js';

const TOKEN = 'mcp-test-token-0123456789abcdef';
let target: Target;
let child: ChildProcess;
let url: URL;
let stderr = '';

/** Starts `mcp --http 0` and resolves with the URL it prints. */
function startHttp(env: Record<string, string>, extra: string[] = []): Promise<{ child: ChildProcess; url: URL; stderr: () => string }> {
  const spawned = spawn(process.execPath, [CLI, 'mcp', ...targetArgs(target), '--http', '0', ...extra], { cwd: ROOT, env: cleanEnv(env) });
  let text = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${text}`)), 15_000);
    spawned.stderr?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const found = /at (http:\/\/\S+\/mcp)/.exec(text);
      if (found?.[1] && /token/.test(text)) {
        clearTimeout(timer);
        resolve({ child: spawned, url: new URL(found[1]), stderr: () => text });
      }
    });
    spawned.once('exit', (code) => reject(new Error(`exited ${code}: ${text}`)));
  });
}

/** A raw POST of initialize, with the headers given (Host included: node:http sends it as set). */
function raw(headers: Record<string, string>, to: URL = url): Promise<number> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      to,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  target = await startTarget();
  const started = await startHttp({ PAYMENT_SERVICE_MCP_TOKEN: TOKEN });
  child = started.child;
  url = started.url;
  stderr = started.stderr();
}, 30_000);

afterAll(async () => {
  child?.kill('SIGTERM');
  await target?.close();
});

describe('mcp --http', () => {
  it('listens on 127.0.0.1 at /mcp, and does not print a token it was given', () => {
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.pathname).toBe('/mcp');
    expect(stderr).not.toContain(TOKEN);
    for (const sentinel of SENTINELS) expect(stderr).not.toContain(sentinel);
  });

  it('serves the official Streamable HTTP client with the bearer token: tools/list and a call valid against its output schema', async () => {
    const client = new Client({ name: 'http-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(ENDPOINTS.map((endpoint) => endpoint.operationId)));
    const terminals = await client.callTool({ name: 'listTerminals', arguments: {} });
    const schema = tools.find((tool) => tool.name === 'listTerminals')?.outputSchema;
    expect(ajv().validate(schema ?? {}, terminals.structuredContent)).toBe(true);
    for (const sentinel of SENTINELS) expect(JSON.stringify(terminals)).not.toContain(sentinel);
    await client.close();
  });

  it('refuses a request without the token, with a wrong one, with a foreign Host and with a foreign Origin', async () => {
    const authorization = `Bearer ${TOKEN}`;
    expect(await raw({})).toBe(401);
    expect(await raw({ authorization: 'Bearer not-the-token-at-all-000000' })).toBe(401);
    expect(await raw({ authorization, host: `evil.example:${url.port}` })).toBe(403);
    expect(await raw({ authorization, origin: 'http://evil.example' })).toBe(403);
    expect(await raw({ authorization, origin: `http://127.0.0.1:${url.port}` })).toBe(200);
    expect(await raw({ authorization, host: `localhost:${url.port}` })).toBe(200);
  });

  it('is not reachable on another address of this machine', async () => {
    const other = Object.values(networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal);
    if (!other) return; // no other address here: 127.0.0.1 is all there is
    await expect(raw({ authorization: `Bearer ${TOKEN}` }, new URL(`http://${other.address}:${url.port}/mcp`))).rejects.toThrow(
      /ECONNREFUSED/,
    );
  });

  it('makes a token and prints it once when PAYMENT_SERVICE_MCP_TOKEN is not set', async () => {
    const started = await startHttp({});
    try {
      const printed = /token \(shown once[^)]*\): (\S+)/.exec(started.stderr())?.[1];
      expect(printed?.length).toBeGreaterThanOrEqual(32);
      expect(started.stderr().split(printed as string)).toHaveLength(2);
      expect(await raw({ authorization: `Bearer ${printed}` }, started.url)).toBe(200);
      expect(await raw({}, started.url)).toBe(401);
    } finally {
      started.child.kill('SIGTERM');
    }
  });
});
