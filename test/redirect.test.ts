import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ConfigurationError,
  decodeRedirectData,
  REDIRECT_TOKEN_MAX_CHARS,
  RedirectDataError,
  type RedirectDataErrorReason,
  RedirectMismatchError,
  verifyRedirect,
} from '../src/index.js';
import { rejection } from './support/rejection.js';

// Tokens here are built with node:crypto alone, independently of jose, which the SDK uses.

// Counts the calls into jose, which verifies and decrypts: a token refused for its size never gets there.
const joseCalls = vi.hoisted(() => ({ count: 0 }));
vi.mock('../src/helpers/jose.js', async (importOriginal) => {
  const jose = await importOriginal<typeof import('../src/helpers/jose.js')>();
  return {
    jwtVerify: (...args: Parameters<typeof jose.jwtVerify>) => {
      joseCalls.count += 1;
      return jose.jwtVerify(...args);
    },
    jwtDecrypt: (...args: Parameters<typeof jose.jwtDecrypt>) => {
      joseCalls.count += 1;
      return jose.jwtDecrypt(...args);
    },
  };
});

const SECRET = 'cs_test_SENTINEL_client_secret_0123456789';
const now = () => Math.floor(Date.now() / 1000);
const claims = { paymentReference: 'SHOP1-PXTT-42', amount: 2599, currency: 'EUR', status: 'AUTHORISED', customReference: 'order-42' };

const b64url = (input: Buffer | string) => Buffer.from(input).toString('base64url');

function jws(payload: object, secret = SECRET, alg = 'HS256', header: object = {}): string {
  const head = b64url(JSON.stringify({ alg, typ: 'JWT', ...header }));
  const body = b64url(JSON.stringify(payload));
  const hash = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[alg] ?? 'sha256';
  const signature = createHmac(hash, secret).update(`${head}.${body}`).digest();
  return `${head}.${body}.${b64url(signature)}`;
}

/** A correctly signed HS256 JWS around an arbitrary payload segment. */
function signed(body: string): string {
  const head = b64url(JSON.stringify({ alg: 'HS256' }));
  return `${head}.${body}.${b64url(createHmac('sha256', SECRET).update(`${head}.${body}`).digest())}`;
}

/** The documented derivation: the secret's bytes if they fit, else SHA-256 (16/32 bytes) or SHA-512 (64). */
function derive(secret: string, length: number): Buffer {
  const bytes = Buffer.from(secret, 'utf8');
  if (bytes.length === length) return bytes;
  return createHash(length > 32 ? 'sha512' : 'sha256')
    .update(bytes)
    .digest()
    .subarray(0, length);
}

function jwe(payload: object, enc: 'A128GCM' | 'A256GCM' | 'A128CBC-HS256' | 'A256CBC-HS512', secret = SECRET): string {
  const head = b64url(JSON.stringify({ alg: 'dir', enc }));
  const aad = Buffer.from(head, 'ascii');
  const plaintext = Buffer.from(JSON.stringify(payload));
  if (enc.endsWith('GCM')) {
    const key = derive(secret, enc === 'A128GCM' ? 16 : 32);
    const iv = randomBytes(12);
    const cipher = createCipheriv(enc === 'A128GCM' ? 'aes-128-gcm' : 'aes-256-gcm', key, iv);
    cipher.setAAD(aad);
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return `${head}..${b64url(iv)}.${b64url(ciphertext)}.${b64url(cipher.getAuthTag())}`;
  }
  const size = enc === 'A128CBC-HS256' ? 16 : 32;
  const key = derive(secret, size * 2);
  const iv = randomBytes(16);
  const cipher = createCipheriv(size === 16 ? 'aes-128-cbc' : 'aes-256-cbc', key.subarray(size), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const al = Buffer.alloc(8);
  al.writeBigUInt64BE(BigInt(aad.length * 8));
  const mac = createHmac(size === 16 ? 'sha256' : 'sha512', key.subarray(0, size))
    .update(Buffer.concat([aad, iv, ciphertext, al]))
    .digest();
  return `${head}..${b64url(iv)}.${b64url(ciphertext)}.${b64url(mac.subarray(0, size))}`;
}

async function reason(promise: Promise<unknown>): Promise<RedirectDataErrorReason> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(RedirectDataError);
  expect(String(error)).not.toContain(SECRET);
  expect(inspect(error, { depth: 5, showHidden: true })).not.toContain(SECRET);
  expect(JSON.stringify(error)).not.toContain(SECRET);
  return (error as RedirectDataError).reason;
}

describe('decodeRedirectData', () => {
  it.each(['HS256', 'HS384', 'HS512'])('decodes a JWS signed with %s', async (alg) => {
    const data = await decodeRedirectData(jws({ ...claims, extra: { nested: true } }, SECRET, alg), SECRET);
    expect(data).toMatchObject(claims);
    expect(data.extra).toEqual({ nested: true });
  });

  it.each(['A128GCM', 'A256GCM', 'A128CBC-HS256', 'A256CBC-HS512'] as const)('decrypts a dir JWE with %s', async (enc) => {
    await expect(decodeRedirectData(jwe(claims, enc), SECRET)).resolves.toMatchObject(claims);
  });

  it('uses a secret of exactly the key length as the key itself', async () => {
    const exact = 'k'.repeat(32);
    await expect(decodeRedirectData(jwe(claims, 'A256GCM', exact), exact)).resolves.toMatchObject(claims);
  });

  it('accepts the secret as bytes', async () => {
    await expect(decodeRedirectData(jws(claims), new TextEncoder().encode(SECRET))).resolves.toMatchObject(claims);
  });

  it('refuses a JWS made with another secret', async () => {
    expect(await reason(decodeRedirectData(jws(claims, 'another secret'), SECRET))).toBe('signature');
  });

  it('refuses a tampered payload', async () => {
    const [head, , signature] = jws(claims).split('.');
    const forged = b64url(JSON.stringify({ ...claims, amount: 1 }));
    expect(await reason(decodeRedirectData(`${head}.${forged}.${signature}`, SECRET))).toBe('signature');
  });

  it('refuses alg none, even with an empty signature', async () => {
    const head = b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const token = `${head}.${b64url(JSON.stringify(claims))}.`;
    expect(await reason(decodeRedirectData(token, SECRET))).toBe('algorithm');
    expect(await reason(decodeRedirectData(token.replace(head, b64url('{"alg":"NONE"}')), SECRET))).toBe('algorithm');
  });

  it('refuses an algorithm outside the allow-list', async () => {
    expect(await reason(decodeRedirectData(jws(claims, SECRET, 'HS512'), SECRET, { algorithms: ['HS256'] }))).toBe('algorithm');
    expect(await reason(decodeRedirectData(jwe(claims, 'A128GCM'), SECRET, { algorithms: ['HS256', 'A256GCM'] }))).toBe('algorithm');
    expect(await reason(decodeRedirectData(jws(claims, SECRET, 'RS256'), SECRET))).toBe('algorithm');
  });

  it('refuses an expired token, and honours clockTolerance', async () => {
    const token = jws({ ...claims, exp: now() - 20 });
    expect(await reason(decodeRedirectData(token, SECRET))).toBe('expired');
    await expect(decodeRedirectData(token, SECRET, { clockTolerance: 60 })).resolves.toMatchObject(claims);
  });

  it('refuses a token that is not valid yet', async () => {
    const token = jws({ ...claims, nbf: now() + 600 });
    expect(await reason(decodeRedirectData(token, SECRET))).toBe('not-before');
    const later = new Date(Date.now() + 700_000);
    await expect(decodeRedirectData(token, SECRET, { currentDate: later })).resolves.toMatchObject(claims);
  });

  it('refuses a JWE with a bad tag, or made with another secret', async () => {
    const parts = jwe(claims, 'A256GCM').split('.');
    const tag = Buffer.from(parts[4] ?? '', 'base64url');
    tag[0] = (tag[0] ?? 0) ^ 0xff;
    parts[4] = b64url(tag);
    expect(await reason(decodeRedirectData(parts.join('.'), SECRET))).toBe('decryption');
    expect(await reason(decodeRedirectData(jwe(claims, 'A128CBC-HS256', 'other'), SECRET))).toBe('decryption');
  });

  it.each([
    ['not a token', 'malformed'],
    ['a.b', 'malformed'],
    ['!!!.e30.sig', 'malformed'],
    [signed(b64url('not json')), 'malformed'],
    [signed(b64url('[1,2]')), 'malformed'],
    ['', 'missing'],
  ])('reads %j as %s', async (token, expected) => {
    expect(await reason(decodeRedirectData(token, SECRET))).toBe(expected);
  });

  it('asks for a client secret', async () => {
    await expect(decodeRedirectData(jws(claims), '')).rejects.toBeInstanceOf(ConfigurationError);
  });

  it('throws only RedirectDataError for arbitrary input', async () => {
    const segment = fc.string({ unit: fc.constantFrom(...'ABCDEFabcdef0123456789-_'), maxLength: 40 });
    const tokenLike = fc.array(segment, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('.'));
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), tokenLike, fc.anything()), async (input) => {
        try {
          await decodeRedirectData(input as string, SECRET);
        } catch (error) {
          return error instanceof RedirectDataError;
        }
        return true;
      }),
      { numRuns: 300 },
    );
  });

  it('throws only RedirectDataError for mutations of a valid token', async () => {
    const token = jws(claims);
    await fc.assert(
      fc.asyncProperty(fc.nat(token.length - 1), fc.string({ minLength: 1, maxLength: 3 }), async (at, insert) => {
        const mutated = token.slice(0, at) + insert + token.slice(at + 1);
        try {
          const data = await decodeRedirectData(mutated, SECRET);
          // Only a mutation that changed nothing meaningful may decode, and then to the same claims.
          expect(data).toMatchObject(claims);
        } catch (error) {
          return error instanceof RedirectDataError;
        }
        return true;
      }),
      { numRuns: 200 },
    );
  });
});

describe('the size of a token', () => {
  beforeEach(() => {
    joseCalls.count = 0;
  });

  /** A token of the sandbox's shape, its 255-character description and 100-character customReference made of `char`. */
  const sandboxClaims = (char: string) => ({
    paymentReference: 'SHOP-WEBCODE-1-PXTT-4242424242',
    sessionId: `ses_${'x'.repeat(40)}`,
    amount: 99_999_999,
    currency: 'EUR',
    status: 'AUTHORISED',
    paymentStatus: 'AUTHORISED',
    customReference: char.repeat(100),
    description: char.repeat(255),
    webcode: 'SHOP-WEBCODE-1',
    iat: now(),
    exp: now() + 3600,
  });

  it.each([1_000_000, 10_000_000])('refuses a validly signed token of %i bytes as too-large, without calling jose', async (bytes) => {
    const token = signed(b64url(JSON.stringify({ ...claims, pad: 'a'.repeat(Math.ceil((bytes * 3) / 4)) })));
    expect(token.length).toBeGreaterThan(bytes);
    const error = await rejection(decodeRedirectData(token, SECRET));
    expect(error).toBeInstanceOf(RedirectDataError);
    expect((error as RedirectDataError).reason).toBe('too-large');
    expect((error as RedirectDataError).message).toContain(`longer than ${REDIRECT_TOKEN_MAX_CHARS} characters`);
    expect(joseCalls.count).toBe(0);
    // The same refusal through verifyRedirect, and for an encrypted one.
    expect(await reason(verifyRedirect(`https://shop.example/paid?data=${token}`, SECRET, {}))).toBe('too-large');
    const encrypted = jwe({ ...claims, pad: 'a'.repeat(bytes) }, 'A256GCM');
    expect(await reason(decodeRedirectData(encrypted, SECRET))).toBe('too-large');
    expect(joseCalls.count).toBe(0);
  });

  it('accepts the largest realistic token (every character of description and customReference escaped), signed or encrypted', async () => {
    for (const char of ['a', '\u{1f600}', '\u0001', '"']) {
      for (const token of [jws(sandboxClaims(char), SECRET, 'HS512'), jwe(sandboxClaims(char), 'A256CBC-HS512')]) {
        expect(token.length).toBeLessThan(REDIRECT_TOKEN_MAX_CHARS / 2);
        await expect(decodeRedirectData(token, SECRET)).resolves.toMatchObject({ description: char.repeat(255) });
      }
    }
    expect(joseCalls.count).toBe(8);
  });

  it(`reads a token of up to ${REDIRECT_TOKEN_MAX_CHARS} characters, refuses one character more`, async () => {
    // The padding that brings a signed token closest to the bound from below, and just past it.
    const ofPad = (length: number) => jws({ ...claims, pad: 'p'.repeat(length) });
    let pad = 0;
    while (ofPad(pad + 1).length <= REDIRECT_TOKEN_MAX_CHARS) pad += 1;
    const atBound = ofPad(pad);
    expect(atBound.length).toBeGreaterThanOrEqual(REDIRECT_TOKEN_MAX_CHARS - 2);
    await expect(decodeRedirectData(atBound, SECRET)).resolves.toMatchObject(claims);
    expect(await reason(decodeRedirectData(ofPad(pad + 1), SECRET))).toBe('too-large');
    expect(await reason(decodeRedirectData(`${'a'.repeat(REDIRECT_TOKEN_MAX_CHARS + 1)}`, SECRET))).toBe('too-large');
  });
});

describe('verifyRedirect', () => {
  const token = jws(claims);
  const expected = { paymentReference: 'SHOP1-PXTT-42', amount: 2599, currency: 'EUR', customReference: 'order-42' };

  it.each([
    ['a URL string', `https://shop.example/ok?order=42&data=${token}`],
    ['a URL', new URL(`https://shop.example/ok?data=${token}`)],
    ['search params', new URLSearchParams({ data: token })],
    ['a query string', `?data=${token}&x=1`],
  ])('verifies the data of %s', async (_label, source) => {
    await expect(verifyRedirect(source, SECRET, expected)).resolves.toMatchObject(claims);
  });

  it('compares any subset, and amount objects', async () => {
    await expect(verifyRedirect(`?data=${token}`, SECRET, { customReference: 'order-42' })).resolves.toBeTruthy();
    await expect(verifyRedirect(`?data=${token}`, SECRET, { amount: { value: 2599, currency: 'EUR' } })).resolves.toBeTruthy();
    const nested = jws({ ...claims, amount: { value: 2599, currency: 'EUR' }, currency: undefined });
    await expect(verifyRedirect(`?data=${nested}`, SECRET, { amount: 2599, currency: 'EUR' })).resolves.toBeTruthy();
  });

  it('names every field that differs', async () => {
    const error = await rejection(verifyRedirect(`?data=${token}`, SECRET, { ...expected, amount: 2600, customReference: 'order-43' }));
    expect(error).toBeInstanceOf(RedirectMismatchError);
    const mismatch = error as RedirectMismatchError;
    expect(mismatch.fields).toEqual(['amount', 'customReference']);
    expect(mismatch.mismatches[0]).toEqual({ field: 'amount', expected: 2600, actual: 2599 });
    expect(mismatch.message).toContain('amount, customReference');
  });

  it('refuses a redirect without data', async () => {
    expect(await reason(verifyRedirect('https://shop.example/ko?order=42', SECRET, expected))).toBe('missing');
  });

  it('refuses a manipulated URL', async () => {
    const forged = jws({ ...claims, amount: 1 }, 'guessed secret');
    expect(await reason(verifyRedirect(`?data=${forged}`, SECRET, expected))).toBe('signature');
  });
});
