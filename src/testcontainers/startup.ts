/**
 * What the container says once it is up: the sandbox's startup line (webcode, keys, client
 * secrets), and, for host networking, when it answers on the host's loopback.
 */
import { createServer } from 'node:net';
import type { Readable } from 'node:stream';
import type { Environment } from '../core/options.js';

/** The credentials the sandbox prints as its first stdout line (`payment-service-sdk sandbox`). */
export interface SandboxCredentials {
  webcode: string;
  keys: Record<Environment, string>;
  clientSecrets: Record<Environment, string>;
}

const isText = (value: unknown): value is string => typeof value === 'string' && value !== '';

function pair(value: unknown): value is Record<Environment, string> {
  const record = value as Record<string, unknown> | null;
  return typeof record === 'object' && record !== null && isText(record.test) && isText(record.live);
}

/** The credentials of one log line, or `undefined` when the line is something else (the banner, a warning). */
export function credentialsOf(line: string): SandboxCredentials | undefined {
  if (!line.startsWith('{')) return undefined;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!isText(parsed.webcode) || !pair(parsed.keys) || !pair(parsed.clientSecrets)) return undefined;
  return { webcode: parsed.webcode, keys: parsed.keys, clientSecrets: parsed.clientSecrets };
}

/**
 * A container's output without what holds secrets: the startup line, the banner's key and
 * client-secret lines and a dashboard link with its token. For error messages.
 */
export function withoutSecrets(output: string): string {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '' && credentialsOf(line.trim()) === undefined && !/client secret|[?&]token=/i.test(line))
    .join('\n');
}

/**
 * Reads a container's log stream (followed) until the startup line, then closes it. Rejects after
 * `timeoutMs`, or when the stream ends first, without quoting the log: it holds the secrets.
 */
export function readCredentials(logs: Readable, timeoutMs: number): Promise<SandboxCredentials> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const finish = (error: Error | undefined, credentials?: SandboxCredentials) => {
      clearTimeout(timer);
      logs.removeAllListeners('data');
      logs.destroy();
      if (credentials) resolve(credentials);
      else reject(error);
    };
    const timer = setTimeout(() => finish(new Error(`The sandbox container printed no startup line within ${timeoutMs} ms`)), timeoutMs);
    logs.setEncoding('utf8');
    logs.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const credentials = credentialsOf(line.trim());
        if (credentials) return finish(undefined, credentials);
      }
      // A line the size of the startup line's is never this long: this is not the sandbox's output.
      if (buffered.length > 65_536) buffered = '';
    });
    logs.on('error', (error: Error) => finish(new Error(`Could not read the sandbox container's logs: ${error.message}`)));
    logs.on('end', () => finish(new Error('The sandbox container stopped before printing its startup line')));
  });
}

/** A port of the host's 127.0.0.1 that is free now, for a sandbox on the host's network. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
