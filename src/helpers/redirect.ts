import {
  ConfigurationError,
  RedirectDataError,
  type RedirectDataErrorReason,
  type RedirectMismatch,
  RedirectMismatchError,
} from '../core/errors.js';
import { parseWith } from '../core/response.js';
import { type RedirectData, RedirectDataSchema } from '../schemas/redirect.js';

/** JWS algorithms accepted for a signed `data` token (HMAC with the client secret). */
export const REDIRECT_SIGNING_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
/** JWE content encryptions accepted for an encrypted `data` token (key management `dir`). */
export const REDIRECT_ENCRYPTIONS = ['A128GCM', 'A256GCM', 'A128CBC-HS256', 'A256CBC-HS512'] as const;

/** An algorithm `decodeRedirectData` may accept. `none` is never accepted. */
export type RedirectAlgorithm = (typeof REDIRECT_SIGNING_ALGORITHMS)[number] | (typeof REDIRECT_ENCRYPTIONS)[number];

/** Options of {@link decodeRedirectData}. */
export interface DecodeRedirectOptions {
  /** The algorithms accepted: JWS `alg` values and JWE `enc` values. Default: all of them. */
  algorithms?: readonly RedirectAlgorithm[] | undefined;
  /** Leeway for `exp` and `nbf`, in seconds or as a span such as `'30s'`. Default 0. */
  clockTolerance?: number | string | undefined;
  /** The time to check `exp` and `nbf` against. Default: now. */
  currentDate?: Date | undefined;
}

/**
 * The longest `data` token {@link decodeRedirectData} reads, in characters: longer ones are refused
 * with reason `too-large` before any cryptography. A token of the sandbox with a 255-character
 * description and a 100-character `customReference` weighs about 1 100 characters, 3 500 at worst
 * (every character escaped in its JSON); 8 192 leaves room for more claims, and is as much as most
 * servers take in a whole request line.
 */
export const REDIRECT_TOKEN_MAX_CHARS = 8192;

/** Key length in bytes each content encryption needs. */
const KEY_BYTES: Record<(typeof REDIRECT_ENCRYPTIONS)[number], number> = {
  A128GCM: 16,
  A256GCM: 32,
  'A128CBC-HS256': 32,
  'A256CBC-HS512': 64,
};

const JOSE_REASONS: Record<string, RedirectDataErrorReason> = {
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'signature',
  ERR_JOSE_ALG_NOT_ALLOWED: 'algorithm',
  ERR_JOSE_NOT_SUPPORTED: 'algorithm',
  ERR_JWT_EXPIRED: 'expired',
  ERR_JWE_DECRYPTION_FAILED: 'decryption',
  ERR_JWS_INVALID: 'malformed',
  ERR_JWE_INVALID: 'malformed',
  ERR_JWT_INVALID: 'malformed',
  ERR_JWK_INVALID: 'malformed',
};

const MESSAGES: Record<RedirectDataErrorReason, string> = {
  missing: 'The redirect carries no data token',
  malformed: 'The redirect data is not a well-formed token',
  signature: 'The redirect data signature does not match the client secret: the token was altered or made with another secret',
  algorithm: 'The redirect data uses an algorithm that is not allowed',
  expired: 'The redirect data has expired',
  'not-before': 'The redirect data is not valid yet',
  decryption: 'The redirect data could not be decrypted with the client secret: the token was altered or made with another secret',
  'too-large': `The redirect data is longer than ${REDIRECT_TOKEN_MAX_CHARS} characters`,
};

function fail(reason: RedirectDataErrorReason, detail?: string): never {
  throw new RedirectDataError(reason, detail ? `${MESSAGES[reason]} (${detail})` : MESSAGES[reason]);
}

function headerOf(segment: string): Record<string, unknown> {
  try {
    const json = atob(segment.replace(/-/g, '+').replace(/_/g, '/'));
    const header: unknown = JSON.parse(json);
    if (typeof header === 'object' && header !== null && !Array.isArray(header)) return header as Record<string, unknown>;
  } catch {
    // fall through to the malformed error below
  }
  return fail('malformed', 'unreadable header');
}

/** A client secret, or several while one is rotated: the current first, then those tokens may still carry. */
export type ClientSecrets = string | Uint8Array | readonly (string | Uint8Array)[];

function secretBytes(secret: string | Uint8Array): Uint8Array<ArrayBuffer> {
  if (typeof secret === 'string' && secret !== '') return new TextEncoder().encode(secret);
  if (secret instanceof Uint8Array && secret.length > 0) return new Uint8Array(secret);
  throw new ConfigurationError('clientSecret', 'The client secret must be a non-empty string or byte array');
}

/** Each secret's bytes, or a `ConfigurationError` for an empty list or a secret that is not one. */
function secretKeys(secrets: ClientSecrets): Uint8Array<ArrayBuffer>[] {
  if (!Array.isArray(secrets)) return [secretBytes(secrets as string | Uint8Array)];
  if (secrets.length === 0) throw new ConfigurationError('clientSecret', 'The list of client secrets is empty: give the current one first');
  return secrets.map(secretBytes);
}

/** Whether a failure of one key says only that the token was not made with it (another key may still open it). */
function notThisKey(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' || code === 'ERR_JWE_DECRYPTION_FAILED';
}

/**
 * The payload of the first key that opens the token. Every key is tried, whichever opens it, so
 * that the time taken does not tell which one did (each comparison is constant-time in jose). A
 * failure past the key (an expired token, a bad claim) is the opening key's; when none opens it,
 * the first key's failure, reworded to say that none of the secrets matched.
 */
async function openWithAny(keys: Uint8Array<ArrayBuffer>[], open: (key: Uint8Array<ArrayBuffer>) => Promise<unknown>): Promise<unknown> {
  const results = await Promise.allSettled(keys.map(open));
  const opened = results.find((result) => result.status === 'fulfilled' || !notThisKey(result.reason));
  const chosen = opened ?? results[0];
  if (chosen?.status === 'fulfilled') return chosen.value;
  const reason = (chosen as PromiseRejectedResult).reason;
  if (opened === undefined && keys.length > 1) {
    const code = (reason as { code?: unknown }).code;
    fail(code === 'ERR_JWE_DECRYPTION_FAILED' ? 'decryption' : 'signature', `none of the ${keys.length} client secrets given matched`);
  }
  throw reason;
}

/**
 * The `dir` key for a content encryption: the secret's bytes when they have exactly the length the
 * encryption needs, otherwise the first bytes of SHA-256 (16 or 32 bytes) or SHA-512 (64 bytes) of them.
 */
async function encryptionKey(secret: Uint8Array<ArrayBuffer>, enc: (typeof REDIRECT_ENCRYPTIONS)[number]): Promise<Uint8Array> {
  const length = KEY_BYTES[enc];
  if (secret.length === length) return secret;
  const digest = await crypto.subtle.digest(length > 32 ? 'SHA-512' : 'SHA-256', secret);
  return new Uint8Array(digest, 0, length);
}

/**
 * Decodes and verifies the `data` parameter the service adds to `urlOk`, with the environment's
 * client secret. The reference calls it encrypted without naming the algorithm, so both forms are
 * accepted by their shape:
 *
 * - a JWS (three segments) signed with HS256, HS384 or HS512, keyed with the secret's UTF-8 bytes;
 * - a JWE (five segments) with `alg: dir` and `enc` A128GCM, A256GCM, A128CBC-HS256 or
 *   A256CBC-HS512. The key is the secret's UTF-8 bytes when they have exactly the length `enc`
 *   needs (16, 32, 32, 64 bytes); otherwise the first 16 or 32 bytes of SHA-256, or the 64 bytes of
 *   SHA-512 (A256CBC-HS512), of those bytes.
 *
 * `alg: none` is always refused; `exp` and `nbf` are enforced when present. A token longer than
 * {@link REDIRECT_TOKEN_MAX_CHARS} (8 192) characters is refused (reason `too-large`) before any
 * cryptography. Throws {@link RedirectDataError} with a `reason`; the secret never appears in it.
 *
 * While a client secret is rotated, customers come back with tokens made with the old one: pass
 * both, the current first (`[current, previous]`). Each is tried, in constant time per secret and
 * whichever matches; none matching is reason `signature` (or `decryption`) saying so.
 */
export async function decodeRedirectData(
  token: string,
  clientSecret: ClientSecrets,
  options: DecodeRedirectOptions = {},
): Promise<RedirectData> {
  const keys = secretKeys(clientSecret);
  if (token === undefined || token === null || token === '') fail('missing');
  if (typeof token !== 'string') fail('malformed', 'not a string');
  // Checked before anything is decoded or verified: an HMAC or a decryption of megabytes is work an
  // attacker's URL should not buy.
  if (token.length > REDIRECT_TOKEN_MAX_CHARS) fail('too-large', `${token.length} characters`);
  const segments = token.trim().split('.');
  if (segments.length !== 3 && segments.length !== 5) fail('malformed', `${segments.length} segments`);
  const header = headerOf(segments[0] ?? '');
  const allowed = new Set<string>(options.algorithms ?? [...REDIRECT_SIGNING_ALGORITHMS, ...REDIRECT_ENCRYPTIONS]);
  const jose = await import('./jose.js');
  const claims = {
    ...(options.clockTolerance === undefined ? {} : { clockTolerance: options.clockTolerance }),
    ...(options.currentDate === undefined ? {} : { currentDate: options.currentDate }),
  };

  let payload: unknown;
  try {
    if (segments.length === 3) {
      const alg = String(header.alg);
      if (!allowed.has(alg) || !(REDIRECT_SIGNING_ALGORITHMS as readonly string[]).includes(alg)) fail('algorithm', `alg ${alg}`);
      payload = await openWithAny(keys, async (key) => (await jose.jwtVerify(token.trim(), key, { algorithms: [alg], ...claims })).payload);
    } else {
      const enc = String(header.enc) as (typeof REDIRECT_ENCRYPTIONS)[number];
      if (header.alg !== 'dir' || !allowed.has(enc) || !(enc in KEY_BYTES)) fail('algorithm', `alg ${String(header.alg)}, enc ${enc}`);
      const options = { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: [enc], ...claims };
      payload = await openWithAny(
        keys,
        async (key) => (await jose.jwtDecrypt(token.trim(), await encryptionKey(key, enc), options)).payload,
      );
    }
  } catch (error) {
    if (error instanceof RedirectDataError) throw error;
    const code = (error as { code?: unknown }).code;
    const claim = (error as { claim?: unknown }).claim;
    if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') fail(claim === 'nbf' ? 'not-before' : 'malformed', `claim ${String(claim)}`);
    fail((typeof code === 'string' && JOSE_REASONS[code]) || 'malformed');
  }
  const parsed = parseWith(RedirectDataSchema, payload);
  if (!parsed.success) fail('malformed', `unexpected claim ${parsed.error.issues[0]?.path.join('.')}`);
  return parsed.data;
}

/** What the merchant expects the redirect to say; only the fields given are compared. */
export interface ExpectedRedirect {
  paymentReference?: string | undefined;
  sessionId?: string | undefined;
  /** Integer cents, or `{ value, currency }`. */
  amount?: number | { value: number; currency: string } | undefined;
  currency?: string | undefined;
  customReference?: string | undefined;
  status?: string | undefined;
  [claim: string]: unknown;
}

function readData(source: string | URL | URLSearchParams): string | undefined {
  if (source instanceof URLSearchParams) return source.get('data') ?? undefined;
  if (source instanceof URL) return source.searchParams.get('data') ?? undefined;
  if (typeof source !== 'string') return undefined;
  try {
    return new URL(source).searchParams.get('data') ?? undefined;
  } catch {
    // Not an absolute URL: a query string, with or without its `?`.
    return new URLSearchParams(source.slice(source.indexOf('?') + 1)).get('data') ?? undefined;
  }
}

function amountOf(data: RedirectData): { value: unknown; currency: unknown } {
  const amount = data.amount;
  if (typeof amount === 'object' && amount !== null) return { value: amount.value, currency: data.currency ?? amount.currency };
  return { value: amount, currency: data.currency };
}

/**
 * Reads `data` from the `urlOk` the customer arrived at, decodes it (see {@link decodeRedirectData}),
 * and compares it with what the merchant expected for the order. Throws {@link RedirectDataError}
 * (missing, malformed, tampered, expired, wrong key) or {@link RedirectMismatchError} naming every
 * field that differs. Returns the decoded data. `clientSecret` may list several secrets while one
 * is rotated, the current first (see {@link decodeRedirectData}).
 *
 * ```ts
 * const data = await verifyRedirect(request.url, clientSecret, { paymentReference, amount: 2599, currency: 'EUR' });
 * ```
 */
export async function verifyRedirect(
  urlOrSearchParams: string | URL | URLSearchParams,
  clientSecret: ClientSecrets,
  expected: ExpectedRedirect,
  options?: DecodeRedirectOptions,
): Promise<RedirectData> {
  const token = readData(urlOrSearchParams);
  if (!token) fail('missing');
  const data = await decodeRedirectData(token, clientSecret, options);
  const actualAmount = amountOf(data);
  const mismatches: RedirectMismatch[] = [];
  for (const [field, wanted] of Object.entries(expected)) {
    if (wanted === undefined) continue;
    if (field === 'amount') {
      const value = typeof wanted === 'object' && wanted !== null ? (wanted as { value: unknown }).value : wanted;
      if (actualAmount.value !== value) mismatches.push({ field, expected: value, actual: actualAmount.value });
      const currency = typeof wanted === 'object' && wanted !== null ? (wanted as { currency: unknown }).currency : undefined;
      if (currency !== undefined && expected.currency === undefined && actualAmount.currency !== currency) {
        mismatches.push({ field: 'currency', expected: currency, actual: actualAmount.currency });
      }
    } else if (field === 'currency') {
      if (actualAmount.currency !== wanted) mismatches.push({ field, expected: wanted, actual: actualAmount.currency });
    } else if (data[field] !== wanted) {
      mismatches.push({ field, expected: wanted, actual: data[field] });
    }
  }
  if (mismatches.length > 0) throw new RedirectMismatchError(mismatches);
  return data;
}
