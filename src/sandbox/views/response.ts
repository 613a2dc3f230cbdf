/** How an HTML page of the sandbox is answered: no caching, its own CSP nonce, and the security headers. */
import { SANDBOX_BANNER } from '../responses.js';
import type { Html } from './html.js';

/** A fresh CSP nonce: 16 random bytes, base64 (one per HTML answer, never reused). */
export function cspNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

/**
 * The security headers of an HTML answer: a CSP that runs only the page's own nonce'd script and
 * style and loads nothing from elsewhere, framing refused, no referrer, no type sniffing.
 * `formAction` lists where forms may post, and so where a form's redirect may lead.
 */
function securityHeaders(nonce: string, formAction: readonly string[]): Record<string, string> {
  return {
    'content-security-policy': [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      "img-src 'self' data:",
      "connect-src 'self'",
      `form-action ${formAction.join(' ')}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join('; '),
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  };
}

/** What an HTML answer's Content-Security-Policy allows besides the defaults. */
export interface HtmlResponseOptions {
  /**
   * The nonce of the page's own `<script>` and `<style>` elements (from {@link cspNonce}). Without
   * one a fresh nonce is used that the page cannot know: no inline script or style runs.
   */
  nonce?: string | undefined;
  /**
   * Origins (or other CSP sources) forms may post to besides `'self'`. In Chromium `form-action`
   * also governs the redirects that follow a form submission, so a page whose POST answers with a
   * redirect to another origin (the shop's urlOk/urlKo) must list that origin here.
   */
  formAction?: readonly string[] | undefined;
}

/**
 * An HTML answer with the headers every HTML page of the sandbox carries: no caching, and the
 * security headers (a per-response CSP with `frame-ancestors 'none'`, `X-Frame-Options: DENY`,
 * `Referrer-Policy: no-referrer`, `X-Content-Type-Options: nosniff`). `extra` headers win over them.
 */
export function htmlResponse(status: number, html: Html, extra?: Record<string, string>, options: HtmlResponseOptions = {}): Response {
  const formAction = ["'self'", ...(options.formAction ?? [])];
  return new Response(html.toString(), {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'x-payment-sandbox': SANDBOX_BANNER,
      'cache-control': 'no-store',
      ...securityHeaders(options.nonce ?? cspNonce(), [...new Set(formAction)]),
      ...extra,
    },
  });
}
