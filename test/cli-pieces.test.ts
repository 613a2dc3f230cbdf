/**
 * The CLI's pieces a CI script needs (issue 31): `sessions pay`, the `--created-from/--created-to`
 * date filters, `--fixture -`, one CSV column order per record type, `sandbox wait` and
 * `export --summary json`. The built bin against sandboxes on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentClient } from '../src/index.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { buildOnce, cliEnv, killAll, run, sandboxVariables } from './sandbox/cli-process.js';
import { sessionParams, useSandboxes } from './sandbox/support.js';

const sandboxes = useSandboxes();
let sandbox: Sandbox;
let client: PaymentClient;
const dir = mkdtempSync(join(tmpdir(), 'cli-pieces-'));

beforeAll(async () => {
  buildOnce();
  ({ sandbox, test: client } = await sandboxes.start({ modificationResolveMs: 50 }));
}, 60_000);
afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

function envFor(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return cliEnv(join(dir, 'none.json'), { ...sandboxVariables(sandbox), ...extra });
}

async function cli(args: string[], extra: Record<string, string | undefined> = {}, input?: string) {
  const started = run(args, { env: envFor(extra), ...(input === undefined ? {} : { input }) });
  const { code } = await started.exit;
  return { code, stdout: started.stdout(), stderr: started.stderr() };
}

/** A server that answers every request as the real service answers an unknown route: 404, failure envelope. */
async function notASandbox(): Promise<{ url: string; requests: string[]; server: Server }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ success: false, error: { message: 'Not found', code: 10004, statusCode: 404, traceId: 't' } }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}

describe('sessions pay', () => {
  it('pays a pending session as a name that pays, and prints the completed session', async () => {
    const { sessionId } = await client.sessions.create(sessionParams);
    const result = await cli(['sessions', 'pay', sessionId, '--format', 'json']);
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as { sessionId: string; status: string; paymentStatus?: string };
    expect(printed).toMatchObject({ sessionId, status: 'completed', paymentStatus: 'AUTHORISED' });
    expect((await client.sessions.retrieve(sessionId)).status).toBe('completed');
  });

  it('--holder picks the outcome: DECLINED fails the session, recorded as paid by the control API under that name', async () => {
    const { sessionId } = await client.sessions.create(sessionParams);
    const result = await cli(['sessions', 'pay', sessionId, '--holder', 'declined', '--format', 'json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ sessionId, status: 'failed' });
    expect(sandbox.records.session(sessionId)?.controlPayment).toMatchObject({ from: 'control', holderName: 'declined' });
  });

  it('a session that is not pending: exit 1 with the sandbox refusal; a holder under 3 characters: exit 2, nothing sent', async () => {
    const { sessionId } = await client.sessions.create(sessionParams);
    expect((await cli(['sessions', 'pay', sessionId])).code).toBe(0);
    const again = await cli(['sessions', 'pay', sessionId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^payment-service-sdk: The sandbox refused POST \/_sandbox\/test\/sessions\/\S+\/pay: .+\n$/);
    const other = await client.sessions.create(sessionParams);
    const short = await cli(['sessions', 'pay', other.sessionId, '--holder', ' ab ']);
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/--holder must have at least 3 characters/);
    expect((await client.sessions.retrieve(other.sessionId)).status).toBe('pending');
  });

  it('against the real service (not a sandbox): one line, exit 1, nothing sent but the probe', async () => {
    const service = await notASandbox();
    try {
      const result = await cli(['sessions', 'pay', 'abc'], { PAYMENT_SERVICE_BASE_URL: service.url });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`payment-service-sdk: sessions pay works against the sandbox only, and ${service.url} is not one\n`);
      expect(service.requests).toEqual(['GET /_sandbox/clock']);
    } finally {
      service.server.close();
    }
  });
});
