/**
 * Records HTTP traffic as {@link Exchange}s without changing it (bodies are read from clones): around
 * the sandbox's `handle`, every request a test sends and the answer it got; around the `fetch` the
 * sandbox is given, every webhook delivery it sends and the receiver's answer.
 */
import type { Exchange } from './openapi-check.js';

type Handle = (request: Request, ...rest: never[]) => Promise<Response>;

export interface Recorder {
  readonly exchanges: Exchange[];
  /** `handle`, recording each exchange. */
  wrap<H extends Handle>(handle: H): H;
  /** `fetch`, recording each request it sends and the answer. */
  wrapFetch(fetch: typeof globalThis.fetch): typeof globalThis.fetch;
  /** Resolves once every recorded body has been read. */
  settled(): Promise<void>;
}

const headersOf = (headers: Headers): Record<string, string> => Object.fromEntries(headers.entries());

/**
 * A recorder. Exchanges marked with `faultHeader` (on the request or the answer) are left out: a
 * fault rule made them wrong on purpose.
 */
export function recorder(options: { faultHeader?: string } = {}): Recorder {
  const exchanges: Exchange[] = [];
  const pending = new Set<Promise<void>>();
  const marked = (headers: Headers) => options.faultHeader !== undefined && headers.has(options.faultHeader);

  const record = async (request: Request, answer: (request: Request) => Promise<Response>): Promise<Response> => {
    // Read alongside the answer, never before it: a slow body must not stall the request.
    const requestBody = request
      .clone()
      .text()
      .catch(() => '');
    const response = await answer(request);
    if (marked(request.headers) || marked(response.headers)) return response;
    const copy = response.clone();
    const done = (async () => {
      exchanges.push({
        method: request.method,
        url: request.url,
        requestHeaders: headersOf(request.headers),
        requestBody: await requestBody,
        status: response.status,
        responseHeaders: headersOf(response.headers),
        responseBody: await copy.text().catch(() => ''),
      });
    })();
    pending.add(done);
    void done.finally(() => pending.delete(done));
    return response;
  };

  return {
    exchanges,
    wrap<H extends Handle>(handle: H): H {
      return ((request: Request, ...rest: never[]) => record(request, (given) => handle(given, ...rest))) as H;
    },
    wrapFetch(fetch) {
      return (input, init) => record(new Request(input, init), (request) => fetch(request));
    },
    async settled() {
      await Promise.all(pending);
    },
  };
}
