/** What one attempt sends: a `RequestInit` that `fetch` and ky both take. */
export interface AttemptRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | null;
  signal: AbortSignal;
  /** Never `follow`: the API key and the body must not go to whatever origin a 3xx names (see `redirectError`). */
  redirect: 'manual';
}

/** Sends one attempt: `fetch` itself, or ky with the client's hooks (ky-route.ts). */
export type Send = (url: string, init: AttemptRequest) => Promise<Response>;
