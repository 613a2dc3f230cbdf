/**
 * The body of an API call: JSON only (415), within the size limit (413), an object (400); and the
 * `webcode` it names (in the body of a POST, the query of a GET), which must be the key's.
 */
import { readJsonText } from '../http/body.js';
import { invalid, ServiceFailure } from '../responses.js';
import type { Caller } from '../tenants.js';
import { jsonObject } from '../validation.js';
import type { Step } from './chain.js';
import type { ApiCall } from './endpoint.js';

/** An API call with its body and `Idempotency-Key`. */
export interface WithBody {
  /** The JSON object of a POST; `{}` for a GET. */
  body: Record<string, unknown>;
  idempotencyKey: string | null;
}

export function body<C extends ApiCall & Caller>(maxBodyBytes: number): Step<C, C & WithBody> {
  return async (context, next) => {
    const { request, url, key, tenant, received } = context;
    const post = request.method === 'POST';
    const text = post ? await readJsonText(request, maxBodyBytes, received) : '';
    if (post && context.notes) context.notes.text = text;
    const body = post ? jsonObject(text) : {};
    if (post && context.notes) context.notes.body = body;
    const sentWebcode = post ? body.webcode : url.searchParams.get('webcode');
    if (sentWebcode === undefined || sentWebcode === null || sentWebcode === '') throw invalid('webcode is required');
    if (sentWebcode !== (key.webcode ?? tenant.webcode)) throw new ServiceFailure(403, 11008, 'webcode does not match the API key');
    return next({ ...context, body, idempotencyKey: post ? request.headers.get('idempotency-key') : null });
  };
}
