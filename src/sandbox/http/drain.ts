/**
 * A server's connections and the requests in flight on them, for a stop that stops accepting,
 * lets the requests being answered finish (within a grace period), and cuts what never ends on its
 * own (event streams, idle keep-alive connections) at once.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export class Connections {
  readonly #sockets = new Set<Socket>();
  /** Requests whose answer is not out yet, by connection. */
  readonly #busy = new Map<Socket, number>();
  readonly #streams = new Set<ServerResponse>();
  #closing = false;

  /** Whether the server is stopping: a request that comes in now is refused. */
  get closing(): boolean {
    return this.#closing;
  }

  /** A new connection. */
  add(socket: Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => {
      this.#sockets.delete(socket);
      this.#busy.delete(socket);
    });
  }

  /** A request is being answered on its connection: it counts as in flight until its answer is out (or the client left). */
  track(message: IncomingMessage, response: ServerResponse): void {
    const socket = message.socket;
    this.#busy.set(socket, (this.#busy.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const left = (this.#busy.get(socket) ?? 1) - 1;
      if (left > 0) return void this.#busy.set(socket, left);
      this.#busy.delete(socket);
      // Stopping: the connection closes once this last answer is flushed, rather than idling on.
      if (this.#closing) socket.destroySoon();
    });
  }

  /** An answer that is an event stream: it lasts until the client leaves, so a stop cuts it. */
  stream(response: ServerResponse): void {
    this.#streams.add(response);
    response.once('close', () => this.#streams.delete(response));
  }

  /**
   * Stops `server`: no new connection; idle connections and event streams close now; a request in
   * flight finishes and its connection then closes; after `graceMs` whatever is left is cut.
   * Resolves, once every connection is closed, with the number of requests cut.
   */
  async drain(server: Server, graceMs: number): Promise<number> {
    this.#closing = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const stream of this.#streams) stream.destroy();
    for (const socket of this.#sockets) if (!this.#busy.has(socket)) socket.destroy();
    let cut = 0;
    const timer = setTimeout(() => {
      for (const count of this.#busy.values()) cut += count;
      for (const socket of this.#sockets) socket.destroy();
    }, graceMs);
    await closed;
    clearTimeout(timer);
    return cut;
  }
}
