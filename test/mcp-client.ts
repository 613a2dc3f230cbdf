/**
 * What the MCP tests share: the official MCP client spawning `node dist/cli.cjs mcp ...` over stdio
 * (its stderr kept, to search for secrets), a sandbox with sentinel keys and client secrets, a
 * webhook receiver on loopback, and ajv (JSON Schema 2020-12) for the tools' schemas.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import Ajv2020 from 'ajv/dist/2020.js';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLI = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
export const SENTINEL_KEY = 'sk_test_SENTINEL_7f3c9a1e5b';
export const SENTINEL_LIVE_KEY = 'sk_live_SENTINEL_2d8e4b6a0c';
export const SENTINEL_SECRET = 'cs_test_SENTINEL_9b1d3f5a7e';
export const SENTINEL_LIVE_SECRET = 'cs_live_SENTINEL_4c6e8a0b2d';
export const SENTINELS = [SENTINEL_KEY, SENTINEL_LIVE_KEY, SENTINEL_SECRET, SENTINEL_LIVE_SECRET];
export const WEBCODE = 'MCPSHOP';

/** Everything any test saw: results, resources, stderr lines. Searched for the sentinels at the end. */
export const seen: string[] = [];

/** The environment of a spawned command: none of the developer's own settings. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !name.startsWith('PAYMENT_SERVICE_') && !name.startsWith('PAYMENT_SANDBOX_')) env[name] = value;
  return { ...env, NO_COLOR: '1', ...extra };
}

export interface Connected {
  client: Client;
  stderr: () => string;
  close(): Promise<void>;
}

/**
 * The official client over stdio, spawning `node dist/cli.cjs mcp ...args`. With `elicit`, the
 * client declares the elicitation capability and answers each request with it.
 */
export async function connect(
  args: string[],
  options: { elicit?: (message: string) => { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> } } = {},
): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', ...args],
    env: cleanEnv(),
    stderr: 'pipe',
    cwd: ROOT,
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'mcp-test', version: '1.0.0' }, { capabilities: options.elicit ? { elicitation: { form: {} } } : {} });
  if (options.elicit) {
    const elicit = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      seen.push(JSON.stringify(request.params));
      return elicit(String(request.params.message));
    });
  }
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    async close() {
      await client.close();
      seen.push(stderr);
    },
  };
}

/** A tool call's result, kept for the sentinel search. */
export async function call(connected: Connected, name: string, args: Record<string, unknown> = {}) {
  const result = (await connected.client.callTool({ name, arguments: args })) as {
    structuredContent?: Record<string, unknown>;
    content: { type: string; text: string }[];
    isError?: boolean;
  };
  seen.push(JSON.stringify(result));
  return result;
}

/** The JSON of a tool error's text. */
export function errorOf(result: { content: { text: string }[]; isError?: boolean }): Record<string, unknown> {
  if (!result.isError) throw new Error(`Not a tool error: ${JSON.stringify(result).slice(0, 500)}`);
  return (JSON.parse(result.content[0]?.text ?? '{}') as { error: Record<string, unknown> }).error;
}

export function ajv() {
  return new Ajv2020({ strict: false, allErrors: true, logger: false });
}

export interface Target {
  sandbox: Sandbox;
  baseUrl: string;
  /** The webhook bodies the receiver got. */
  received: { event_code: string; data: Record<string, unknown> }[];
  close(): Promise<void>;
}

/** A sandbox with the sentinel keys and secrets on loopback, its webhooks sent to a receiver of the test. */
export async function startTarget(): Promise<Target> {
  const received: Target['received'] = [];
  const receiver: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      received.push(JSON.parse(body) as Target['received'][number]);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const sandbox = createSandbox({
    webcode: WEBCODE,
    keys: { test: SENTINEL_KEY, live: SENTINEL_LIVE_KEY },
    clientSecrets: { test: SENTINEL_SECRET, live: SENTINEL_LIVE_SECRET },
    webhookUrls: [`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`],
    posDelayMs: 0,
    posTimeoutResolveMs: 300,
    modificationResolveMs: 50,
    onError: () => {},
  });
  const { baseUrl } = await sandbox.listen();
  return {
    sandbox,
    baseUrl,
    received,
    async close() {
      await sandbox.close();
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    },
  };
}

/** The client flags of the sentinel sandbox. */
export const targetArgs = (target: Target, environment: 'test' | 'live' = 'test') => [
  '--api-key',
  environment === 'live' ? SENTINEL_LIVE_KEY : SENTINEL_KEY,
  '--webcode',
  WEBCODE,
  '--sandbox',
  target.baseUrl,
];
