/**
 * The OpenAPI documents the sandbox serves, `/openapi.json` (the service's) and
 * `/_sandbox/openapi.json` (the control API's), with the address the client used as the server:
 * their paths, the origin, a cache of their text, and the answer. They describe the API and hold
 * no key or record, so they need no key and no dashboard token, also beyond loopback (the `Host`
 * check has run before), and any page may read them (CORS `*`), as API tools in a browser do.
 */
import type { ServerEntry } from '../openapi/document.js';
import type { JsonObject } from '../openapi/json-schema.js';
import type { SandboxAnswer } from './answer.js';
import { jsonResponse, SANDBOX_CODES, ServiceFailure } from './responses.js';

/** Where the service's document is served. */
export const OPENAPI_PATH = '/openapi.json';
/** Where the control API's document is served. */
export const CONTROL_OPENAPI_PATH = '/_sandbox/openapi.json';

/** A document for the given servers. */
export type DocumentOf = (servers: readonly ServerEntry[]) => JsonObject | Promise<JsonObject>;

/** The service's document; the generator loads on the first request for it. */
export const serviceDocument: DocumentOf = async (servers) => (await import('../openapi/document.js')).openApiDocument(servers);

/** The documents' text by path and origin (a sandbox answers on few names). */
const cache = new Map<string, string>();

/** The document at `path` for `origin`, as JSON text. */
export async function openApiText(path: string, origin: string, documentOf: DocumentOf): Promise<string> {
  const key = `${path} ${origin}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const text = JSON.stringify(await documentOf([{ url: origin, description: 'This sandbox' }]), null, 2);
  if (cache.size >= 16) cache.clear();
  cache.set(key, text);
  return text;
}

/** The answer to a request for the document at `path`, whose `servers` entry is `origin`: GET and HEAD only. */
export async function openApiAnswer(
  request: { readonly method: string },
  url: URL,
  origin: string,
  documentOf: DocumentOf,
): Promise<SandboxAnswer> {
  const { method } = request;
  if (method !== 'GET' && method !== 'HEAD') {
    throw new ServiceFailure(405, SANDBOX_CODES.methodNotAllowed, `Method ${method} not allowed on ${url.pathname}`);
  }
  const text = await openApiText(url.pathname, origin, documentOf);
  return jsonResponse(200, method === 'HEAD' ? '' : text, { 'access-control-allow-origin': '*', 'cache-control': 'no-cache' });
}
