/**
 * A request as the steps read it: a fetch `Request` (from `sandbox.handle`), or a {@link NodeRequest},
 * the Node server's own view of one over what Node parsed. Making a fetch `Request` of every
 * request the server received (its header list, its body stream), then reading it back, cost the
 * sandbox a tenth of a create; the pages, which read forms and cookies, still get one.
 */

/** A request's headers and body as the Node server received them. */
export interface Received {
  /** Names in lower case, in the order they came; a repeated header's values as Node joins them (`set-cookie` as a list). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The whole body (its first bytes only, `complete: false`, for one over the limit); `null` for a GET or a HEAD. */
  body: Uint8Array | null;
  /** `false` for a body over the limit, of which only the first bytes were read (or none, when its declared length was over it). */
  complete: boolean;
}

/** `Headers.get` over Node's parsed headers. */
export class NodeHeaders {
  readonly #headers: Received['headers'];

  constructor(headers: Received['headers']) {
    this.#headers = headers;
  }

  get(name: string): string | null {
    const value = this.#headers[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }
}

/** A request the Node server received: method, absolute URL, headers and body as Node gave them. */
export class NodeRequest {
  readonly method: string;
  /** The URL parsed, once: the host check reads it. */
  readonly parsedUrl: URL;
  readonly headers: NodeHeaders;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  readonly received: Received;
  #fetch: Request | undefined;

  constructor(method: string, url: URL, received: Received, signal: AbortSignal) {
    this.method = method;
    this.parsedUrl = url;
    this.headers = new NodeHeaders(received.headers);
    this.signal = signal;
    this.received = received;
  }

  /** The absolute URL. */
  get url(): string {
    return this.parsedUrl.href;
  }

  /** The same request as a fetch `Request`, made once (for the pages). */
  toRequest(): Request {
    if (this.#fetch) return this.#fetch;
    const headers = new Headers();
    for (const [name, value] of Object.entries(this.received.headers)) {
      if (Array.isArray(value)) for (const item of value) headers.append(name, item);
      else if (value !== undefined) headers.set(name, value);
    }
    const { body } = this.received;
    this.#fetch = new Request(this.url, { method: this.method, headers, signal: this.signal, body: body && new Uint8Array(body) });
    return this.#fetch;
  }
}

/** A request as the steps read it. */
export type SandboxRequest = Request | NodeRequest;

/** A fetch `Request` of `request`, for the steps that need the whole of one (forms, cookies, event streams). */
export function fetchRequest(request: SandboxRequest): Request {
  return request instanceof NodeRequest ? request.toRequest() : request;
}

/** What the Node server received of `request`; `undefined` for a `Request` handed to `sandbox.handle`. */
export function receivedOf(request: SandboxRequest): Received | undefined {
  return request instanceof NodeRequest ? request.received : undefined;
}
