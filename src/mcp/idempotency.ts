/**
 * The `Idempotency-Key` of a write tool called without one: derived from the tool and its
 * arguments (canonical JSON: keys sorted), the environment and the webcode, so that an agent that
 * repeats a call, in this process or after a restart, sends the same key and gets the stored
 * answer instead of a second refund. A derived key is used for 24 hours from its first use (the
 * service keeps its answers that long); the same call after that is a new operation with a new key.
 * A deliberate second, identical operation takes a key of its own (the `idempotencyKey` argument).
 */
import { createHash } from 'node:crypto';

/** How long a derived key is used from its first use: the service's idempotency window. */
export const DERIVED_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** Entries kept before the expired ones are swept. */
const SWEEP_AT = 10_000;

/** JSON with every object's keys sorted, so that the same arguments in another order are the same call. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Derives and remembers the keys of one client (one environment and webcode). */
export interface DerivedKeys {
  /** The key of `tool` called with `args` now. */
  keyFor(tool: string, args: Record<string, unknown>): string;
}

export interface DerivedKeysOptions {
  /** What keeps two clients' keys apart: `environment` and `webcode`. */
  scope: string;
  ttlMs?: number | undefined;
  now?: (() => number) | undefined;
}

export function derivedKeys({ scope, ttlMs = DERIVED_KEY_TTL_MS, now = Date.now }: DerivedKeysOptions): DerivedKeys {
  /** By call (hash of the tool and its arguments): the generation in use and when it was first used. */
  const seen = new Map<string, { generation: number; since: number }>();
  const hash = (text: string) => createHash('sha256').update(text).digest('base64url');
  return {
    keyFor(tool, args) {
      const call = hash(`${scope}\u0000${tool}\u0000${canonicalJson(args)}`);
      const at = now();
      let entry = seen.get(call);
      if (entry === undefined) entry = { generation: 0, since: at };
      else if (at - entry.since >= ttlMs) entry = { generation: entry.generation + 1, since: at };
      seen.set(call, entry);
      if (seen.size > SWEEP_AT) for (const [key, old] of seen) if (at - old.since >= ttlMs) seen.delete(key);
      const suffix = entry.generation === 0 ? call : hash(`${call}\u0000${entry.generation}`);
      return `mcp:${tool}:${suffix.slice(0, 32)}`;
    },
  };
}
