/** Work due by now (page expiry, terminal answers, resolutions) is applied before the request sees the state. */
import type { Step } from './chain.js';

export function dueWork<C>(runDue: () => void): Step<C> {
  return (context, next) => {
    runDue();
    return next(context);
  };
}
