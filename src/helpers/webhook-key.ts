/**
 * The default key of a webhook event, `webhookEventKey`: what makes two deliveries "the same event"
 * for a `WebhookStore`. The service's events carry no id, so the key is made of what the event is.
 */
import type { WebhookEvent } from '../schemas/webhooks.js';

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
 * - Any other code: `<event_code>:sha256:<hex>`, the SHA-256 of the event as canonical JSON
 *   (object keys sorted, no spaces), since nothing documents which of its fields identify it.
 *
 * Other fields (amount, description...) are not part of the key of AUTHORISATION and REFUND: a
 * redelivery carries the same ones, and a different amount under the same reference is not a
 * second payment. Pass your own `eventKey` to `createWebhookHandler` to change this.
 */
export function webhookEventKey(event: WebhookEvent): string {
  const { event_code: code, data } = event;
  if (code === 'AUTHORISATION') return `AUTHORISATION:${text(data.paymentReference)}:${text(data.paymentStatus ?? 'AUTHORISED')}`;
  if (code === 'REFUND') return `REFUND:${text(data.refundReference)}:${text(data.status ?? 'success')}`;
  return `${code}:sha256:${sha256Hex(canonicalJson(event))}`;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** JSON with object keys sorted at every level: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const fields = Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 round constants: the first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/**
 * SHA-256 of the UTF-8 bytes of `input`, in hex. Synchronous (unlike `crypto.subtle`, so that
 * `eventKey` stays a plain function) and free of `node:crypto` (the root entry runs in browsers and
 * workers too). Event bodies are small, so speed does not matter here.
 */
export function sha256Hex(input: string): string {
  const bytes = new TextEncoder().encode(input);
  const blocks = Math.ceil((bytes.length + 9) / 64);
  const padded = new Uint8Array(blocks * 64);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  // The length in bits, as a 64-bit big-endian integer (bodies are far below 2^53 bits).
  view.setUint32(padded.length - 8, Math.floor(bytes.length / 0x20000000));
  view.setUint32(padded.length - 4, (bytes.length * 8) >>> 0);
  const hash = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  for (let block = 0; block < blocks; block++) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block * 64 + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15] as number;
      const b = w[i - 2] as number;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = ((w[i - 16] as number) + s0 + (w[i - 7] as number) + s1) | 0;
    }
    let [a, b, c, d, e, f, g, h] = hash as unknown as [number, number, number, number, number, number, number, number];
    for (let i = 0; i < 64; i++) {
      const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + (K[i] as number) + (w[i] as number)) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    const sums = [a, b, c, d, e, f, g, h];
    for (let i = 0; i < 8; i++) hash[i] = ((hash[i] as number) + (sums[i] as number)) | 0;
  }
  return Array.from(hash, (word) => word.toString(16).padStart(8, '0')).join('');
}
