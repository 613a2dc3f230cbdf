/**
 * Records a fetch-standard handler's traffic as {@link Exchange}s: it sits around the sandbox's
 * `handle`, so every request a test sends over HTTP and the answer it got are kept as text, without
 * changing either (the bodies are read from clones).
 */
import type { Exchange } from './openapi-check.js';

type Handle = (request: Request, ...rest: never[]) => Promise<Response>;

export interface Recorder {
  readonly exchanges: Exchange[];
  /** `handle`, recording each exchange (answers a fault rule changed, marked by `faultHeader`, are left out: they are wrong on purpose). */
  wrap<H extends Handle>(handle: H): H;
  /** Resolves once every recorded body has been read. */
  settled(): Promise<void>;
}

const headersOf = (headers: Headers): Record<string, string> => Object.fromEntries(headers.entries());

export function recorder(options: { faultHeader?: string } = {}): Recorder {
  const exchanges: Exchange[] = [];
  const pending = new Set<Promise<void>>();
  return {
    exchanges,
    wrap<H extends Handle>(handle: H): H {
      const wrapped = async (request: Request, ...rest: never[]) => {
        // Read alongside the handler, never before it: a slow body must not stall the request.
        const requestBody = request
          .clone()
          .text()
          .catch(() => '');
        const response = await handle(request, ...rest);
        if (options.faultHeader && response.headers.has(options.faultHeader)) return response;
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
      return wrapped as H;
    },
    async settled() {
      await Promise.all(pending);
    },
  };
}
