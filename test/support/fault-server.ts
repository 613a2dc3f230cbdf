import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * A small fake of the service on 127.0.0.1 that can misbehave on cue. Writes are idempotent the
 * way the service documents (same key and body: stored response replayed, operation not run
 * again), so tests can assert that an operation ran at most once however the network behaved.
 */

/** One scripted misbehaviour, consumed by the next request to its route. */
export type Fault =
  /** Destroy the socket before reading the request through: the operation does not run. */
  | { kind: 'reset' }
  /** Run the operation, then destroy the socket before answering. */
  | { kind: 'reset-after' }
  /** Run the operation, then answer only after `ms` (a stall past the client's timeout), or never once the client has gone. */
  | { kind: 'stall'; ms: number }
  /** Answer this status and raw body without running the operation. */
  | { kind: 'respond'; status: number; body: string; headers?: Record<string, string> }
  /** Run the operation, then send half of the body and cut the connection. */
  | { kind: 'truncate' }
  /** Run the operation, send the headers and half of the body, and the rest only after `ms` (if the client is still there). */
  | { kind: 'stall-body'; ms: number };

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  idempotencyKey: string | undefined;
  body: string;
}

export interface PosRecord {
  posPaymentId: string;
  paymentReference: string;
  poiId: string;
  amount: { value: number; currency: string };
  status: string;
  createdAt: string;
  customReference?: string;
  errorMessage?: string;
  pspReference?: string;
}

export interface FaultServerOptions {
  /** Status a new POS charge gets. Default `success`. */
  posStatus?: 'success' | 'failed' | 'timeout';
  /**
   * What a replayed POS charge returns: `snapshot` (the stored response as first sent, as the
   * reference describes) or `current` (the record as it is now).
   */
  posReplay?: 'snapshot' | 'current';
}

const PREFIX = '/external/v1/test';

function recordTimestamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

export class FaultServer {
  readonly requests: SeenRequest[] = [];
  /** How many times each write operation actually ran, by idempotency key. */
  readonly runs = new Map<string, number>();
  readonly posPayments: PosRecord[] = [];
  options: Required<FaultServerOptions>;
  baseUrl = '';
  readonly #faults = new Map<string, Fault[]>();
  readonly #stored = new Map<string, { route: string; body: string; status: number; payload: () => unknown }>();
  readonly #sockets = new Set<Socket>();
  readonly #server: Server;
  #sequence = 0;

  constructor(options: FaultServerOptions = {}) {
    this.options = { posStatus: 'success', posReplay: 'snapshot', ...options };
    this.#server = createServer((request, response) => {
      void this.#handle(request, response);
    });
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    this.baseUrl = `http://127.0.0.1:${address.port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Queues faults for the next requests to `route` (`'POST /payment/session'`, path after the Test prefix). */
  script(route: string, ...faults: Fault[]): void {
    this.#faults.set(route, [...(this.#faults.get(route) ?? []), ...faults]);
  }

  /** Drops the faults still queued; records, stored responses and counters stay. */
  clearFaults(): void {
    this.#faults.clear();
  }

  /** Clears faults, records and counters between tests. */
  reset(options: FaultServerOptions = {}): void {
    this.options = { posStatus: 'success', posReplay: 'snapshot', ...options };
    this.#faults.clear();
    this.#stored.clear();
    this.requests.length = 0;
    this.runs.clear();
    this.posPayments.length = 0;
  }

  /** Requests seen on a route. */
  seen(route: string): SeenRequest[] {
    return this.requests.filter((request) => `${request.method} ${request.path}` === route);
  }

  /** Moves a POS payment to its final status, as a terminal answering late would. */
  complete(posPaymentId: string, status: 'success' | 'failed'): void {
    const record = this.posPayments.find((payment) => payment.posPaymentId === posPaymentId);
    if (!record) throw new Error(`no POS payment ${posPaymentId}`);
    record.status = status;
    delete record.errorMessage;
    if (status === 'success') record.pspReference = `PSP-${posPaymentId}`;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname.startsWith(PREFIX) ? url.pathname.slice(PREFIX.length) : url.pathname;
    const route = `${request.method} ${path}`;
    const fault = this.#faults.get(route)?.shift();
    if (fault?.kind === 'reset') {
      request.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const header = request.headers['idempotency-key'];
    const idempotencyKey = typeof header === 'string' ? header : undefined;
    this.requests.push({ method: request.method ?? '', path, query: url.searchParams, idempotencyKey, body });

    if (fault?.kind === 'respond') {
      response.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      response.end(fault.body);
      return;
    }
    const [status, payload] = this.#operate(route, url.searchParams, body, idempotencyKey);
    const text = JSON.stringify(status < 400 ? { success: true, data: payload } : payload);
    if (fault?.kind === 'reset-after') {
      request.socket.destroy();
      return;
    }
    if (fault?.kind === 'stall') await stall(response, fault.ms);
    if (response.destroyed) return;
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    if (fault?.kind === 'truncate') {
      response.write(text.slice(0, Math.floor(text.length / 2)));
      setTimeout(() => request.socket.destroy(), 5);
      return;
    }
    if (fault?.kind === 'stall-body') {
      response.write(text.slice(0, Math.floor(text.length / 2)));
      await stall(response, fault.ms);
      if (!response.destroyed) response.end(text.slice(Math.floor(text.length / 2)));
      return;
    }
    response.end(text);
  }

  /** Runs (or replays) the operation behind a route and returns status and payload. */
  #operate(route: string, query: URLSearchParams, body: string, key: string | undefined): [number, unknown] {
    if (route.startsWith('POST ') && key) {
      const stored = this.#stored.get(key);
      if (stored) {
        if (stored.route !== route) return [409, conflict('Idempotency key already used for a different endpoint.')];
        if (stored.body !== body) return [409, conflict('Idempotency key reused with a different request body.')];
        return [stored.status, stored.payload()];
      }
    }
    const [status, payload] = this.#run(route, query, body);
    if (route.startsWith('POST ') && key && status < 400) {
      this.runs.set(key, (this.runs.get(key) ?? 0) + 1);
      const snapshot = structuredClone(payload);
      const live = this.options.posReplay === 'current' && route === 'POST /pos/payment';
      this.#stored.set(key, { route, body, status, payload: live ? () => structuredClone(payload) : () => snapshot });
    }
    return [status, payload];
  }

  #run(route: string, query: URLSearchParams, body: string): [number, unknown] {
    const input = body ? (JSON.parse(body) as Record<string, unknown>) : {};
    const now = new Date();
    this.#sequence += 1;
    switch (route) {
      case 'GET /pos/terminals':
        return [200, [{ poiId: 'V400m-TEST-000001', status: 'boarded', name: 'Terminal Test 1 - Mostrador', model: 'V400m' }]];
      case 'POST /payment/session':
        return [
          201,
          {
            sessionId: `SHOP1-EXTT-${now.getTime()}${this.#sequence}`,
            paymentUrl: `${this.baseUrl}/pay-external-test/token${this.#sequence}`,
            status: 'pending',
            amount: input.amount,
            createdAt: recordTimestamp(now),
          },
        ];
      case 'POST /payment/refund':
        return [
          202,
          {
            refundReference: `SHOP1-RFXT-${this.#sequence}`,
            paymentReference: input.paymentReference,
            amount: input.amount,
            status: 'pending',
          },
        ];
      case 'POST /pos/payment':
        return [200, this.#charge(input, now)];
      case 'GET /pos/payments':
        return [200, this.#listPos(query)];
      default:
        return [404, { success: false, error: { message: `no route ${route}`, statusCode: 404, traceId: 't' } }];
    }
  }

  #charge(input: Record<string, unknown>, now: Date): PosRecord {
    const id = `SHOP1-POSXT-${now.getTime() + this.#sequence}`;
    const status = this.options.posStatus;
    const record: PosRecord = {
      posPaymentId: id,
      paymentReference: id,
      poiId: String(input.poiId),
      amount: input.amount as PosRecord['amount'],
      status,
      createdAt: recordTimestamp(now),
      ...(typeof input.customReference === 'string' ? { customReference: input.customReference } : {}),
      ...(status === 'timeout' ? { errorMessage: 'Payment may still be processed asynchronously via webhook' } : {}),
      ...(status === 'success' ? { pspReference: `PSP-${id}` } : {}),
    };
    this.posPayments.push(record);
    return record;
  }

  #listPos(query: URLSearchParams): unknown {
    const start = query.get('created_at_start');
    const end = query.get('created_at_end');
    const take = Number(query.get('take') ?? 20);
    const offset = Number(query.get('cursor') ?? 0);
    let items = this.posPayments.filter((payment) => (!start || payment.createdAt >= start) && (!end || payment.createdAt <= end));
    if (query.get('order') === 'desc') items = [...items].reverse();
    const page = items.slice(offset, offset + take);
    const hasMore = offset + take < items.length;
    return { posPayments: page, meta: { cursor: hasMore ? String(offset + take) : null, hasMore, total: items.length } };
  }
}

function conflict(message: string): unknown {
  return { success: false, error: { message, statusCode: 409, traceId: 'trace-409' } };
}

/** Starts a fault server on 127.0.0.1. */
export function startFaultServer(options?: FaultServerOptions): Promise<FaultServer> {
  return new FaultServer(options).listen();
}

/**
 * Waits `ms`, or less if the client closes the connection first. Stalls are long (seconds) so that
 * a loaded machine cannot answer before the client's timeout; ending at the close keeps them cheap.
 */
function stall(response: ServerResponse, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    response.once('close', done);
    function done(): void {
      clearTimeout(timer);
      response.off('close', done);
      resolve();
    }
  });
}
