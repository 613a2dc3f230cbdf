/**
 * The control API's two steps around the caller's check, both made from the declared routes
 * (routes.ts): which route a request names (404, 405), then its path parameters, query and body,
 * validated with the route's schemas, and the action it runs. The answers are JSON in the service's
 * envelopes.
 */
import type { Environment } from '../../core/options.js';
import { notFound } from '../api/context.js';
import { readOptionalJsonText } from '../http/body.js';
import { jsonResponse, SANDBOX_CODES, ServiceFailure, successBody } from '../responses.js';
import type { Next, Step } from '../steps/chain.js';
import { CONTROL_PREFIX, type Located } from '../steps/request.js';
import type { Caller, Tenants } from '../tenants.js';
import { jsonObject } from '../validation.js';
import { type ControlRoute, parseInput, refusedField } from './route.js';
import { CONTROL_ROUTES } from './routes.js';

/** Every declared route, in the order they are matched. */
export const ROUTE_LIST: readonly ControlRoute[] = Object.values(CONTROL_ROUTES) as readonly ControlRoute[];

/** A control request with its route; `environment` is `undefined` for the routes of no environment (any key). */
export interface ControlRequest extends Located {
  environment: Environment | undefined;
  route: ControlRoute;
  /** The path's parameters, as they came (still URL-encoded), in the route's order. */
  rawParams: readonly string[];
}

/**
 * Which control route a request names: under `/_sandbox/{test|live}/` the records of that
 * environment (its key only), under `/_sandbox/` the clock, fault rules, webhook URLs, reset and
 * tenants (any key). 404 for no route's path, 405 for a path of other methods.
 */
export function controlEndpoint(): Step<Located, ControlRequest> {
  return (context, next) => {
    const { request, url } = context;
    const rest = url.pathname.slice(CONTROL_PREFIX.length);
    const scoped = /^(test|live)\/(.*)$/.exec(rest);
    const path = scoped ? (scoped[2] ?? '') : rest;
    const matching = ROUTE_LIST.filter((candidate) => candidate.scoped === Boolean(scoped) && candidate.pattern.test(path));
    if (matching.length === 0) throw notFound(`Control endpoint ${url.pathname}`);
    const route = matching.find((candidate) => candidate.method.toUpperCase() === request.method);
    if (!route) throw new ServiceFailure(405, SANDBOX_CODES.methodNotAllowed, `Method ${request.method} not allowed on ${url.pathname}`);
    const rawParams = (route.pattern.exec(path) ?? []).slice(1);
    return next({ ...context, environment: scoped?.[1] as Environment | undefined, route, rawParams });
  };
}

/** The path's parameters by name, decoded; a segment that does not decode names no record (404). */
function paramsOf(route: ControlRoute, rawParams: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    route.paramNames.map((name, index) => {
      const raw = rawParams[index] ?? '';
      try {
        return [name, decodeURIComponent(raw)];
      } catch {
        throw notFound(`Record ${raw}`);
      }
    }),
  );
}

/** Reads and validates a request's parameters, query and body with its route's schemas: 404 for a path parameter, 400 for the rest. */
async function inputOf(context: ControlRequest, maxBodyBytes: number) {
  const { route, request, url } = context;
  // A segment a parameter's schema refuses names no record: 404 naming what it would have been.
  const params = parseInput(route.params, paramsOf(route, context.rawParams), (what) => notFound(what));
  // The first value of each query parameter, as `URLSearchParams.get` reads it.
  const queryValues = Object.fromEntries([...new Set(url.searchParams.keys())].map((name) => [name, url.searchParams.get(name)]));
  const query = parseInput(route.query, queryValues, refusedField);
  // A POST's or PUT's body is empty or a JSON object, within the size limit, also where the route takes none.
  const text = request.method === 'POST' || request.method === 'PUT' ? await readOptionalJsonText(request, maxBodyBytes) : '';
  const body = parseInput(route.body, text.trim() === '' ? {} : jsonObject(text), refusedField);
  return { params, query, body } as never;
}

/**
 * Runs the route on the caller's tenant's controls. `origin` gives the origin of the links an
 * answer carries (a session's `paymentUrl`), from the request's URL.
 */
export function runControl(maxBodyBytes: number, origin: (url: URL) => string, tenants: Tenants): Next<ControlRequest & Caller> {
  return async (context) => {
    const { route, tenant } = context;
    if (route.ownerOnly && tenant !== tenants.main) throw new ServiceFailure(403, 11008, "Only the sandbox's own keys may manage tenants");
    const input = await inputOf(context, maxBodyBytes);
    const data = await route.run(
      {
        environment: context.environment ?? 'test',
        tenant,
        control: tenant.control.forOrigin(origin(context.url)),
        tenants,
      },
      input,
    );
    return jsonResponse(route.status ?? 200, successBody(data));
  };
}
