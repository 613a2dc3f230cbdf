/**
 * What the Node server already holds of a request it turned into a fetch `Request`: its headers
 * as Node parsed them and its whole body. The request log reads these instead of the `Request`'s
 * header list (sorted on every read) and body stream, which cost it a tenth of a create.
 */

/** A request's headers and body as the Node server received them. */
export interface Received {
  /** Names in lower case, in the order they came; a repeated header's values as Node joins them (`set-cookie` as a list). */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The whole body (the server refuses one over the limit before it makes a `Request`); `null` for a GET or a HEAD. */
  body: Uint8Array | null;
}

/** Each `Request` the Node server made, to what it received; a `Request` handed to `sandbox.handle` has none. */
export const receivedByServer = new WeakMap<Request, Received>();
