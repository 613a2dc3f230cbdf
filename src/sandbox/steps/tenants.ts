/**
 * The control API's `/_sandbox/tenants`: making, listing and removing tenants. Only the sandbox owner's keys (the main
 * tenant's, either environment) may: a test worker holding a tenant's key cannot see or remove others.
 */
import { readOptionalJsonText } from '../http/body.js';
import { jsonResponse, SANDBOX_CODES, ServiceFailure, successBody } from '../responses.js';
import type { Tenants } from '../tenants.js';
import { jsonObject } from '../validation.js';
import type { Step } from './chain.js';
import { CONTROL_PREFIX, type Located } from './request.js';
import { tenant } from './tenant.js';

/** `tenants` (GET, POST) and `tenants/{webcode}` (DELETE), after `/_sandbox/`. */
export const TENANTS_PATH = /^tenants(?:\/([^/]*))?$/;

/** Answers the tenants' routes; any other control path goes on. */
export function tenantRoutes(tenants: Tenants, maxBodyBytes: number): Step<Located, Located> {
  const caller = tenant<Located>(tenants);
  return async (context, next) => {
    const match = TENANTS_PATH.exec(context.url.pathname.slice(CONTROL_PREFIX.length));
    if (!match) return next(context);
    const webcode = match[1];
    const { method } = context.request;
    const allowed = webcode === undefined ? ['GET', 'POST'] : ['DELETE'];
    if (!allowed.includes(method)) {
      throw new ServiceFailure(405, SANDBOX_CODES.methodNotAllowed, `Method ${method} not allowed on ${context.url.pathname}`);
    }
    return caller(context, async ({ request, tenant: calling }) => {
      if (calling !== tenants.main) throw new ServiceFailure(403, 11008, "Only the sandbox's own keys may manage tenants");
      if (method === 'GET') return jsonResponse(200, successBody({ tenants: tenants.list() }));
      if (method === 'DELETE') {
        await tenants.remove(decoded(webcode ?? ''));
        return jsonResponse(200, successBody({ webcode, removed: true }));
      }
      const text = await readOptionalJsonText(request, maxBodyBytes);
      const body = text.trim() === '' ? {} : jsonObject(text);
      const made = tenants.create({ webcode: body.webcode as string | undefined, name: body.name as string | undefined });
      return jsonResponse(201, successBody(made));
    });
  };
}

function decoded(param: string): string {
  try {
    return decodeURIComponent(param);
  } catch {
    return param;
  }
}
