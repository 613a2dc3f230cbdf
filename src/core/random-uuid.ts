// What the build for runtimes that forbid code generation (dist/worker/: see tsup.config.ts) links
// in place of the `uuid` package: its `v4` as that package runs it there, `crypto.randomUUID()`
// (Workers, edge runtimes, browsers in a secure context), and otherwise the same 16 random bytes
// with the version and variant bits set, written as uuid writes them (lowercase hex, 8-4-4-4-12).
const hex = (byte: number) => byte.toString(16).padStart(2, '0');

/** A UUID v4. */
export function v4(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const text = Array.from(bytes, hex).join('');
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}
