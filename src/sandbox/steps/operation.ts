/** The endpoint's operation over the caller's tenant; it runs inside the call's transaction. */
import type { Answer, Deferred } from '../api/index.js';
import type { Caller } from '../tenants.js';
import type { WithBody } from './body.js';
import type { ApiCall } from './endpoint.js';

/** Runs a call's operation. */
export type Operation<C> = (context: C) => Answer | Deferred;

/** `origin` gives the sandbox's own origin for the links an answer carries (the payment page's). */
export function operation<C extends ApiCall & Caller & WithBody>(origin: (url: URL) => string): Operation<C> {
  return (context) =>
    context.route.run(context.tenant.api, {
      environment: context.environment,
      params: context.params,
      query: context.url.searchParams,
      body: context.body,
      origin: origin(context.url),
      idempotencyKey: context.idempotencyKey,
    });
}
