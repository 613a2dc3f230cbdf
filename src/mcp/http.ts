/**
 * The MCP server over Streamable HTTP, at `/mcp`, on 127.0.0.1 unless told otherwise. Every
 * request must carry the bearer token (`Authorization: Bearer <token>`), a `Host` naming this
 * server (the loopback names, or the host it was told to listen on) and, when a browser sends one,
 * an `Origin` of those same hosts: a page of another site, even one whose name was rebound to this
 * address, cannot drive it. One MCP session per client (`Mcp-Session-Id`), each its own server
 * made by `server()`, sharing the client and the derived keys.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

/** The path the server answers at. */
export const MCP_PATH = '/mcp';
/** Largest JSON-RPC body accepted. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface McpHttpOptions {
  /** Makes the server of one MCP session. */
  server: () => McpServer;
  /** The bearer token every request must carry. */
  token: string;
  /** Default 127.0.0.1. */
  host?: string | undefined;
  /** Default 0: a free port. */
  port?: number | undefined;
  /** More host names accepted in `Host` and `Origin` (a name this machine is reached by). */
  allowedHosts?: readonly string[] | undefined;
}

export interface McpHttpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
}

/** A token for `PAYMENT_SERVICE_MCP_TOKEN` when none is given: 32 random bytes, base64url. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function sameToken(header: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(header ?? '')?.[1]?.trim();
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** The `host[:port]` of a `Host` header or an origin, lower-cased; `[::1]` keeps its brackets. */
const hostOf = (value: string) => value.trim().toLowerCase();

export async function serveMcpHttp(options: McpHttpOptions): Promise<McpHttpServer> {
  const host = options.host ?? '127.0.0.1';
  if (options.token.length < 16) throw new TypeError('The MCP token must be at least 16 characters');
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let allowed = new Set<string>();

  const http = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) refuse(res, 400, `Bad request: ${(error as Error).message}`);
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!allowed.has(hostOf(req.headers.host ?? ''))) return refuse(res, 403, 'Forbidden: this Host is not the MCP server');
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let originHost: string | undefined;
      try {
        const url = new URL(origin);
        originHost = url.protocol === 'http:' || url.protocol === 'https:' ? url.host : undefined;
      } catch {
        originHost = undefined;
      }
      if (originHost === undefined || !allowed.has(hostOf(originHost)))
        return refuse(res, 403, 'Forbidden: this Origin may not use the MCP server');
    }
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== MCP_PATH) return refuse(res, 404, `Not found: the MCP server is at ${MCP_PATH}`);
    if (!sameToken(req.headers.authorization, options.token))
      return refuse(res, 401, 'Unauthorized: send Authorization: Bearer <PAYMENT_SERVICE_MCP_TOKEN>', { 'www-authenticate': 'Bearer' });

    const sessionId = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined) return refuse(res, 404, 'Session not found: initialize again');
      if (req.method !== 'POST' || !isInitializeRequest(body)) return refuse(res, 400, 'Bad request: no session; send initialize first');
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId) sessions.delete(created.sessionId);
      };
      await options.server().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const names = ['127.0.0.1', 'localhost', '[::1]', host.includes(':') ? `[${host}]` : host, ...(options.allowedHosts ?? [])];
  allowed = new Set(names.map((name) => hostOf(`${name}:${port}`)));
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}${MCP_PATH}`,
    host,
    port,
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close().catch(() => {})));
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
