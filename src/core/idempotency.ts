import { v4 as uuidv4 } from 'uuid';

/**
 * A fresh `Idempotency-Key`: a UUID v4, as the service recommends. One per logical call, made
 * before the first attempt so that every retry and every recovery resend carries the same key.
 */
export function newIdempotencyKey(): string {
  return uuidv4();
}
