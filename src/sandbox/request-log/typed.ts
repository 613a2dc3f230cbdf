/** `sandbox.requests`: the request log of any tenant, for tests (`expect(await sandbox.requests.count({ operation: 'refund' })).toBe(1)`). */
import type { Environment } from '../../core/options.js';
import {
  SandboxRequestFilter as FilterSchema,
  type RequestLogEntry,
  type RequestLogFilter,
  type RequestLogPage,
  type SandboxRequestFilter,
  type SandboxRequests,
} from './schema.js';
import { parseWith, type RequestLog } from './store.js';

/** The log of the tenant with a webcode (the sandbox's own for `undefined`), `undefined` when there is no such tenant. */
export type LogOf = (webcode: string | undefined) => RequestLog | undefined;

/** A filter as the control API's query carries it: every condition as text. */
export type FilterText = { [Field in keyof RequestLogFilter]?: string };

/**
 * The control routes' own actions on a tenant's log (`GET` and `DELETE /_sandbox/{environment}/requests`),
 * which `list` and `clear` run, so that the typed methods and the routes cannot differ.
 */
export interface RequestRoutes {
  list(webcode: string | undefined, environment: Environment, query: FilterText & { take?: number; cursor?: string }): RequestLogPage;
  clear(webcode: string | undefined, environment: Environment, filter: FilterText): number;
}

/** A typed filter's conditions as the query's text: a status as `202` or `4xx`, an instant in ISO 8601. */
function asText(conditions: RequestLogFilter): FilterText {
  return Object.fromEntries(
    Object.entries(conditions)
      .filter(([, value]) => value !== undefined)
      .map(([field, value]) => [field, value instanceof Date ? value.toISOString() : String(value)]),
  );
}

/** The typed methods over the tenants' logs. */
export function sandboxRequests(logOf: LogOf, routes: RequestRoutes): SandboxRequests {
  const split = (filter: SandboxRequestFilter = {}) => {
    const { environment = 'test', tenant, take, cursor, ...conditions } = parseWith(FilterSchema, filter);
    const log = logOf(tenant);
    // A typo in a test's tenant must not read as "no requests".
    if (!log) throw new TypeError(`sandbox.requests: no tenant with webcode ${tenant}`);
    const paging = { ...(take !== undefined && { take }), ...(cursor !== undefined && { cursor }) };
    return { log, tenant, environment, conditions, paging };
  };
  return {
    list: async (filter) => {
      const { tenant, environment, conditions, paging } = split(filter);
      return routes.list(tenant, environment, { ...asText(conditions), ...paging });
    },
    get: async (id: string): Promise<RequestLogEntry | undefined> => {
      if (typeof id !== 'string') throw new TypeError('sandbox.requests.get: id must be a string');
      // `{webcode}-REQ-{n}`: a webcode has no `-`.
      const dash = id.indexOf('-');
      return dash > 0 ? logOf(id.slice(0, dash))?.get(id) : undefined;
    },
    count: async (filter) => {
      const { log, environment, conditions } = split(filter);
      return log.count(environment, conditions);
    },
    clear: async (filter) => {
      const { tenant, environment, conditions } = split(filter);
      return routes.clear(tenant, environment, asText(conditions));
    },
  };
}
