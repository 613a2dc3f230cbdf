/**
 * `createFollowUps`: checks what the webhook did not bring. Each tracked session, POS payment or
 * refund is read through the API on a schedule until its outcome is final, and that outcome is
 * acted on once, under the same store key as its webhook's.
 */
import { followUpCheck } from './check.js';
import { ADOPT_CLOCK } from './memory-queue.js';
import type { FollowUps, FollowUpsOptions } from './options.js';
import type { FollowUpClock } from './queue.js';
import { checkTarget, followUpTargetKey } from './target.js';

export type { FollowUpSettings, FollowUps, FollowUpsOptions, SessionEndedContext } from './options.js';

/** The default `schedule`, in ms: 30 s, 1 min, 2 min, 5 min, then every 15 min: 100 checks of a target that never ends, over 24 h. */
export const DEFAULT_FOLLOW_UP_SCHEDULE: readonly number[] = [30_000, 60_000, 120_000, 300_000, 900_000];

const DAY_MS = 86_400_000;

function positive(value: unknown, name: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw new TypeError(`createFollowUps: ${name} must be a positive integer number of milliseconds`);
  return value as number;
}

function checkOptions(options: FollowUpsOptions): { schedule: number[]; horizonMs: number; leaseMs: number; clock: FollowUpClock } {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('createFollowUps needs an options object { client, store, queue, ... }');
  const { client, store, queue, schedule = DEFAULT_FOLLOW_UP_SCHEDULE } = options;
  if (typeof client?.sessions?.retrieve !== 'function' || typeof client?.pos?.list !== 'function')
    throw new TypeError('createFollowUps: client must be a PaymentClient');
  if (['claim', 'complete', 'release'].some((name) => typeof (store as unknown as Record<string, unknown>)?.[name] !== 'function'))
    throw new TypeError('createFollowUps: store must be a WebhookStore (claim, complete, release): the one the webhook handler uses');
  if (['schedule', 'start', 'stop'].some((name) => typeof (queue as unknown as Record<string, unknown>)?.[name] !== 'function'))
    throw new TypeError('createFollowUps: queue must be a FollowUpQueue (schedule, start, stop), for example memoryFollowUpQueue()');
  for (const name of ['onAuthorisation', 'onRefund', 'onSessionEnded', 'onStale', 'onError'] as const)
    if (options[name] !== undefined && typeof options[name] !== 'function')
      throw new TypeError(`createFollowUps: ${name} must be a function`);
  if (!options.onAuthorisation && !options.onRefund && !options.onSessionEnded)
    throw new TypeError('createFollowUps needs at least one of onAuthorisation, onRefund and onSessionEnded');
  if (!Array.isArray(schedule) || schedule.length === 0)
    throw new TypeError('createFollowUps: schedule must be a non-empty array of delays in ms');
  for (const [index, delay] of schedule.entries()) positive(delay, `schedule[${index}]`);
  if (options.clock !== undefined && typeof options.clock?.now !== 'function')
    throw new TypeError('createFollowUps: clock must have now() (sandbox.clock, or manualClock() from payment-service-sdk/sandbox)');
  return {
    clock: options.clock ?? Date,
    schedule: [...schedule],
    horizonMs: positive(options.horizonMs ?? DAY_MS, 'horizonMs'),
    leaseMs: positive(options.leaseMs ?? 60_000, 'leaseMs'),
  };
}

/**
 * Follow-ups: the payment results that reach you without a webhook. `track(target)` each session,
 * POS payment and refund when you create it (a POS charge as `{ pos: state }` when you send it, also
 * before its answer came); each check reads it through the API (reads only, but for a charge that
 * nothing lists, resent with its own key, which starts it at most once) until its outcome is final, then claims that outcome in `store` under the key its
 * webhook has (`webhookEventKey`; `SESSION_ENDED:<sessionId>:<status>` for a session that ended
 * unpaid) and runs its callback with the webhook handler's context, then completes it. Whichever
 * comes first, the webhook or a follow-up (on any instance), the callback runs to success once; the
 * later one finds the key done (a webhook is then answered as a duplicate). A callback that throws
 * is run again by the next check; a key another instance holds (`busy`) is checked again next time.
 *
 * ```ts
 * const followUps = createFollowUps({ client, store, queue: memoryFollowUpQueue(), onAuthorisation, onSessionEnded });
 * await followUps.start();
 * const session = await client.sessions.create(params);
 * await followUps.track({ sessionId: session.sessionId });
 * ```
 *
 * Throws a `TypeError` naming the option when one is missing or malformed.
 */
export function createFollowUps(options: FollowUpsOptions): FollowUps {
  const settings = { ...options, ...checkOptions(options) };
  const { schedule, horizonMs, queue, clock } = settings;
  if (options.clock) (queue as { [ADOPT_CLOCK]?: (clock: FollowUpClock) => void })[ADOPT_CLOCK]?.(options.clock);

  return {
    async track(given) {
      const target = checkTarget(given);
      if (
        'pos' in target &&
        (typeof options.client.pos.checkPayment !== 'function' || typeof options.client.pos.resumeRecovery !== 'function')
      )
        throw new TypeError(
          'createFollowUps: a { pos: state } target needs a PaymentClient as client (pos.checkPayment, pos.resumeRecovery)',
        );
      await queue.schedule(
        { id: `${followUpTargetKey(target)}#0`, target, check: 0, trackedAt: clock.now() },
        Math.min(schedule[0] as number, horizonMs),
      );
    },
    async start(startOptions = {}) {
      const concurrency = startOptions.concurrency ?? 4;
      if (!Number.isSafeInteger(concurrency) || concurrency < 1)
        throw new TypeError('createFollowUps: start({ concurrency }) must be a positive integer');
      await queue.start(followUpCheck(settings), { concurrency });
    },
    stop: () => queue.stop(),
    async runDue() {
      if (typeof queue.runDue !== 'function')
        throw new TypeError('createFollowUps: runDue needs a queue that can run its due jobs now, such as memoryFollowUpQueue()');
      await queue.runDue();
    },
  };
}
