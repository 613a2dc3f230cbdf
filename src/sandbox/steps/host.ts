/**
 * The first check of every request: a URL within the limit, and a `Host` that names this sandbox
 * (a page of another site whose name was rebound to this address gets 421 before anything runs).
 */
import { isOwnHost, misdirectedPage } from '../http/access.js';
import { NodeRequest } from '../http/incoming.js';
import { SANDBOX_CODES, ServiceFailure } from '../responses.js';
import type { Step } from './chain.js';
import { answersJson, type Incoming, type Located } from './request.js';

/** Longest URL answered; a longer one gets 431, as Node's own limit on the request head does. */
export const MAX_URL_LENGTH = 8_192;

/** The names the sandbox answers to besides loopback, and its address for the message. */
export interface OwnHosts {
  /** The address the server is bound to (and this machine's addresses when that is a wildcard). */
  bound(): ReadonlySet<string>;
  /** The names given in `allowedHosts`. */
  declared: ReadonlySet<string>;
  /** The sandbox's base URL, named in the refusal. */
  baseUrl(): string;
}

export function hostCheck(hosts: OwnHosts): Step<Incoming, Located> {
  return (context, next) => {
    const { request } = context;
    if (request.url.length > MAX_URL_LENGTH)
      throw new ServiceFailure(431, SANDBOX_CODES.headersTooLarge, `URL longer than ${MAX_URL_LENGTH} characters`);
    // Parsed once: the Node server parsed it already (no step changes it).
    const url = request instanceof NodeRequest ? request.parsedUrl : new URL(request.url);
    // In-process requests carry no Host; over HTTP, one that names another site is refused.
    const host = request.headers.get('host');
    if (host !== null && !isOwnHost(host, hosts.bound(), hosts.declared)) {
      const message = `Host ${host} does not name this sandbox: use ${hosts.baseUrl()}, or declare the name with allowedHosts (CLI: --allowed-host)`;
      if (answersJson(url)) throw new ServiceFailure(421, SANDBOX_CODES.misdirected, message);
      return Promise.resolve(misdirectedPage(message));
    }
    return next({ ...context, url });
  };
}
