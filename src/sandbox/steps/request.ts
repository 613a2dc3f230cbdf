/** The context a request starts with, and where its path leads: the API, the control API, or a page. */
import type { Environment } from '../../core/options.js';
import type { SandboxRequest } from '../http/incoming.js';

/** Per-request details the fetch handler cannot see itself. */
export interface HandleInfo {
  /** The client's address, for IP allow-lists. */
  remoteAddress?: string | undefined;
}

/** A request as it reaches the sandbox. */
export interface Incoming {
  request: SandboxRequest;
  info: HandleInfo | undefined;
}

/** A request whose URL has been read. */
export interface Located extends Incoming {
  url: URL;
}

/** The control API's prefix. */
export const CONTROL_PREFIX = '/_sandbox/';

const API_PREFIX = /^\/external\/v1(\/test)?(\/.*)$/;

/** The service's paths: the environment (`/test` or not) and the path after the prefix; `undefined` for any other path. */
export function apiPath(url: URL): { environment: Environment; path: string } | undefined {
  const match = API_PREFIX.exec(url.pathname);
  return match ? { environment: match[1] ? 'test' : 'live', path: match[2] ?? '' } : undefined;
}

/** Whether a path is answered in the service's JSON envelopes (the API and the control API) rather than with pages. */
export function answersJson(url: URL): boolean {
  return apiPath(url) !== undefined || url.pathname.startsWith(CONTROL_PREFIX);
}
