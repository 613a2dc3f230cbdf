/** Reading a request body: within the size limit (413), UTF-8, JSON where the endpoint takes JSON (415). */
import { invalid, SANDBOX_CODES, ServiceFailure } from '../responses.js';
import { NodeRequest, receivedOf, type SandboxRequest } from './incoming.js';

/**
 * A request body as UTF-8 text, at most `limit` bytes: past that it answers 413 and reads no further.
 * `received` is the body when a step before read it (its first `limit + 1` bytes at most).
 */
export async function readText(request: SandboxRequest, limit: number, received = receivedOf(request)?.body ?? undefined): Promise<string> {
  const tooLarge = () => new ServiceFailure(413, SANDBOX_CODES.bodyTooLarge, `Request body larger than ${limit} bytes`);
  if (Number(request.headers.get('content-length') ?? 0) > limit) throw tooLarge();
  if (received) {
    if (received.byteLength > limit) throw tooLarge();
    return utf8(received);
  }
  // A Node request's body is `received` (none for a GET).
  if (request instanceof NodeRequest || !request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return utf8(bytes);
}

function utf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalid('Request body must be UTF-8 text');
  }
}

/** The body of an API POST: JSON only (415 otherwise), within the size limit. */
export function readJsonText(request: SandboxRequest, limit: number, received?: Uint8Array): Promise<string> {
  if (!/^application\/json\s*(;|$)/i.test(request.headers.get('content-type') ?? ''))
    return Promise.reject(new ServiceFailure(415, SANDBOX_CODES.unsupportedMediaType, 'Content-Type must be application/json'));
  return readText(request, limit, received);
}

/** The body of a control POST: empty, or JSON (415 for anything else), within the size limit. */
export async function readOptionalJsonText(request: SandboxRequest, limit: number): Promise<string> {
  const text = await readText(request, limit);
  if (text.trim() !== '' && !/^application\/json\s*(;|$)/i.test(request.headers.get('content-type') ?? ''))
    throw new ServiceFailure(415, SANDBOX_CODES.unsupportedMediaType, 'Content-Type must be application/json');
  return text;
}
