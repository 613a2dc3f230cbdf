/**
 * The end of an API call: the key's claim and the operation in one transaction of the tenant's
 * store (records, stored response, counters and scheduled work commit together), then the answer,
 * once the work it scheduled for now has run, or once the terminal has answered.
 */
import { successResponse } from '../responses.js';
import type { Caller } from '../tenants.js';
import type { WithBody } from './body.js';
import type { Next } from './chain.js';
import type { ApiCall } from './endpoint.js';
import type { Claim } from './idempotency.js';
import type { Operation } from './operation.js';

export function commit<C extends ApiCall & Caller & WithBody>(claim: Claim<C>, operation: Operation<C>): Next<C> {
  return async (context) => {
    const { store, scheduler, api } = context.tenant;
    for (;;) {
      const outcome = store.transaction(() => claim(context, () => operation(context)));
      if ('wait' in outcome) {
        // A request with this key is still running (a POS payment at its terminal): wait, then replay it.
        // Subscribed before running due work, which may be the very job that settles the key.
        const settled = api.keys.settled(context.environment, context.idempotencyKey ?? '');
        scheduler.runDue();
        await settled;
        continue;
      }
      // Work the request scheduled for now (a terminal with no delay) runs before it is answered.
      scheduler.runDue();
      if ('response' in outcome) return outcome.response;
      const answer = await outcome.deferred;
      return successResponse(answer.status, answer.data);
    }
  };
}
