/**
 * `Idempotency-Key` inside the call's transaction: a stored response is replayed (409 when the key
 * was used on another endpoint or with another body, a wait while that request still runs);
 * otherwise the operation runs and its success is stored under the key.
 */
import type { SandboxAnswer } from '../answer.js';
import type { Answer, Deferred } from '../api/index.js';
import { jsonResponse, SANDBOX_CODES, ServiceFailure, successBody, successResponse } from '../responses.js';
import { hashText } from '../store.js';
import type { Caller } from '../tenants.js';
import type { WithBody } from './body.js';
import type { ApiCall } from './endpoint.js';

/** How a call's transaction ends: an answer now, a wait for the running request with the same key, or an answer to come. */
export type Outcome = { response: SandboxAnswer } | { wait: true } | Deferred;

/** Replays or claims the call's key around `operation`; runs inside the transaction. */
export type Claim<C> = (context: C, operation: () => Answer | Deferred) => Outcome;

export function idempotency<C extends ApiCall & Caller & WithBody>(ttlMs: number): Claim<C> {
  return (context, operation) => {
    const { environment, idempotencyKey, route, tenant } = context;
    const { store, clock } = tenant;
    const bodyHash = idempotencyKey === null ? '' : hashText(canonical(context.body));
    if (idempotencyKey !== null) {
      const stored = store.idempotency.get(environment, idempotencyKey, clock.now() - ttlMs);
      if (stored) {
        if (stored.endpoint !== route.name)
          throw new ServiceFailure(
            409,
            SANDBOX_CODES.idempotencyEndpointMismatch,
            'Idempotency key already used for a different endpoint.',
          );
        if (stored.bodyHash !== bodyHash)
          throw new ServiceFailure(409, SANDBOX_CODES.idempotencyBodyMismatch, 'Idempotency key reused with a different request body.');
        if (stored.status === null || stored.response === null) return { wait: true };
        return { response: jsonResponse(stored.status, stored.response, { 'idempotent-replayed': 'true' }) };
      }
    }
    const result = operation();
    const entry = { environment, key: idempotencyKey ?? '', endpoint: route.name, bodyHash, createdAt: clock.now() };
    if ('deferred' in result) {
      // Its response is stored by the job that answers it; until then a resend waits.
      if (idempotencyKey !== null) store.idempotency.save({ ...entry, status: null, response: null });
      return result;
    }
    const response = successBody(result.data);
    // Only successes are stored: a failed request ran nothing, and may be sent again as it was.
    if (idempotencyKey !== null && result.status >= 200 && result.status < 300)
      store.idempotency.save({ ...entry, status: result.status, response });
    return { response: successResponse(result.status, result.data, response) };
  };
}

/**
 * JSON with sorted keys, so that the same body in another key order is the same request: the keys
 * that are array indices first, in numeric order (as an object built from the sorted entries lists
 * them, so that stored hashes stay the same), then the others sorted. Written out directly: a
 * replacer that rebuilt every object sorted cost more than the hash.
 */
export function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonical(item))).join(',')}]`;
  const keys = Object.keys(value);
  let indices = 0;
  while (indices < keys.length && isArrayIndex(keys[indices] ?? '')) indices++;
  const ordered = indices === 0 ? keys.sort() : [...keys.slice(0, indices), ...keys.slice(indices).sort()];
  const parts: string[] = [];
  for (const key of ordered) {
    const inner = (value as Record<string, unknown>)[key];
    if (inner !== undefined && typeof inner !== 'function') parts.push(`${JSON.stringify(key)}:${canonical(inner)}`);
  }
  return `{${parts.join(',')}}`;
}

/** Whether an object lists `key` first, in numeric order: an array index, a canonical integer below 2^32 - 1. */
function isArrayIndex(key: string): boolean {
  return /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 4_294_967_295;
}
