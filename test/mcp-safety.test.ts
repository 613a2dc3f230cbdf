/**
 * The MCP server's money safety, through the official client over stdio: Live refused without
 * its flags, each Live money move confirmed through elicitation (accepted, declined, a client
 * without elicitation refused, `--no-confirm`), `--max-amount` refusing before anything is sent,
 * `--read-only`, and no sentinel secret in any output.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../src/index.js';
import {
  CLI,
  call,
  cleanEnv,
  connect,
  errorOf,
  ROOT,
  SENTINEL_LIVE_KEY,
  SENTINELS,
  seen,
  startTarget,
  type Target,
  targetArgs,
  WEBCODE,
} from './mcp-client.js';

let target: Target;

/** A paid Live payment of the sandbox: its reference. */
async function livePayment(): Promise<string> {
  const client = new PaymentClient({ apiKey: SENTINEL_LIVE_KEY, webcode: WEBCODE, baseUrl: target.baseUrl, environment: 'live' });
  const session = await client.sessions.create({
    amount: { value: 5000, currency: 'EUR' },
    urlOk: 'https://shop.example/ok',
    urlKo: 'https://shop.example/ko',
  });
  await target.sandbox.paySession('live', session.sessionId);
  return (await client.sessions.retrieve(session.sessionId)).paymentReference as string;
}

const liveRefunds = () => target.sandbox.records.modifications({ environment: 'live', type: 'refund' }).length;

async function refused(args: string[]) {
  const result = await promisify(execFile)(process.execPath, [CLI, 'mcp', ...args], { cwd: ROOT, env: cleanEnv(), timeout: 20_000 }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
  seen.push(result.stderr);
  return result;
}

beforeAll(async () => {
  target = await startTarget();
}, 30_000);

afterAll(async () => {
  await target?.close();
});

describe('mcp money safety', () => {
  it('refuses to start Live without --live and --allow, saying why', async () => {
    const noAllow = await refused([...targetArgs(target, 'live'), '--live']);
    expect(noAllow.code).toBe(2);
    expect(noAllow.stderr).toMatch(/--live needs --allow/);
    const envOnly = await refused([...targetArgs(target, 'live'), '--env', 'live']);
    expect(envOnly.code).toBe(2);
    expect(envOnly.stderr).toMatch(/serving Live needs --live and --allow/);
    const unknown = await refused([...targetArgs(target, 'live'), '--live', '--allow', 'refund,refundEverything']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No tool is named refundEverything/);
  });

  it('serves in Live only the tools allowed; --read-only only the reads', async () => {
    const live = await connect([...targetArgs(target, 'live'), '--live', '--allow', 'retrieveSession,refund']);
    expect((await live.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['refund', 'retrieveSession']);
    await live.close();
    const readOnly = await connect([...targetArgs(target), '--read-only']);
    const tools = (await readOnly.client.listTools()).tools;
    expect(tools.every((tool) => tool.annotations?.readOnlyHint === true)).toBe(true);
    expect(tools.map((tool) => tool.name)).not.toContain('refund');
    expect(tools.map((tool) => tool.name)).toContain('sandbox_listRequests');
    await readOnly.close();
  });

  it('asks the person before a Live refund, with amount, currency and reference: accepted it is sent, declined it is not', async () => {
    const paymentReference = await livePayment();
    const messages: string[] = [];
    let answer: 'accept' | 'decline' = 'decline';
    const live = await connect([...targetArgs(target, 'live'), '--live', '--allow', 'refund'], {
      elicit: (message) => {
        messages.push(message);
        return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' };
      },
    });
    const before = liveRefunds();
    const declined = errorOf(await call(live, 'refund', { paymentReference, amount: { value: 1250, currency: 'EUR' } }));
    expect(declined.name).toBe('McpRefusal');
    expect(declined.message).toMatch(/declined/);
    expect(liveRefunds()).toBe(before);
    expect(messages[0]).toContain('12.50 EUR');
    expect(messages[0]).toContain(paymentReference);
    expect(messages[0]).toContain('LIVE');

    answer = 'accept';
    const accepted = await call(live, 'refund', { paymentReference, amount: { value: 1250, currency: 'EUR' } });
    expect(accepted.isError, JSON.stringify(accepted)).toBeFalsy();
    expect(liveRefunds()).toBe(before + 1);
    expect(messages).toHaveLength(2);
    await live.close();
  });

  it('refuses a Live money move when the client cannot elicit, naming --no-confirm; --no-confirm moves it', async () => {
    const paymentReference = await livePayment();
    const before = liveRefunds();
    const plain = await connect([...targetArgs(target, 'live'), '--live', '--allow', 'refund']);
    const refusal = errorOf(await call(plain, 'refund', { paymentReference, amount: { value: 700, currency: 'EUR' } }));
    expect(refusal.message).toMatch(/does not support elicitation/);
    expect(refusal.message).toMatch(/--no-confirm/);
    expect(liveRefunds()).toBe(before);
    await plain.close();
    const unconfirmed = await connect([...targetArgs(target, 'live'), '--live', '--allow', 'refund', '--no-confirm']);
    expect((await call(unconfirmed, 'refund', { paymentReference, amount: { value: 700, currency: 'EUR' } })).isError).toBeFalsy();
    expect(liveRefunds()).toBe(before + 1);
    await unconfirmed.close();
  });

  it('--max-amount refuses a single move above it before anything is sent, in Test too', async () => {
    const mcp = await connect([...targetArgs(target), '--max-amount', '1000']);
    const sent = () => target.sandbox.requests.count({ operation: 'refund' });
    const before = await sent();
    const over = errorOf(await call(mcp, 'refund', { paymentReference: `${WEBCODE}-PXTT-1`, amount: { value: 1001, currency: 'EUR' } }));
    expect(over.name).toBe('McpRefusal');
    expect(over.message).toMatch(/above the server's --max-amount 1000/);
    const charge = errorOf(await call(mcp, 'createPosPayment', { poiId: 'V400m-TEST-000001', amount: { value: 5000, currency: 'EUR' } }));
    expect(charge.name).toBe('McpRefusal');
    expect(await sent()).toBe(before);
    expect(await target.sandbox.requests.count({ operation: 'createPosPayment' })).toBe(0);
    await mcp.close();
  });

  it('shows the sentinel API keys and client secrets in no output', () => {
    const everything = seen.join('\n');
    expect(everything.length).toBeGreaterThan(1000);
    for (const sentinel of SENTINELS) expect(everything).not.toContain(sentinel);
  });
});
