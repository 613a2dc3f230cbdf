/**
 * Refusing a request over `node:http` by writing the answer on its socket: a raw HTTP/1.1 answer
 * that closes its connection, and the 413 for a body over the limit, which the client must be able
 * to read rather than meet a reset. Shared by the sandbox's server and the CLI's `listen`.
 */
import type { IncomingMessage } from 'node:http';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * How much of a refused body is still read (and dropped) after the 413, and for how long: a client
 * that is still sending when the connection closes gets a reset (EPIPE, ECONNRESET) instead of the
 * answer. Past either bound the connection is closed anyway.
 */
const DRAIN_BYTES = 64 * 1_048_576;
const DRAIN_MS = 10_000;

/** A raw HTTP/1.1 answer with a JSON body, for a connection that closes after it. */
export function rawAnswer(status: number, body: string): string {
  return `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

/**
 * Answers 413 with the JSON `body` and closes the connection only once the client has sent its
 * body (within the bounds above), whether it declared its length or sent it in chunks. Written on
 * the socket rather than through the `ServerResponse`: Node closes the connection as soon as an
 * answer with `connection: close` is out, while the client is still sending. Nothing of the rest of
 * the body is kept.
 */
export function refuseBody(message: IncomingMessage, body: string): void {
  const socket = message.socket;
  socket.end(rawAnswer(413, body));
  const timer = setTimeout(() => socket.destroy(), DRAIN_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  let drained = 0;
  message.on('data', (chunk: Buffer) => {
    drained += chunk.byteLength;
    if (drained > DRAIN_BYTES) socket.destroy();
  });
  // The whole body is in: close once the answer is flushed.
  if (message.readableEnded) socket.destroySoon();
  else message.once('end', () => socket.destroySoon());
  message.resume();
}
