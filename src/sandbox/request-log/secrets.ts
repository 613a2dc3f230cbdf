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
 * A secret as the log shows it: its prefix (`sk_test_`) and its last four characters, with at
 * least four characters hidden between them; `…` alone for a short one.
 */
export function maskSecret(secret: string): string {
  const prefix = /^[A-Za-z]{1,8}_(?:test_|live_)?/.exec(secret)?.[0] ?? '';
  const hidden = secret.length - prefix.length - 4;
  if (hidden >= 4) return `${prefix}…${secret.slice(-4)}`;
  return secret.length >= 12 ? `…${secret.slice(-4)}` : '…';
}

/** Whether a header's value is a secret, by its name. */
export function isSecretHeader(name: string): boolean {
  return !NOT_SECRET.has(name) && SECRET_HEADER.test(name);
}

/** Replaces every secret of `secrets` found in texts by its mask. */
export class Scrubber {
  readonly #secrets: string[];
  /** The mask of each secret, worked out once: the key presented is nearly always one of them. */
  readonly #masks = new Map<string, string>();

  constructor(secrets: Iterable<string>) {
    // Longest first: a secret that contains another is masked whole.
    this.#secrets = [...new Set(secrets)].filter((secret) => secret.length >= MIN_SCRUBBED).sort((a, b) => b.length - a.length);
    for (const secret of this.#secrets) this.#masks.set(secret, maskSecret(secret));
  }

  /** `text` with each secret masked; `text` itself (no copy) when it holds none. */
  text(text: string): string;
  text(text: string | null): string | null;
  text(text: string | null): string | null {
    if (text === null) return null;
    let scrubbed = text;
    for (const secret of this.#secrets) if (scrubbed.includes(secret)) scrubbed = scrubbed.replaceAll(secret, this.#mask(secret));
    return scrubbed;
  }

  /**
   * The request's headers, names in lower case: secret ones masked, the others scrubbed. From a
   * record (Node's parsed headers), a repeated header's list is joined as `Headers` joins it.
   */
  headers(headers: Headers | Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
    const kept: Record<string, string> = {};
    const keep = (value: string, name: string) => {
      kept[name] = isSecretHeader(name) ? this.#mask(value) : this.text(value);
    };
    if (headers instanceof Headers) headers.forEach(keep);
    else
      for (const name in headers) {
        const value = headers[name];
        if (value !== undefined) keep(Array.isArray(value) ? value.join(', ') : value, name);
      }
    return kept;
  }

  #mask(secret: string): string {
    return this.#masks.get(secret) ?? maskSecret(secret);
  }
}
