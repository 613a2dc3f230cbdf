/** What a follow-up watches, checked, and its queue key (`followUpTargetKey`). */
import type { FollowUpTarget } from './queue.js';

const SHAPES = ['sessionId', 'posPaymentId', 'refundReference,sessionId', 'refundReference,posPaymentId'];

/**
 * A copy of `target` holding only its fields, or a `TypeError` saying what is wrong: it must be
 * `{ sessionId }`, `{ posPaymentId }`, `{ refundReference, sessionId }` or
 * `{ refundReference, posPaymentId }`, each a non-empty string of at most 200 characters.
 */
export function checkTarget(target: unknown): FollowUpTarget {
  const fields = typeof target === 'object' && target !== null ? Object.entries(target).filter(([, value]) => value !== undefined) : [];
  const shape = fields
    .map(([name]) => name)
    .sort((a, b) => (a === 'refundReference' ? -1 : b === 'refundReference' ? 1 : 0))
    .join();
  if (!SHAPES.includes(shape)) {
    throw new TypeError(
      `A follow-up target must be { sessionId }, { posPaymentId }, { refundReference, sessionId } or { refundReference, posPaymentId }, not ${shape ? `{ ${shape.replaceAll(',', ', ')} }` : String(target)}`,
    );
  }
  for (const [name, value] of fields) {
    if (typeof value !== 'string' || value === '' || value.length > 200)
      throw new TypeError(`A follow-up target's ${name} must be a non-empty string of at most 200 characters`);
  }
  return Object.fromEntries(fields) as FollowUpTarget;
}

/**
 * The key of a target, for queue job ids and logs: `session:<id>`, `pos:<id>`,
 * `refund:session:<id>:<ref>` or `refund:pos:<id>:<ref>`, each part URI-encoded so that two
 * distinct targets never share a key.
 */
export function followUpTargetKey(target: FollowUpTarget): string {
  const { sessionId, posPaymentId, refundReference } = target as Partial<Record<string, string>>;
  const payment = sessionId === undefined ? `pos:${encodeURIComponent(posPaymentId ?? '')}` : `session:${encodeURIComponent(sessionId)}`;
  return refundReference === undefined ? payment : `refund:${payment}:${encodeURIComponent(refundReference)}`;
}
