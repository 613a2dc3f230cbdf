/** `sandbox.requests`: the request log of any tenant, for tests (`expect(await sandbox.requests.count({ operation: 'refund' })).toBe(1)`). */
import { SandboxRequestFilter as FilterSchema, type RequestLogEntry, type SandboxRequestFilter, type SandboxRequests } from './schema.js';
import { parseWith, type RequestLog } from './store.js';

/** The log of the tenant with a webcode (the sandbox's own for `undefined`), `undefined` when there is no such tenant. */
export type LogOf = (webcode: string | undefined) => RequestLog | undefined;

/** The typed methods over the tenants' logs. */
export function sandboxRequests(logOf: LogOf): SandboxRequests {
  const split = (filter: SandboxRequestFilter = {}) => {
    const { environment = 'test', tenant, take, cursor, ...conditions } = parseWith(FilterSchema, filter);
    const log = logOf(tenant);
    // A typo in a test's tenant must not read as "no requests".
    if (!log) throw new TypeError(`sandbox.requests: no tenant with webcode ${tenant}`);
    return { log, environment, conditions, paging: { take, cursor } };
  };
  return {
    list: async (filter) => {
      const { log, environment, conditions, paging } = split(filter);
      return log.list(environment, { ...conditions, ...paging });
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
      const { log, environment, conditions } = split(filter);
      return log.clear(environment, conditions);
    },
  };
}
