/** What every HTML answer of the sandbox shares. */

/** Text made safe for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * The security headers of an HTML answer: a CSP that runs only the page's own nonce'd script and
 * style and loads nothing from elsewhere, framing refused, no referrer, no type sniffing.
 * `formAction` lists where forms may post, and so where a form's redirect may lead (default 'self').
 */
export function securityHeaders(nonce: string, formAction: readonly string[] = ["'self'"]): Record<string, string> {
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
