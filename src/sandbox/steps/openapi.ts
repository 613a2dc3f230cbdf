/** `/openapi.json`: the service's OpenAPI document, before anything else of the request path runs (no key). */
import { OPENAPI_PATH, openApiAnswer, serviceDocument } from '../openapi.js';
import type { Step } from './chain.js';
import type { Located } from './request.js';

export function serviceOpenApi(origin: (url: URL) => string): Step<Located> {
  return (context, next) =>
    context.url.pathname === OPENAPI_PATH
      ? openApiAnswer(context.request, context.url, origin(context.url), serviceDocument)
      : next(context);
}
