/** `payment-service-sdk sandbox --request-log-size N` and `PAYMENT_SANDBOX_REQUEST_LOG_SIZE`, on the built CLI over HTTP (127.0.0.1). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOnce, killAll, run } from './cli-process.js';

beforeAll(buildOnce);
afterAll(killAll);

function envWith(variables: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('PAYMENT_SANDBOX_')) env[name] = value;
  return { ...env, ...variables };
}

/** Starts the sandbox, sends `requests` listings, and answers the total its request log shows. */
async function logged(args: string[], variables: Record<string, string>, requests: number): Promise<number> {
  const started = run(['sandbox', '--port', '0', ...args], { env: envWith(variables) });
  try {
    const deadline = Date.now() + 15_000;
    while (!started.stdout().includes('\n')) {
      if (Date.now() > deadline) throw new Error(`No JSON line; stderr: ${started.stderr()}`);
      await new Promise((done) => setTimeout(done, 20));
    }
    const { baseUrl } = JSON.parse(started.stdout().slice(0, started.stdout().indexOf('\n'))) as { baseUrl: string };
    const headers = { 'x-api-key': 'sk_test_sandbox' };
    for (let index = 0; index < requests; index++)
      await (await fetch(`${baseUrl}/external/v1/test/payment/sessions?webcode=SANDBOX`, { headers })).text();
    const page = await (await fetch(`${baseUrl}/_sandbox/test/requests`, { headers })).json();
    return page.data.total as number;
  } finally {
    started.child.kill('SIGTERM');
    await started.exit;
  }
}

describe('the request log size of the CLI', { timeout: 60_000 }, () => {
  it('keeps 10 000 entries by default, N with --request-log-size or its variable, none with 0', async () => {
    expect(await logged([], {}, 3)).toBe(3);
    expect(await logged(['--request-log-size', '2'], {}, 3)).toBe(2);
    expect(await logged([], { PAYMENT_SANDBOX_REQUEST_LOG_SIZE: '0' }, 3)).toBe(0);
    // A flag given wins over its variable.
    expect(await logged(['--request-log-size', '1'], { PAYMENT_SANDBOX_REQUEST_LOG_SIZE: '0' }, 3)).toBe(1);
  });

  it('refuses a size that is not a whole number, naming the flag', async () => {
    const refused = run(['sandbox', '--port', '0', '--request-log-size', 'lots'], { env: envWith() });
    expect((await refused.exit).code).toBe(2);
    expect(refused.stderr()).toContain('--request-log-size must be an integer from 0 to 2147483648');
    const help = run(['sandbox', '--help'], { env: envWith() });
    await help.exit;
    expect(help.stdout().replace(/\s+/g, ' ')).toContain('(env: PAYMENT_SANDBOX_REQUEST_LOG_SIZE)');
  });
});
