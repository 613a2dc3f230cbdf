/**
 * What the request steps answer with: a fetch `Response` (pages, event streams, a fault rule's
 * reset or cut body), or a {@link JsonAnswer}, the service's JSON envelope held as its text. The
 * Node server writes a `JsonAnswer` straight to its socket; `sandbox.handle` turns one into a
 * `Response` (see {@link fetchResponse}). A `Response` built for every answer, then read back to be
 * written, cost the sandbox a tenth of a create.
 */

/** An answer of the pipeline. */
export type SandboxAnswer = Response | JsonAnswer;

/** Headers over a plain record of lower-case names, as the sandbox writes them. */
export class PlainHeaders {
  readonly #record: Readonly<Record<string, string>>;

  constructor(record: Readonly<Record<string, string>>) {
    this.#record = record;
  }

  get(name: string): string | null {
    return this.#record[name.toLowerCase()] ?? null;
  }

  forEach(callback: (value: string, name: string) => void): void {
    for (const [name, value] of Object.entries(this.#record)) callback(value, name);
  }

  /** The record itself, for `writeHead` and `new Response`. */
  get record(): Readonly<Record<string, string>> {
    return this.#record;
  }
}

/**
 * A JSON answer: its status, headers and the body's text as the sandbox wrote it, and the `data`
 * of a success envelope as a value, so that the request log and the fault rules read neither back.
 */
export class JsonAnswer {
  readonly type = 'default';
  readonly status: number;
  readonly headers: PlainHeaders;
  /** The body, as sent. */
  readonly bodyText: string;
  /** The `data` of a success envelope; `undefined` for another answer. */
  readonly data: unknown;

  constructor(status: number, headers: Readonly<Record<string, string>>, bodyText: string, data?: unknown) {
    this.status = status;
    this.headers = new PlainHeaders(headers);
    this.bodyText = bodyText;
    this.data = data;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.toResponse().body;
  }

  text(): Promise<string> {
    return Promise.resolve(this.bodyText);
  }

  json(): Promise<unknown> {
    return Promise.resolve(JSON.parse(this.bodyText));
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    return this.toResponse().arrayBuffer();
  }

  /** The same answer with `name` set to `value`. */
  withHeader(name: string, value: string): JsonAnswer {
    return new JsonAnswer(this.status, { ...this.headers.record, [name]: value }, this.bodyText, this.data);
  }

  toResponse(): Response {
    return new Response(this.bodyText, { status: this.status, headers: this.headers.record });
  }
}

/** The fetch `Response` of an answer, for the callers of `sandbox.handle`. */
export function fetchResponse(answer: SandboxAnswer): Response {
  return answer instanceof JsonAnswer ? answer.toResponse() : answer;
}

/** An answer's headers as a `Headers` list, to build a changed `Response` from. */
export function headersOf(answer: SandboxAnswer): Headers {
  return new Headers(answer instanceof JsonAnswer ? answer.headers.record : answer.headers);
}
