/**
 * Where `PaymentSandboxContainer` publishes the sandbox (issue 37, item 2): on the host's
 * 127.0.0.1 only by default, on the address `withHostIp` gives otherwise. Asserted from the host's
 * listening sockets (/proc/net/tcp and tcp6, what `ss -ltn` reads), with the real image through
 * the Docker API (podman's, from scripts/podman.sh); the settings on their own first.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigurationError, PaymentClient } from '../src/index.js';
import { PaymentSandboxContainer, type StartedPaymentSandboxContainer } from '../src/testcontainers/index.js';
import { bindOn, checkEngineHost, checkHostIp, DEFAULT_HOST_IP, isLoopback } from '../src/testcontainers/settings.js';
import { dockerApi } from './support/sandbox-image.js';

/** An address of /proc/net/tcp (`0100007F`, little-endian) or tcp6 (four little-endian words) as text. */
function addressOf(hex: string): string {
  const words = hex.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((word) => (word.match(/../g) ?? []).reverse().map((byte) => Number.parseInt(byte, 16)));
  if (bytes.length === 4) return bytes.join('.');
  const groups = Array.from({ length: 8 }, (_, index) => ((bytes[index * 2] ?? 0) * 256 + (bytes[index * 2 + 1] ?? 0)).toString(16));
  const full = groups.join(':');
  if (full === '0:0:0:0:0:0:0:0') return '::';
  if (full === '0:0:0:0:0:0:0:1') return '::1';
  return full;
}

/** The local addresses of the host's TCP sockets listening on `port` (state 0A), sorted. */
function listeningOn(port: number): string[] {
  const found: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // no IPv6 here
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== '0A') continue;
      const [address = '', portHex = ''] = local.split(':');
      if (Number.parseInt(portHex, 16) === port) found.push(addressOf(address));
    }
  }
  return found.sort();
}

describe('the host address settings', () => {
  it('reads /proc/net addresses', () => {
    expect(addressOf('0100007F')).toBe('127.0.0.1');
    expect(addressOf('00000000')).toBe('0.0.0.0');
    expect(addressOf('00000000000000000000000000000000')).toBe('::');
    expect(addressOf('00000000000000000000000001000000')).toBe('::1');
  });

  it('publishes on 127.0.0.1 unless told, keeping the host ports and any address already given', () => {
    expect(DEFAULT_HOST_IP).toBe('127.0.0.1');
    expect(bindOn({ '4010/tcp': [{ HostPort: '0' }] }, DEFAULT_HOST_IP)).toEqual({ '4010/tcp': [{ HostPort: '0', HostIp: '127.0.0.1' }] });
    expect(bindOn({ '4010/tcp': [{ HostPort: '8080' }], '9000/tcp': [{ HostIp: '10.0.0.5', HostPort: '0' }] }, '192.168.1.20')).toEqual({
      '4010/tcp': [{ HostPort: '8080', HostIp: '192.168.1.20' }],
      '9000/tcp': [{ HostIp: '10.0.0.5', HostPort: '0' }],
    });
    // Every interface is the engine's default, sent without an address (podman 4 forwards nothing for a literal 0.0.0.0).
    expect(bindOn({ '4010/tcp': [{ HostPort: '0' }] }, '0.0.0.0')).toEqual({ '4010/tcp': [{ HostPort: '0' }] });
    expect(bindOn({ '4010/tcp': [{ HostPort: '0' }] }, '::')).toEqual({ '4010/tcp': [{ HostPort: '0' }] });
    expect(bindOn(undefined, DEFAULT_HOST_IP)).toEqual({});
  });

  it('takes IP literals only, with a ConfigurationError naming withHostIp', () => {
    expect(checkHostIp('0.0.0.0')).toBe('0.0.0.0');
    expect(checkHostIp('[::1]')).toBe('::1');
    for (const bad of ['localhost', '', '127.0.0.1:4010', '999.1.1.1', 7]) {
      expect(() => checkHostIp(bad)).toThrow(ConfigurationError);
      expect(() => checkHostIp(bad)).toThrow(/^withHostIp needs an IP address/);
    }
    expect(() => new PaymentSandboxContainer().withHostIp('every')).toThrow(/^withHostIp /);
  });

  it('refuses the default loopback binding on an engine of another machine, and takes an address given', () => {
    for (const host of ['localhost', '127.0.0.1', '::1', '[::1]']) expect(isLoopback(host)).toBe(true);
    for (const host of ['docker', '172.17.0.1', '10.0.0.5', '0.0.0.0']) expect(isLoopback(host)).toBe(false);
    expect(() => checkEngineHost('127.0.0.1', DEFAULT_HOST_IP, false)).not.toThrow();
    expect(() => checkEngineHost('docker', DEFAULT_HOST_IP, false)).toThrow(ConfigurationError);
    expect(() => checkEngineHost('docker', DEFAULT_HOST_IP, false)).toThrow(
      /reached at docker, not on this machine's loopback.*withHostIp/,
    );
    expect(() => checkEngineHost('docker', '0.0.0.0', true)).not.toThrow();
    expect(() => checkEngineHost('docker', DEFAULT_HOST_IP, true)).not.toThrow();
  });

  it('refuses withHostIp with host networking before touching any engine', async () => {
    const refused = await new PaymentSandboxContainer('no-such-image')
      .withHostNetwork()
      .withHostIp('0.0.0.0')
      .start()
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as ConfigurationError).message).toMatch(/^withHostIp publishes .* withHostNetwork publishes no port/);
  });
});

const api = await dockerApi();
const image = api?.image;
const started: StartedPaymentSandboxContainer[] = [];
afterAll(async () => {
  await Promise.all(started.map((container) => container.stop()));
  api?.stop();
}, 60_000);

async function start(container: PaymentSandboxContainer): Promise<StartedPaymentSandboxContainer> {
  const running = await container.withPosDelayMs(0).start();
  started.push(running);
  return running;
}

/** A session made through the published port: the sandbox answers there. */
async function answers(container: StartedPaymentSandboxContainer): Promise<boolean> {
  const client = new PaymentClient({ ...container.getClientOptions(), maxRetries: 0 });
  const session = await client.sessions.create({
    amount: { value: 100, currency: 'EUR' },
    urlOk: 'https://shop.example/ok',
    urlKo: 'https://shop.example/ko',
  });
  return session.paymentUrl.startsWith(`${container.getBaseUrl()}/`);
}

describe.skipIf(image === undefined)('the published port, from the listening sockets', { timeout: 90_000 }, () => {
  it('listens on 127.0.0.1 only by default, also after a restart', async () => {
    const sandbox = await start(new PaymentSandboxContainer(image));
    const port = sandbox.getMappedPort(4010);
    expect(listeningOn(port)).toEqual(['127.0.0.1']);
    expect(sandbox.getBaseUrl()).toBe(`http://127.0.0.1:${port}`);
    expect(await answers(sandbox)).toBe(true);

    await sandbox.restart();
    const again = sandbox.getMappedPort(4010);
    expect(listeningOn(again)).toEqual(['127.0.0.1']);
    expect(await answers(sandbox)).toBe(true);
  });

  it("listens on every interface with withHostIp('0.0.0.0'), as asked", async () => {
    const sandbox = await start(new PaymentSandboxContainer(image).withHostIp('0.0.0.0'));
    const port = sandbox.getMappedPort(4010);
    expect(listeningOn(port)).toContain('0.0.0.0');
    expect(listeningOn(port)).not.toContain('127.0.0.1');
    expect(await answers(sandbox)).toBe(true);
  });
});
