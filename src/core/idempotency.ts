/**
 * Keys for the service's rule "Use one key per logical attempt (for example derived from an order
 * id plus a retry number)": a charge's key is known before anything is sent, and anyone who holds
 * the order (a retry, another process, the cashier pressing again) derives the same one.
 */
import { RequestValidationError, type ValidationIssue } from './errors.js';

const PREFIX = 'pos-payment:';
/** The service's keys are 1 to 255 visible ASCII characters; the prefix and attempt take the rest. */
const MAX_KEY_LENGTH = 255;

/**
 * The `Idempotency-Key` of attempt `attempt` (default 1) of the POS charge of order `orderId`:
 * `pos-payment:<orderId, URI-encoded>:<attempt>`, so that two orders or two attempts never share a
 * key. Move `attempt` on only after a final `failed` (a declined card): while an attempt may still
 * be charged (pending, unknown, a lost answer), every retry reuses its key, which the service runs
 * once. Throws `RequestValidationError` for an empty or too long id, or an attempt that is not a
 * positive integer.
 */
export function posPaymentKey(orderId: string, attempt = 1): string {
  const issues: ValidationIssue[] = [];
  if (!Number.isSafeInteger(attempt) || attempt < 1) issues.push({ path: 'attempt', message: 'must be a positive integer' });
  const key = typeof orderId === 'string' && orderId !== '' ? `${PREFIX}${encodeURIComponent(orderId)}:${attempt}` : undefined;
  if (key === undefined) issues.push({ path: 'orderId', message: 'must be a non-empty string' });
  else if (key.length > MAX_KEY_LENGTH)
    issues.push({
      path: 'orderId',
      message: `is too long for an Idempotency-Key (${MAX_KEY_LENGTH} characters with its prefix and attempt, URI-encoded)`,
    });
  if (issues.length > 0) throw new RequestValidationError(issues);
  return key as string;
}
