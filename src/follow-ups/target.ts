/** What a follow-up watches, checked, and its queue key (`followUpTargetKey`). */
import type { PosRecoveryState } from '../core/errors.js';
import type { FollowUpTarget } from './queue.js';

const SHAPES = ['sessionId', 'posPaymentId', 'refundReference,sessionId', 'refundReference,posPaymentId'];

/**
 * A copy of `target` holding only its fields, or a `TypeError` saying what is wrong: it must be
 * `{ sessionId }`, `{ posPaymentId }`, `{ refundReference, sessionId }` or
 * `{ refundReference, posPaymentId }`, each a non-empty string of at most 200 characters, or
 * `{ pos: state }` (see {@link checkPosState}).
 */
export function checkTarget(target: unknown): FollowUpTarget {
  if (typeof target === 'object' && target !== null && 'pos' in target) return { pos: checkPosState((target as { pos: unknown }).pos) };
  const fields = typeof target === 'object' && target !== null ? Object.entries(target).filter(([, value]) => value !== undefined) : [];
  const shape = fields
    .map(([name]) => name)
    .sort((a, b) => (a === 'refundReference' ? -1 : b === 'refundReference' ? 1 : 0))
    .join();
  if (!SHAPES.includes(shape)) {
    throw new TypeError(
      `A follow-up target must be { sessionId }, { posPaymentId }, { refundReference, sessionId } or { refundReference, posPaymentId }, not ${shape ? `{ ${shape.replaceAll(',', ', ')} }` : String(target)} (a POS charge known by its state: { pos: state })`,
    );
  }
  for (const [name, value] of fields) {
    if (typeof value !== 'string' || value === '' || value.length > 200)
      throw new TypeError(`A follow-up target's ${name} must be a non-empty string of at most 200 characters`);
  }
  return Object.fromEntries(fields) as FollowUpTarget;
}

/**
 * A plain-JSON copy of a POS charge's state, or a `TypeError`: it needs its `idempotencyKey` and
 * `params` (a charge that may never have arrived is finished by resending them), or its `posPaymentId`.
 */
function checkPosState(state: unknown): PosRecoveryState {
  const { idempotencyKey, params, posPaymentId, sentAt } = (typeof state === 'object' && state !== null ? state : {}) as PosRecoveryState;
  const sendable = typeof idempotencyKey === 'string' && idempotencyKey !== '' && typeof params === 'object' && params !== null;
  const known = typeof posPaymentId === 'string' && posPaymentId !== '';
  if (!sendable && !known)
    throw new TypeError(
      "A follow-up target { pos: state } needs the charge's state as pos.preparePayment or PosPaymentPendingError gives it: its idempotencyKey and params, or its posPaymentId",
    );
  if (sentAt !== undefined && typeof sentAt !== 'string') throw new TypeError("A follow-up target's pos.sentAt must be an ISO 8601 string");
  return JSON.parse(JSON.stringify({ idempotencyKey, params, posPaymentId, sentAt })) as PosRecoveryState;
}

/**
 * The key of a target, for queue job ids and logs: `session:<id>`, `pos:<id>`,
 * `pos-charge:key:<idempotencyKey>` (`{ pos: state }`; `pos-charge:id:<posPaymentId>` without a key),
 * `refund:session:<id>:<ref>` or `refund:pos:<id>:<ref>`, each part URI-encoded so that two
 * distinct targets never share a key.
 */
export function followUpTargetKey(target: FollowUpTarget): string {
  if ('pos' in target) {
    const { idempotencyKey, posPaymentId } = target.pos;
    return idempotencyKey === undefined
      ? `pos-charge:id:${encodeURIComponent(posPaymentId ?? '')}`
      : `pos-charge:key:${encodeURIComponent(idempotencyKey)}`;
  }
  const { sessionId, posPaymentId, refundReference } = target as Partial<Record<string, string>>;
  const payment = sessionId === undefined ? `pos:${encodeURIComponent(posPaymentId ?? '')}` : `session:${encodeURIComponent(sessionId)}`;
  return refundReference === undefined ? payment : `refund:${payment}:${encodeURIComponent(refundReference)}`;
}
