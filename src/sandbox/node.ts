import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type Handler = (request: Request, info?: { remoteAddress?: string | undefined }) => Promise<Response>;

/** How {@link serveNode} listens, and what it answers for requests that never reach the handler. */
export interface ServeOptions {
  port: number;
  host: string;
  /** Bodies are read up to one byte past this, enough for the handler to refuse them (413). */
  maxBodyBytes: number;
  /** The failure envelope for a request Node's parser refused (too-long head, malformed). */
  failure: (status: number, message: string) => string;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
};

/** Reads a Node request into a fetch `Request`; `complete` is false when the body was cut at the limit. */
async function toRequest(
  message: IncomingMessage,
  origin: string,
  limit: number,
  signal: AbortSignal,
): Promise<{ request: Request; complete: boolean }> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = message.method ?? 'GET';
  const init: RequestInit = { method, headers, signal };
  let complete = true;
  if (method !== 'GET' && method !== 'HEAD') {
    const chunks: Buffer[] = [];
    let size = 0;
    // Past the limit the rest is discarded as it arrives, never held.
    await new Promise<void>((resolve, reject) => {
      message.on('data', (chunk: Buffer) => {
        if (!complete) return;
        chunks.push(chunk);
        size += chunk.byteLength;
        if (size > limit) {
          complete = false;
          resolve();
        }
      });
      message.once('end', resolve);
      message.once('error', reject);
    });
    init.body = Buffer.concat(chunks);
  }
  return { request: new Request(new URL(message.url ?? '/', origin), init), complete };
}

async function send(response: Response, target: ServerResponse, complete: boolean): Promise<void> {
  target.statusCode = response.status;
  response.headers.forEach((value, name) => {
    target.setHeader(name, value);
  });
  // A body left unread cannot be skipped on a kept-alive connection: close it after the answer.
  if (!complete) target.setHeader('connection', 'close');
  if (!response.headers.get('content-type')?.startsWith('text/event-stream') || !response.body) {
    target.end(Buffer.from(await response.arrayBuffer()));
    return;
  }
  // An event stream is written as it comes, until the client leaves.
  target.flushHeaders();
  const reader = response.body.getReader();
  target.once('close', () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    target.write(value);
  }
  target.end();
}

/** Serves a fetch-standard handler with `node:http` on `host:port`. */
export async function serveNode(handle: Handler, options: ServeOptions): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((message, response) => {
    // A body declared over the limit is refused before any of it is read: the client need not send it.
    if (Number(message.headers['content-length'] ?? 0) > options.maxBodyBytes) {
      const body = options.failure(413, `Request body larger than ${options.maxBodyBytes} bytes`);
      response.writeHead(413, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      });
      response.end(body);
      return;
    }
    // Aborted when the client goes away: a long answer (an event stream) stops with it.
    const gone = new AbortController();
    response.once('close', () => gone.abort());
    toRequest(message, baseUrl, options.maxBodyBytes, gone.signal)
      .then(
        ({ request, complete }) =>
          handle(request, { remoteAddress: message.socket.remoteAddress }).then((answer) => send(answer, response, complete)),
        // A method or target fetch's Request refuses (TRACE, a malformed authority): the client's fault.
        () => {
          response.statusCode = 400;
          response.setHeader('content-type', 'application/json; charset=utf-8');
          response.setHeader('connection', 'close');
          response.end(options.failure(400, 'Malformed HTTP request'));
        },
      )
      .catch(() => {
        if (response.headersSent) return void response.destroy();
        response.statusCode = 500;
        response.setHeader('content-type', 'application/json; charset=utf-8');
        response.end(options.failure(500, 'Sandbox error'));
      });
  });
  // Node answers a request it cannot parse (a head over its limit, say) by itself, without a body:
  // answer with the service's envelope instead.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const body = options.failure(status, status === 431 ? 'Request URL or headers too large' : 'Malformed HTTP request');
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : options.port;
  const baseUrl = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${boundPort}`;
  return {
    baseUrl,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
