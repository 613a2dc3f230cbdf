/**
 * Where injected faults will strike an API call: before its operation runs (on the way in, before
 * its body is read) and after it has committed (on the way out, changing the answer `next` gives).
 * It sees the call's tenant (`context.tenant`) and route template (`context.route.template`,
 * `POST /payment/session`). No rule exists yet: the step passes every call through unchanged.
 */
import type { Step } from './chain.js';
import type { ApiCall } from './endpoint.js';

export function faults<C extends ApiCall>(): Step<C> {
  return (context, next) => next(context);
}
