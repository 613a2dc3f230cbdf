/**
 * `GET /openapi.json` (the service's OpenAPI document) and `GET /_sandbox/openapi.json` (the
 * control API's), with the sandbox's own origin as the server. They describe the API and hold no
 * key or record, so they need no key and no dashboard token, also beyond loopback (the `Host`
 * check has run before), and any page may read them (CORS `*`), as API tools in a browser do.
 */
import { jsonResponse, SANDBOX_CODES, ServiceFailure } from '../responses.js';
import type { Step } from './chain.js';
import type { Located } from './request.js';

/** Where the service's document is served. */
export const OPENAPI_PATH = '/openapi.json';
/** Where the control API's document is served. */
export const CONTROL_OPENAPI_PATH = '/_sandbox/openapi.json';

/** The documents' text by origin (one or two in practice: a sandbox answers on few names). */
const cache = new Map<string, string>();

/** The document at `path` for `origin`; the generators load on the first request for one. */
export async function openApiText(path: string, origin: string): Promise<string> {
  const key = `${path} ${origin}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const servers = [{ url: origin, description: 'This sandbox' }];
  const document =
    path === OPENAPI_PATH
      ? (await import('../../openapi/document.js')).openApiDocument(servers)
      : (await import('../../openapi/control.js')).controlApiDocument(servers);
  const text = JSON.stringify(document, null, 2);
  if (cache.size >= 16) cache.clear();
  cache.set(key, text);
  return text;
}

/**
 * The origin a client reached the sandbox at: its `Host` (already found to name this sandbox), or
 * the sandbox's own for an in-process request.
 */
export function requestOrigin(context: Located, origin: (url: URL) => string): string {
  const host = context.request.headers.get('host');
  return host ? `${context.url.protocol}//${host}` : origin(context.url);
}

export function openApiDocuments(origin: (url: URL) => string): Step<Located> {
  return async (context, next) => {
    const { pathname } = context.url;
    if (pathname !== OPENAPI_PATH && pathname !== CONTROL_OPENAPI_PATH) return next(context);
    const { method } = context.request;
    if (method !== 'GET' && method !== 'HEAD') {
      throw new ServiceFailure(405, SANDBOX_CODES.methodNotAllowed, `Method ${method} not allowed on ${pathname}`);
    }
    const text = await openApiText(pathname, requestOrigin(context, origin));
    return jsonResponse(200, method === 'HEAD' ? '' : text, { 'access-control-allow-origin': '*', 'cache-control': 'no-cache' });
  };
}
