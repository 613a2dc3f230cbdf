/** The sandbox over `node:http`: requests in as fetch `Request`s, answers and event streams out, bodies over the limit and unparsable heads answered with the envelope. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { JsonAnswer, type SandboxAnswer } from '../answer.js';
import { DECLARED_LENGTH } from '../faults.js';
import { hostName } from './access.js';
import { Connections } from './drain.js';
import { NodeRequest } from './incoming.js';
import { rawAnswer, refuseBody } from './refuse.js';

type Handler = (request: NodeRequest, info?: { remoteAddress?: string | undefined }) => Promise<SandboxAnswer>;

/** How {@link serveNode} listens, and what it answers for requests that never reach the handler. */
export interface ServeOptions {
  port: number;
  host: string;
  /** Bodies are read up to one byte past this, enough for the handler to refuse them (413). */
  maxBodyBytes: number;
  /** The failure envelope for a request Node's parser refused (too-long head, malformed), or one that came in as the server stopped (503). */
  failure: (status: number, message: string) => string;
}

/** A server {@link serveNode} started. */
export interface NodeServer {
  /** `http://ADDRESS:PORT`; for a wildcard address (`0.0.0.0`, `::`), loopback's (`127.0.0.1`, `[::1]`), one a client can open. */
  baseUrl: string;
  /** The names a `Host` may give for the address listened on. */
  hosts: string[];
  /**
   * Stops accepting, lets the requests in flight finish for up to `graceMs` (default 1000), cuts the
   * rest; resolves with the number of requests cut once every connection is closed.
   */
  close(graceMs?: number): Promise<number>;
}

/** The names a `Host` may give for `host`: the address itself, and this machine's addresses when it is a wildcard. */
function ownHosts(host: string): string[] {
  const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]';
  const addresses = wildcard
    ? Object.values(networkInterfaces())
        .flat()
        .map((entry) => (entry?.family === 'IPv6' ? `[${entry.address}]` : (entry?.address ?? '')))
    : [];
  return [host.includes(':') && !host.startsWith('[') ? `[${host}]` : host, ...addresses]
    .map((name) => hostName(name))
    .filter((name) => name !== undefined);
}

/**
 * The origin a request reached the server by: `http://` and its `Host` when that is a host name
 * (the host check, the first step, refuses one that does not name the sandbox), else `fallback`.
 * The links an answer carries are made from it, so they open where the client reached the sandbox
 * (`localhost:8080` through a published port, `sandbox:4010` on a compose network), never at `0.0.0.0`.
 */
function requestBase(message: IncomingMessage, fallback: string): string {
  const host = message.headers.host;
  return host !== undefined && hostName(host) !== undefined ? `http://${host}` : fallback;
}

/** Methods a fetch `Request` refuses: the client's fault (400), as for `sandbox.handle`'s callers. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/**
 * The absolute URL of a Node request; throws for a target that makes none (an out-of-range port, an
 * unclosed IPv6 host) and for a method fetch forbids, which are answered 400.
 */
function requestUrl(message: IncomingMessage, origin: string): URL {
  if (FORBIDDEN_METHODS.has(message.method ?? '')) throw new TypeError(`${message.method} is not a method the sandbox takes`);
  return new URL(message.url ?? '/', requestBase(message, origin));
}

/** Reads a Node request's body, up to one byte past the limit; `complete` is false when it was cut there. */
async function readRequest(message: IncomingMessage, origin: string, limit: number, signal: AbortSignal): Promise<NodeRequest> {
  const url = requestUrl(message, origin);
  const method = message.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD')
    return new NodeRequest(method, url, { headers: message.headers, body: null, complete: true }, signal);
  const chunks: Buffer[] = [];
  let size = 0;
  let complete = true;
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
  // A copy, also of one chunk: a chunk is a view of the socket's read buffer, which the request log would keep alive.
  const body = Buffer.concat(chunks);
  return new NodeRequest(method, url, { headers: message.headers, body, complete }, signal);
}

/**
 * A request whose body is over the limit, as far as it was read (nothing of it when its declared
 * length was over): the handler answers it 413 as the body step does, and logs it with its body cut.
 */
function tooLargeRequest(message: IncomingMessage, origin: string, signal: AbortSignal): NodeRequest {
  const received = { headers: message.headers, body: new Uint8Array(0), complete: false };
  return new NodeRequest(message.method ?? 'POST', requestUrl(message, origin), received, signal);
}

/**
 * Answers a body over the limit 413 on the socket (see `refuseBody`), with the handler's own 413
 * answer when it gave one (the API's, which its request log recorded), else `fallback`.
 */
function refuseTooLarge(message: IncomingMessage, answer: Promise<SandboxAnswer>, fallback: () => string): Promise<void> {
  return answer.then(
    async (response) => refuseBody(message, response.status === 413 ? await response.text() : fallback()),
    () => refuseBody(message, fallback()),
  );
}

/** An answer with the envelope that closes its connection: for requests the handler never sees. */
function refuse(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  response.end(body);
}

/** The address of `baseUrl`: loopback for a wildcard (a client cannot open `0.0.0.0`), IPv6 in brackets. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

async function send(response: SandboxAnswer, target: ServerResponse, connections: Connections): Promise<void> {
  if (response instanceof JsonAnswer) {
    const { bodyText } = response;
    // Its length in the head: set by writeHead, the head is out before end() could count the body.
    target.writeHead(response.status, { ...response.headers.record, 'content-length': Buffer.byteLength(bodyText) });
    return void target.end(bodyText);
  }
  // A reset injected by a fault rule: the connection closes with no answer.
  if (response.type === 'error') return void target.destroy();
  target.statusCode = response.status;
  response.headers.forEach((value, name) => {
    target.setHeader(name, value);
  });
  if (!response.headers.get('content-type')?.startsWith('text/event-stream') || !response.body) {
    const body = Buffer.from(await response.arrayBuffer());
    const declared = (response as { [DECLARED_LENGTH]?: number })[DECLARED_LENGTH];
    if (declared === undefined) return void target.end(body);
    // A body cut by a fault rule: what there is, then the connection closes short of the declared length.
    target.setHeader('content-length', declared);
    target.flushHeaders();
    target.write(body, () => target.destroy());
    return;
  }
  // An event stream is written as it comes, until the client leaves (or the server stops).
  connections.stream(target);
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
export async function serveNode(handle: Handler, options: ServeOptions): Promise<NodeServer> {
  const connections = new Connections();
  const tooLarge = () => options.failure(413, `Request body larger than ${options.maxBodyBytes} bytes`);
  // A method or target fetch's Request refuses (TRACE, a malformed authority): the client's fault.
  const malformed = (response: ServerResponse) => refuse(response, 400, options.failure(400, 'Malformed HTTP request'));
  // Node's own check of a missing Host answers a bare 400: the sandbox answers it with the envelope.
  const server = createServer({ requireHostHeader: false }, (message, response) => {
    if (message.httpVersion === '1.1' && message.headers.host === undefined)
      return refuse(response, 400, options.failure(400, 'Host header is required (HTTP/1.1)'));
    // A request on a kept-alive connection after the stop began: nothing of it runs.
    if (connections.closing) return refuse(response, 503, options.failure(503, 'The sandbox is stopping'));
    connections.track(message, response);
    const info = { remoteAddress: message.socket.remoteAddress };
    // A body declared over the limit is refused at once: the answer does not wait for the body.
    if (Number(message.headers['content-length'] ?? 0) > options.maxBodyBytes) {
      let request: NodeRequest;
      try {
        request = tooLargeRequest(message, baseUrl, new AbortController().signal);
      } catch {
        return malformed(response);
      }
      return void refuseTooLarge(message, handle(request, info), tooLarge);
    }
    // Aborted when the client goes away: a long answer (an event stream) stops with it.
    const gone = new AbortController();
    // Only a client that left early needs the signal; aborting after every answer would build an
    // exception with its stack on each request.
    response.once('close', () => {
      if (!response.writableFinished) gone.abort();
    });
    readRequest(message, baseUrl, options.maxBodyBytes, gone.signal)
      .then(
        (request) =>
          request.received.complete
            ? handle(request, info).then((answer) => send(answer, response, connections))
            : refuseTooLarge(message, handle(request, info), tooLarge),
        () => malformed(response),
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
    socket.end(rawAnswer(status, options.failure(status, status === 431 ? 'Request URL or headers too large' : 'Malformed HTTP request')));
  });
  server.on('connection', (socket) => connections.add(socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : options.port;
  const baseUrl = `http://${urlHost(options.host)}:${boundPort}`;
  return { baseUrl, hosts: ownHosts(options.host), close: (graceMs = 1_000) => connections.drain(server, graceMs) };
}
