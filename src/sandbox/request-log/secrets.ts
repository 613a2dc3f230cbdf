/**
 * What the request log never keeps whole: API keys and client secrets. Headers that carry a secret
 * (`X-API-KEY`, `Authorization`, cookies, anything named like a key, token or secret) are masked;
 * the key presented and the tenant's own keys and client secrets are masked wherever else they
 * appear (a body, the query, the path), in case an app sends one where it should not.
 */

/** Headers whose whole value is a secret. `Idempotency-Key` is not one: it is the request's identity. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie)$|key|secret|token|password/i;
const NOT_SECRET = new Set(['idempotency-key']);

/** Secrets shorter than this are masked in headers only: replacing a few common characters everywhere would garble the log. */
const MIN_SCRUBBED = 8;

/**
 * A secret as the log shows it: its prefix (`sk_test_`) and its last four characters
 * (`sk_test_…2342`, `sk_test_…dbox` for `sk_test_sandbox`), when more than four follow the prefix;
 * the prefix and `…` alone otherwise (and `…` alone for a secret of under 8 characters).
 */
export function maskSecret(secret: string): string {
  if (secret.length < MIN_SCRUBBED) return '…';
  const prefix = /^[A-Za-z]{1,8}_(?:test_|live_)?/.exec(secret)?.[0] ?? '';
  return secret.length - prefix.length > 4 ? `${prefix}…${secret.slice(-4)}` : `${prefix}…`;
}

/** A character as JSON may write it: itself, `\uXXXX` in either case of hex, or `\/` for `/`. */
function jsonCharPattern(char: string): string {
  const code = char.charCodeAt(0);
  const hex = code.toString(16).padStart(4, '0');
  const escapedHex = [...hex].map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit)).join('');
  const literal = char.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  return `(?:${literal}|\\\\u${escapedHex}${char === '/' ? '|\\\\/' : ''})`;
}

/** Whether a header's value is a secret, by its name. */
export function isSecretHeader(name: string): boolean {
  return !NOT_SECRET.has(name) && SECRET_HEADER.test(name);
}

/** How many header names a {@link Scrubber} remembers. */
const MAX_KNOWN_NAMES = 256;

/** Replaces every secret of `secrets` found in texts by its mask. */
export class Scrubber {
  readonly #secrets: string[];
  /** The mask of each secret, worked out once: the key presented is nearly always one of them. */
  readonly #masks = new Map<string, string>();
  /** Each secret as JSON may escape it (any of its characters as `\uXXXX`), made on first need. */
  #escaped: RegExp[] | undefined;
  /** The secrets in lower case, for header names. */
  readonly #lowerSecrets: string[];
  /**
   * Header names as the log keeps them, by name: a client sends the same few names on every
   * request, and each took a pass over every secret. Bounded, as names are the client's to choose.
   */
  readonly #names = new Map<string, string>();

  constructor(secrets: Iterable<string>) {
    // Longest first: a secret that contains another is masked whole.
    this.#secrets = [...new Set(secrets)].filter((secret) => secret.length >= MIN_SCRUBBED).sort((a, b) => b.length - a.length);
    for (const secret of this.#secrets) this.#masks.set(secret, maskSecret(secret));
    this.#lowerSecrets = this.#secrets.map((secret) => secret.toLowerCase());
  }

  /** The length of the longest secret as JSON may write it (every character `\uXXXX`): how far past a cut a secret may reach. */
  get reach(): number {
    return (this.#secrets[0]?.length ?? 0) * 6;
  }

  /**
   * `text` with each secret masked, also where JSON escapes some of its characters (`\u0073k_test_…`,
   * which a JSON parser reads back as the secret), and in a percent-encoded segment of a path;
   * `text` itself (no copy) when it holds none.
   */
  text(text: string): string;
  text(text: string | null): string | null;
  text(text: string | null): string | null {
    if (text === null) return null;
    let scrubbed = text;
    for (const secret of this.#secrets) if (scrubbed.includes(secret)) scrubbed = scrubbed.replaceAll(secret, this.#mask(secret));
    if (scrubbed.includes('\\')) {
      this.#escaped ??= this.#secrets.map((secret) => new RegExp([...secret].map(jsonCharPattern).join(''), 'g'));
      for (const [index, pattern] of this.#escaped.entries()) scrubbed = scrubbed.replace(pattern, this.#mask(this.#secrets[index] ?? ''));
    }
    if (scrubbed.includes('%')) scrubbed = this.#percentEncoded(scrubbed);
    return scrubbed;
  }

  /** Each run of text between `/`, `?`, `&`, `=` and spaces that percent-decodes to a secret's holder, masked decoded. */
  #percentEncoded(text: string): string {
    return text.replace(/[^/?&=\s]*%[^/?&=\s]*/g, (part) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(part.replaceAll('+', ' '));
      } catch {
        return part;
      }
      const masked = this.text(decoded);
      return masked === decoded ? part : masked;
    });
  }

  /**
   * The request's headers, names in lower case: secret ones masked, the others scrubbed. From a
   * record (Node's parsed headers), a repeated header's list is joined as `Headers` joins it.
   */
  headers(headers: Headers | Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
    const kept: Record<string, string> = {};
    // A header named like a secret (an app that sent its key as a header's name) is kept masked by name too.
    const keep = (value: string, name: string) => {
      kept[this.#headerName(name)] = isSecretHeader(name) ? this.#mask(value) : this.text(value);
    };
    if (headers instanceof Headers) headers.forEach(keep);
    else
      for (const name in headers) {
        const value = headers[name];
        if (value !== undefined) keep(Array.isArray(value) ? value.join(', ') : value, name);
      }
    return kept;
  }

  /** A header's name, which HTTP gives in lower case: a secret in it is masked whatever its case. */
  #headerName(name: string): string {
    const known = this.#names.get(name);
    if (known !== undefined) return known;
    let scrubbed = this.text(name);
    const lower = scrubbed.toLowerCase();
    for (const [index, secret] of this.#secrets.entries()) {
      const at = lower.indexOf(this.#lowerSecrets[index] ?? secret);
      if (at >= 0) scrubbed = `${scrubbed.slice(0, at)}${this.#mask(secret)}${scrubbed.slice(at + secret.length)}`;
    }
    if (this.#names.size < MAX_KNOWN_NAMES) this.#names.set(name, scrubbed);
    return scrubbed;
  }

  #mask(secret: string): string {
    return this.#masks.get(secret) ?? maskSecret(secret);
  }
}
