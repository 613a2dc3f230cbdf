/** Which endpoint of the service an API request names: 404 for none, 405 for another method; its path parameters decoded. */
import { API_ROUTES, type ApiRoute } from '../api/routes.js';
import { SANDBOX_CODES, ServiceFailure } from '../responses.js';
import type { Step } from './chain.js';
import type { ApiRequest } from './route.js';

/** An API request with its endpoint. */
export interface ApiCall extends ApiRequest {
  route: ApiRoute;
  params: string[];
}

export function endpoint(routes: readonly ApiRoute[] = API_ROUTES): Step<ApiRequest, ApiCall> {
  return (context, next) => {
    const { request, url, path } = context;
    const route = routes.find((candidate) => candidate.pattern.test(path));
    if (!route) throw new ServiceFailure(404, SANDBOX_CODES.notFound, `No endpoint at ${url.pathname}`);
    if (route.method !== request.method)
      throw new ServiceFailure(405, SANDBOX_CODES.methodNotAllowed, `Method ${request.method} not allowed on ${url.pathname}`);
    const params = (route.pattern.exec(path) ?? []).slice(1).map((param) => decodePathParam(param, url));
    if (context.notes) Object.assign(context.notes, { route, params });
    return next({ ...context, route, params });
  };
}

/** A path parameter; one that is not valid percent-encoding names no record, like any unknown id. */
function decodePathParam(param: string, url: URL): string {
  try {
    return decodeURIComponent(param);
  } catch {
    throw new ServiceFailure(404, SANDBOX_CODES.notFound, `Nothing at ${url.pathname}`);
  }
}
