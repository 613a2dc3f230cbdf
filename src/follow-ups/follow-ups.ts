/**
 * `createFollowUps`: checks what the webhook did not bring. Each tracked session, POS payment or
 * refund is read through the API on a schedule until its outcome is final, and that outcome is
 * acted on once, under the same store key as its webhook's.
 */
import type { WebhookStore, WebhookTransaction } from '../helpers/webhook-store.js';
import type { WebhookCallback } from '../helpers/webhooks.js';
import type { Session } from '../schemas/sessions.js';
import type { AuthorisationEvent, RefundEvent } from '../schemas/webhooks.js';
import { followUpCheck } from './check.js';
import type { FollowUpQueue, FollowUpTarget } from './queue.js';
import type { FollowUpReader } from './read.js';
import { checkTarget, followUpTargetKey } from './target.js';

/** The default `schedule`, in ms: 30 s, 1 min, 2 min, 5 min, then every 15 min: 100 checks of a target that never ends, over 24 h. */
export const DEFAULT_FOLLOW_UP_SCHEDULE: readonly number[] = [30_000, 60_000, 120_000, 300_000, 900_000];

/** What `onSessionEnded` learns besides the session: its key, the session as read, and `transaction`. */
export interface SessionEndedContext {
  /** `SESSION_ENDED:<sessionId>:<status>`, as the store holds it. */
  key: string;
  /** The session as the check read it (the same as the first argument). */
  confirmed: Session;
  /** See {@link WebhookTransaction}. */
  transaction: WebhookTransaction;
}

/** Options of {@link createFollowUps}. At least one of `onAuthorisation`, `onRefund` and `onSessionEnded` is required. */
export interface FollowUpsOptions {
  /** The `PaymentClient` the checks read through (sessions, POS payments, per-payment modifications). */
  client: FollowUpReader;
  /** The `WebhookStore` of the app's `createWebhookHandler`: the same store, so that a webhook and a follow-up of one outcome run once. */
  store: WebhookStore;
  /** Where the checks are scheduled: `memoryFollowUpQueue()`, `pgBossFollowUpQueue(boss)`, `bullMqFollowUpQueue(connection)` or your own. */
  queue: FollowUpQueue;
  /**
   * Called once per final payment (a completed session, a POS payment `success` or `failed`) with
   * the AUTHORISATION event its webhook would bring (`paymentStatus` `AUTHORISED`, or `REFUSED`
   * for a failed POS payment). The webhook handler's callback fits: `request` is a stand-in
   * (`POST http://follow-up.invalid/<target key>`), `context.confirmed` the record read.
   */
  onAuthorisation?: WebhookCallback<AuthorisationEvent> | undefined;
  /** Called once per resolved refund (`success` or `failed`) with the REFUND event its webhook would bring; as `onAuthorisation`. */
  onRefund?: WebhookCallback<RefundEvent> | undefined;
  /** Called once per session that ended unpaid (`failed`, `cancelled`, `expired`): no webhook exists for these. */
  onSessionEnded?: ((session: Session, context: SessionEndedContext) => unknown) | undefined;
  /** Called once when a target is still not final at `horizonMs` (a session never opened stays `pending` for ever). */
  onStale?: ((target: FollowUpTarget) => unknown) | undefined;
  /** Called when a check fails (the API or the store) or a callback throws; the next check tries again. Its own errors are ignored. */
  onError?: ((error: unknown, target: FollowUpTarget) => unknown) | undefined;
  /** Delays between checks, in ms, the last one repeating; the first is from `track` to the first check. Default {@link DEFAULT_FOLLOW_UP_SCHEDULE}. */
  schedule?: readonly number[] | undefined;
  /** How long a target is checked, in ms from its first `track`; the last check falls on it. Default 24 h. */
  horizonMs?: number | undefined;
  /** How long a claim holds, in ms, as the webhook handler's `leaseMs`. Default 60 000. */
  leaseMs?: number | undefined;
}

/** What {@link createFollowUps} returns. */
export interface FollowUps {
  /** Schedules the checks of `target` (rejects with a `TypeError`, scheduling nothing, when it is malformed). Tracking a target twice is one follow-up. */
  track(target: FollowUpTarget): Promise<void>;
  /** Starts running due checks in this process, `concurrency` at once (default 4). */
  start(options?: { concurrency?: number | undefined }): Promise<void>;
  /** Stops taking checks; resolves once the checks in flight have finished. */
  stop(): Promise<void>;
}

const DAY_MS = 86_400_000;

function positive(value: unknown, name: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw new TypeError(`createFollowUps: ${name} must be a positive integer number of milliseconds`);
  return value as number;
}

/** The options, checked, with their defaults: what the checks run with. */
export type FollowUpSettings = FollowUpsOptions & ReturnType<typeof checkOptions>;

function checkOptions(options: FollowUpsOptions) {
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
  return {
    schedule: [...schedule],
    horizonMs: positive(options.horizonMs ?? DAY_MS, 'horizonMs'),
    leaseMs: positive(options.leaseMs ?? 60_000, 'leaseMs'),
  };
}

/**
 * Follow-ups: the payment results that reach you without a webhook. `track(target)` each session,
 * POS payment and refund when you create it; each check reads it through the API (reads only,
 * never a write) until its outcome is final, then claims that outcome in `store` under the key its
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
  const { schedule, horizonMs, queue } = settings;

  return {
    async track(given) {
      const target = checkTarget(given);
      await queue.schedule(
        { id: `${followUpTargetKey(target)}#0`, target, check: 0, trackedAt: Date.now() },
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
  };
}
