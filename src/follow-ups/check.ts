/**
 * The check of a follow-up job, loaded with the first `start` (see createFollowUps): read the
 * target, act on a final outcome once under its webhook's key, schedule the next check.
 */
import { storedKey, webhookEventKey } from '../helpers/webhook-key.js';
import { claimTransaction, type WebhookTransaction } from '../helpers/webhook-store.js';
import type { WebhookCallback, WebhookContext } from '../helpers/webhooks.js';
import type { AuthorisationEvent, RefundEvent } from '../schemas/webhooks.js';
import type { FollowUpSettings } from './options.js';
import type { FollowUpJob, FollowUpTarget } from './queue.js';
import { type FinalOutcome, readOutcome } from './read.js';
import { followUpTargetKey } from './target.js';

type Result = 'done' | 'busy' | 'failed';

/** The queue handler of follow-ups run with `settings`. */
export function followUpCheck(settings: FollowUpSettings): (job: FollowUpJob) => Promise<void> {
  const { client, store, queue, onAuthorisation, onRefund, onSessionEnded, onStale, onError, schedule, horizonMs, leaseMs, clock } =
    settings;
  const delay = (check: number) => schedule[Math.min(check, schedule.length - 1)] as number;

  /** Claims `raw`, runs `work` under the claim and completes it: the handler's steps, for a follow-up. */
  async function once(
    raw: string,
    target: FollowUpTarget,
    work: (key: string, transaction: WebhookTransaction) => unknown,
  ): Promise<Result> {
    const key = await storedKey(raw);
    const claim = await store.claim(key, leaseMs);
    if (claim.status !== 'claimed') return claim.status;
    const { transaction, committed } = claimTransaction(store, key, claim.token);
    try {
      await work(key, transaction);
    } catch (error) {
      await store.release(key, claim.token).catch(() => undefined);
      await report(error, target);
      return 'failed';
    }
    // A complete that fails leaves the claim to its lease; the work is done, so the follow-up ends.
    if (!committed()) await store.complete(key, claim.token).catch((error: unknown) => report(error, target));
    return 'done';
  }

  async function report(error: unknown, target: FollowUpTarget): Promise<void> {
    try {
      await onError?.(error, target);
    } catch {
      // onError's own failure changes nothing.
    }
  }

  function act(outcome: FinalOutcome, target: FollowUpTarget): Promise<Result> | Result {
    const request = () => new Request(`http://follow-up.invalid/${encodeURIComponent(followUpTargetKey(target))}`, { method: 'POST' });
    if (outcome.kind === 'ended') {
      const { session } = outcome;
      return onSessionEnded
        ? once(`SESSION_ENDED:${session.sessionId}:${session.status}`, target, (key, transaction) =>
            onSessionEnded(session, { key, confirmed: session, transaction }),
          )
        : 'done';
    }
    const callback = (outcome.kind === 'refund' ? onRefund : onAuthorisation) as
      | WebhookCallback<AuthorisationEvent | RefundEvent>
      | undefined;
    const { event, confirmed } = outcome;
    return callback
      ? once(webhookEventKey(event), target, (key, transaction) =>
          callback(event, request(), { key, confirmed, transaction } as WebhookContext<typeof confirmed>),
        )
      : 'done';
  }

  async function check(job: FollowUpJob): Promise<void> {
    const { target, check: count, trackedAt } = job;
    let result: Result = 'failed';
    const left = trackedAt + horizonMs - clock.now();
    try {
      // Past the horizon a read that fails counts as not final: the target goes stale rather than checked for ever.
      const outcome = await readOutcome(client, target).catch(async (error: unknown) => {
        if (left > 0) throw error;
        await report(error, target);
        return undefined;
      });
      if (outcome) result = await act(outcome, target);
      else if (left <= 0) result = onStale ? await once(`STALE:${followUpTargetKey(target)}`, target, () => onStale(target)) : 'done';
    } catch (error) {
      await report(error, target);
    }
    if (result === 'done') return;
    // The last check falls on the horizon; past it (a failing check, a stale target's callback throwing), the schedule's pace.
    const wait = left > 0 ? Math.min(delay(count + 1), left) : delay(count + 1);
    await queue.schedule({ id: `${followUpTargetKey(target)}#${count + 1}`, target, check: count + 1, trackedAt }, wait);
  }

  return check;
}
