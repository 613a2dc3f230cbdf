/**
 * What the Node server already holds of a request it turned into a fetch `Request`: its headers
 * as Node parsed them and its whole body. The request log reads these instead of the `Request`'s
 * header list (sorted on every read) and body stream, which cost it a tenth of a create.
 */

/** A request's headers and body as the Node server received them. */
export interface Received {
  /** Names in lower case, in the order they came; a repeated header's values as Node joins them (`set-cookie` as a list). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The whole body (its first bytes only, `complete: false`, for one over the limit); `null` for a GET or a HEAD. */
  body: Uint8Array | null;
  /** `false` for a body over the limit, of which only the first bytes were read (or none, when its declared length was over it). */
  complete?: boolean;
}

/** Each `Request` the Node server made, to what it received; a `Request` handed to `sandbox.handle` has none. */
export const receivedByServer = new WeakMap<Request, Received>();
