/**
 * Who may reach the sandbox through a browser: the `Host` names it answers to (a page of another
 * site that rebinds its own name to 127.0.0.1 sends that name), the dashboard's access token when
 * it listens beyond loopback, and where the dashboard's forms may send the browser back to.
 */
import { html } from '../views/html.js';
import { htmlResponse } from '../views/response.js';

/** A `Host` header's name: lowercase, IPv6 in brackets, IDN in punycode; `undefined` if it is none. */
export function hostName(host: string): string | undefined {
  try {
    const url = new URL(`http://${host}`);
    // Anything past the authority (a path, user info) is not a Host value.
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return undefined;
    return url.hostname;
  } catch {
    return undefined;
  }
}

/** Names of this machine's loopback interface, whatever the port: `localhost` (and `*.localhost`), 127.0.0.0/8, `[::1]`. */
export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(name) || name === '[::1]';
}

/**
 * Whether a `Host` names this sandbox: a loopback name, one of `own` (the address it is bound to,
 * and this machine's addresses when it listens on all of them), or one of `declared`.
 */
export function isOwnHost(host: string, own: ReadonlySet<string>, declared: ReadonlySet<string>): boolean {
  const name = hostName(host);
  return name !== undefined && (isLoopbackName(name) || own.has(name) || declared.has(name));
}

/** Host names of `allowedHosts` entries (`name` or `name:port`, the port ignored); throws on an entry that is none. */
export function declaredHosts(entries: readonly string[]): Set<string> {
  return new Set(
    entries.map((entry) => {
      const name = hostName(entry.trim());
      if (name === undefined) throw new TypeError(`allowedHosts: ${JSON.stringify(entry)} is not a host name`);
      return name;
    }),
  );
}

/** The plain page of a request whose `Host` is not the sandbox's (421). */
export function misdirectedPage(message: string): Response {
  return htmlResponse(
    421,
    html`<!doctype html><html lang="en"><meta charset="utf-8"><title>Misdirected request</title><h1>Misdirected request</h1><p>${message}</p></html>`,
  );
}

/** The cookie that carries the dashboard's token after the first visit. */
export const DASHBOARD_COOKIE = 'sandbox_dashboard';

/** Same text, compared in a time that does not depend on where they differ. */
function sameSecret(given: string, expected: string): boolean {
  let difference = given.length ^ expected.length;
  for (let index = 0; index < expected.length; index++) difference |= (given.charCodeAt(index) || 0) ^ expected.charCodeAt(index);
  return difference === 0;
}

function cookieValue(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/**
 * The dashboard's door when it has a token: a visit with `?token=` sets the cookie (HttpOnly,
 * SameSite=Strict) and sends the browser to the same page without the token in its address; a
 * request with the cookie passes (`undefined`); anything else gets a 401 page.
 */
export function dashboardGate(request: Request, url: URL, token: string): Response | undefined {
  const given = url.searchParams.get('token');
  if (given !== null && sameSecret(given, token)) {
    const clean = new URL(url);
    clean.searchParams.delete('token');
    return new Response(null, {
      status: 303,
      headers: {
        location: `${clean.pathname}${clean.search}`,
        'set-cookie': `${DASHBOARD_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict`,
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      },
    });
  }
  const cookie = cookieValue(request, DASHBOARD_COOKIE);
  if (cookie !== undefined && sameSecret(cookie, token)) return undefined;
  return htmlResponse(
    401,
    html`<!doctype html><html lang="en"><meta charset="utf-8"><title>Dashboard token needed</title><h1>Dashboard token needed</h1><p>This sandbox listens beyond loopback: open the dashboard with the link printed when it started (<code>/?token=…</code>).</p></html>`,
  );
}

/**
 * Where a dashboard form may send the browser back to: a path that resolves on the sandbox's own
 * origin and does not start with `//` or `/\` (which a browser reads as another host), normalised
 * (dot segments resolved); `/` for anything else.
 */
export function returnPath(requested: string | null, origin: string): URL {
  const fallback = new URL('/', origin);
  if (requested === null || !requested.startsWith('/')) return fallback;
  try {
    const target = new URL(requested, origin);
    if (target.origin !== fallback.origin || target.pathname.startsWith('//') || target.pathname.startsWith('/\\')) return fallback;
    return target;
  } catch {
    return fallback;
  }
}

/**
 * `url` as an origin (`http(s)://host[:port]`): the sandbox's public URL, checked once for the
 * `publicUrl` option and the CLI's `--public-url`. A TypeError whose message starts with `name` says
 * what is wrong.
 */
export function publicOrigin(url: string, name: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`${name} must be an http or https URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new TypeError(`${name} must be http or https, got ${parsed.protocol}`);
  if (parsed.pathname !== '/' || parsed.search || parsed.hash || parsed.username || parsed.password)
    throw new TypeError(`${name} must be an origin (scheme, host, port), with no path, query or user: got ${url}`);
  return parsed.origin;
}
