import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { HandleInfo } from './index.js';

type Handler = (request: Request, info?: HandleInfo) => Promise<Response>;

/** Reads a Node request into a fetch `Request`. */
async function toRequest(message: IncomingMessage, origin: string): Promise<Request> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = message.method ?? 'GET';
  const init: RequestInit = { method, headers };
  if (method !== 'GET' && method !== 'HEAD') {
    const chunks: Buffer[] = [];
    for await (const chunk of message) chunks.push(chunk as Buffer);
    init.body = Buffer.concat(chunks);
  }
  return new Request(new URL(message.url ?? '/', origin), init);
}

async function send(response: Response, target: ServerResponse): Promise<void> {
  target.statusCode = response.status;
  response.headers.forEach((value, name) => {
    target.setHeader(name, value);
  });
  target.end(Buffer.from(await response.arrayBuffer()));
}

/** Serves a fetch-standard handler with `node:http` on `host:port`. */
export async function serveNode(handle: Handler, port: number, host: string): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((message, response) => {
    toRequest(message, baseUrl)
      .then((request) => handle(request, { remoteAddress: message.socket.remoteAddress }))
      .then((answer) => send(answer, response))
      .catch(() => {
        response.statusCode = 500;
        response.end();
      });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`;
  return {
    baseUrl,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
