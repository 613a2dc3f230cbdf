/**
 * Who is calling: the tenant and key entry of the request's `X-API-KEY`, checked against the
 * environment of the path (403 otherwise) and the key's IP allow-list. A tenant removed while the
 * request was in flight answers here too: whatever the steps after it gave (a wait cut short, a
 * closed store, even an answer), the key no longer exists, so 403 as for any unknown key.
 */

import type { Environment } from '../../core/options.js';
import type { SandboxAnswer } from '../answer.js';
import { SANDBOX_CODES, ServiceFailure, unknownKey } from '../responses.js';
import type { Caller, Tenants } from '../tenants.js';
import type { Step } from './chain.js';
import type { Located } from './request.js';

/** `environment` is the path's; `undefined` (the control API's routes of no environment) takes a key of either. */
export function tenant<C extends Located & { environment?: Environment | undefined }>(tenants: Tenants): Step<C, C & Caller> {
  return async (context, next) => {
    const caller = tenants.byKey(context.request.headers.get('x-api-key') ?? '');
    if (!caller || caller.key.environment !== (context.environment ?? caller.key.environment)) throw unknownKey();
    const { ipAllowList } = caller.key;
    if (ipAllowList && !ipAllowList.includes(normaliseAddress(context.info?.remoteAddress))) {
      throw new ServiceFailure(403, SANDBOX_CODES.ipNotAllowed, "Forbidden: this address is not in the API key's IP allow-list");
    }
    const { removed } = caller.tenant;
    let answer: SandboxAnswer;
    try {
      answer = await next({ ...context, ...caller });
    } catch (error) {
      if (removed.aborted) throw unknownKey();
      throw error;
    }
    // A write that committed before the removal went with the tenant's store: nothing of it is left to answer.
    if (removed.aborted) throw unknownKey();
    return answer;
  };
}

function normaliseAddress(address: string | undefined): string {
  return address?.startsWith('::ffff:') ? address.slice(7) : (address ?? '');
}
