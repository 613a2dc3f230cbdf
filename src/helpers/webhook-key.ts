/**
 * The default key of a webhook event, `webhookEventKey`: what makes two deliveries "the same event"
 * for a `WebhookStore`. The service's events carry no id, so the key is made of what the event is.
 */
import type { WebhookEvent } from '../schemas/webhooks.js';

/** Keys longer than this are stored as their SHA-256 (stores index the key). */
export const MAX_KEY_LENGTH = 500;

/**
 * The stable key of a webhook event, the default `eventKey` of `createWebhookHandler`: two
 * deliveries of the same event get the same key, whatever their order, time or field order.
 *
 * - AUTHORISATION: `AUTHORISATION:<paymentReference>:<paymentStatus>`, `paymentStatus` being
 *   `AUTHORISED` when the event has none (as `client.webhooks.confirm` reads it), for example
 *   `AUTHORISATION:SHOP1-PXTT-42:AUTHORISED`. Each payment attempt (and each POS payment) has its
 *   own `paymentReference`, and the status tells an authorisation from a refusal.
 * - REFUND: `REFUND:<refundReference>:<status>`, `status` being `success` when the event has
 *   none, for example `REFUND:SHOP1-RFXT-7:success`.
 * - Any other code: `<event_code>:<the event as canonical JSON>` (object keys sorted, no spaces),
 *   since nothing documents which of its fields identify it.
 *
 * Other fields (amount, description...) are not part of the key of AUTHORISATION and REFUND: a
 * redelivery carries the same ones, and a different amount under the same reference is not a
 * second payment. `createWebhookHandler` stores the key with each NUL, lone surrogate and literal
 * `\u{` escaped as `\u{<hex code unit>}` (an ordinary key is unchanged), and one longer than 500
 * characters as `sha256:<hex of its SHA-256>`. Pass your own `eventKey` to change the key.
 */
export function webhookEventKey(event: WebhookEvent): string {
  const { event_code: code, data } = event;
  if (code === 'AUTHORISATION') return `${code}:${text(data.paymentReference)}:${text(data.paymentStatus ?? 'AUTHORISED')}`;
  if (code === 'REFUND') return `${code}:${text(data.refundReference)}:${text(data.status ?? 'success')}`;
  return `${code}:${canonicalJson(event)}`;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** JSON with object keys sorted at every level: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join()}]`;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  const record = value as Record<string, unknown>;
  const fields = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${fields.join()}}`;
}

/**
 * What a key holds that no store can keep as it is: NUL (PostgreSQL refuses it in `text`), a lone
 * UTF-16 surrogate (every store but memory writes UTF-8, where it becomes U+FFFD and merges with
 * other keys), and the escape's own opener `\u{`, so that escaping stays reversible.
 */
const UNSTORABLE = /\\u\{|\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `\u{hex}` of the code unit, or `\u{5c}u{` for a literal `\u{`: read back, it is the input. */
function escapeUnit(match: string): string {
  return match.length > 1 ? '\\u{5c}u{' : `\\u{${match.charCodeAt(0).toString(16)}}`;
}

/**
 * `key` escaped for storage: each NUL, lone surrogate and literal `\u{` becomes `\u{<hex code
 * unit>}` (`\u{0}`, `\u{d800}`, `\u{5c}u{`). The result is well-formed Unicode without NUL, which
 * every store keeps exactly, and distinct keys stay distinct (the escaping can be read back). A
 * key with none of the three, which is every ordinary key, is returned unchanged.
 */
export function escapeKey(key: string): string {
  return key.replace(UNSTORABLE, escapeUnit);
}

/**
 * `key` as a store holds it: {@link escapeKey}, or `sha256:<hex>` of the escaped key's UTF-8 when
 * it is longer than {@link MAX_KEY_LENGTH}. Never the raw string's hash: UTF-8 turns each lone
 * surrogate into U+FFFD, which would make distinct long keys share a hash. Async because it uses
 * WebCrypto, which every runtime of the SDK has.
 */
export async function storedKey(key: string): Promise<string> {
  const escaped = escapeKey(key);
  if (escaped.length <= MAX_KEY_LENGTH) return escaped;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(escaped)));
  return `sha256:${Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}
