import type { Environment } from './common.js';

/** What a service identifier names. */
export type ReferenceKind = 'session' | 'payment' | 'posPayment' | 'refund' | 'capture' | 'cancel';

/** A service identifier, read. */
export interface ParsedReference {
  /** What it identifies. */
  kind: ReferenceKind;
  /** The business it belongs to (may contain hyphens). */
  webcode: string;
  /** The environment it belongs to. */
  environment: Environment;
}

/**
 * Infixes of the documented identifier formats, `{webcode}-{infix}-{number or timestamp}`. The
 * reference does not show the Test infixes of capture and cancel references: `CTXT` and `CAXT`
 * are assumed, following the `T` suffix every other Test infix has. The sandbox mints its
 * identifiers from this table too.
 */
export const REFERENCE_INFIXES = {
  session: { test: 'EXTT', live: 'EXT' },
  payment: { test: 'PXTT', live: 'PXT' },
  posPayment: { test: 'POSXT', live: 'POSX' },
  refund: { test: 'RFXT', live: 'RFX' },
  capture: { test: 'CTXT', live: 'CTX' },
  cancel: { test: 'CAXT', live: 'CAX' },
} as const satisfies Record<ReferenceKind, Record<Environment, string>>;

const BY_INFIX: Record<string, [ReferenceKind, Environment]> = {};
for (const [kind, { test, live }] of Object.entries(REFERENCE_INFIXES)) {
  BY_INFIX[test] = [kind as ReferenceKind, 'test'];
  BY_INFIX[live] = [kind as ReferenceKind, 'live'];
}

// Greedy webcode: the infix is the last one, so a webcode may itself contain hyphens.
const REFERENCE = new RegExp(`^(.+)-(${Object.keys(BY_INFIX).join('|')})-([0-9A-Za-z]+)$`);

/**
 * Reads a `sessionId`, `paymentReference`, `posPaymentId`, `refundReference`, `captureReference`
 * or `cancelReference`. Returns `null` for a string in none of the documented formats.
 *
 * ```ts
 * parseReference('SHOP-1-PXTT-42'); // { kind: 'payment', webcode: 'SHOP-1', environment: 'test' }
 * ```
 */
export function parseReference(reference: string): ParsedReference | null {
  if (typeof reference !== 'string') return null;
  const match = REFERENCE.exec(reference);
  const entry = match?.[2] === undefined ? undefined : BY_INFIX[match[2]];
  if (!match?.[1] || !entry) return null;
  return { kind: entry[0], webcode: match[1], environment: entry[1] };
}

/**
 * Why `reference` cannot be used by a client of `environment` and `webcode`, or `undefined` when it
 * can. Strings in no documented format pass: the service is the judge of those.
 */
export function referenceProblem(reference: unknown, environment: Environment, webcode: string): string | undefined {
  if (typeof reference !== 'string') return undefined;
  const parsed = parseReference(reference);
  if (!parsed) return undefined;
  if (parsed.environment !== environment) {
    return `is a ${parsed.environment} reference, but this client uses the ${environment} environment`;
  }
  if (parsed.webcode !== webcode) return `belongs to webcode ${parsed.webcode}, but this client uses webcode ${webcode}`;
  return undefined;
}
