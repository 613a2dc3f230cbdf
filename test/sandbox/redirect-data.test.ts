/** The redirect's `data`, signed with node:crypto: byte for byte the JWT jose signs, and verified by it. */
import { jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { signHs256 } from '../../src/sandbox/views/redirect-data.js';

describe('signHs256', () => {
  const claims = {
    paymentReference: 'SANDBOX-PAYT-1001',
    sessionId: 'SANDBOX-EXTT-1800000000000',
    amount: 2599,
    currency: 'EUR',
    status: 'AUTHORISED',
    paymentStatus: 'authorised',
    customReference: null,
    description: 'Café ☕ — “quoted” / slashes \\ and \u2028',
    webcode: 'SANDBOX',
    skipped: undefined,
  };
  const secret = new TextEncoder().encode('cs_test_sandbox');

  it('writes the JWT jose writes for the same claims, undefined fields left out', async () => {
    const iat = 1_800_000_000;
    const expected = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt(iat).sign(secret);
    const token = await signHs256({ ...claims, iat }, 'cs_test_sandbox');
    expect(token).toBe(expected);
    const { payload, protectedHeader } = await jwtVerify(token, secret);
    expect(protectedHeader).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toMatchObject({ description: claims.description, iat });
    expect('skipped' in payload).toBe(false);
  });

  it('signs with the secret given: another secret does not verify it', async () => {
    const token = await signHs256({ ...claims, iat: 1 }, 'cs_test_other');
    await expect(jwtVerify(token, secret)).rejects.toThrow();
  });
});
