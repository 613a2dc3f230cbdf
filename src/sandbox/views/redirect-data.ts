/**
 * The redirect's `data`: an HS256 JWT of the payment's claims, signed with the client secret. With
 * `node:crypto` (Node, Deno, Bun) it is signed at once, as jose writes one (the header
 * `{"alg":"HS256","typ":"JWT"}`, the claims in their order, base64url without padding); elsewhere
 * with jose, loaded by {@link signerReady} before the page changes anything, so that the answer
 * after the commit cannot fail on loading it. WebCrypto's key import and its job per signature cost
 * more than the rest of the page's POST.
 */

interface NodeHmac {
  createHmac(algorithm: 'sha256', key: string): { update(text: string): { digest(encoding: 'base64url'): string } };
}

const nodeCrypto = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process?.getBuiltinModule?.(
  'node:crypto',
) as NodeHmac | undefined;

function base64url(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

const HEADER = base64url('{"alg":"HS256","typ":"JWT"}');

/** Loads what signs, where `node:crypto` is not there. */
export async function signerReady(): Promise<void> {
  if (!nodeCrypto) await import('jose');
}

/** The HS256 JWT of `claims` (undefined fields left out, as JSON leaves them) under `secret`. */
export async function signHs256(claims: Record<string, unknown>, secret: string): Promise<string> {
  if (!nodeCrypto) {
    const { SignJWT } = await import('jose');
    return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));
  }
  const unsigned = `${HEADER}.${base64url(JSON.stringify(claims))}`;
  return `${unsigned}.${nodeCrypto.createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}
