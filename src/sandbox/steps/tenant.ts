/**
 * Who is calling: the tenant and key entry of the request's `X-API-KEY`, checked against the
 * environment of the path (403 otherwise) and the key's IP allow-list.
 */
import type { Environment } from '../../core/options.js';
import { SANDBOX_CODES, ServiceFailure } from '../responses.js';
import type { Caller, Tenants } from '../tenants.js';
import type { Step } from './chain.js';
import type { Located } from './request.js';

/** `environment` is the path's; `undefined` (the control API's routes of no environment) takes a key of either. */
export function tenant<C extends Located & { environment?: Environment | undefined }>(tenants: Tenants): Step<C, C & Caller> {
  return (context, next) => {
    const caller = tenants.byKey(context.request.headers.get('x-api-key') ?? '');
    if (!caller || caller.key.environment !== (context.environment ?? caller.key.environment)) {
      throw new ServiceFailure(403, 11008, 'API key without permission for this resource');
    }
    const { ipAllowList } = caller.key;
    if (ipAllowList && !ipAllowList.includes(normaliseAddress(context.info?.remoteAddress))) {
      throw new ServiceFailure(403, SANDBOX_CODES.ipNotAllowed, "Forbidden: this address is not in the API key's IP allow-list");
    }
    return next({ ...context, ...caller });
  };
}

function normaliseAddress(address: string | undefined): string {
  return address?.startsWith('::ffff:') ? address.slice(7) : (address ?? '');
}
