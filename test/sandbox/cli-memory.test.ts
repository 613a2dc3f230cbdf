/**
 * `payment-service-sdk sandbox` runs itself again in the same process with V8's young generation
 * capped (`--max-semi-space-size=2`), unless the process was given a size of its own. What node
 * runs is read from /proc/PID/cmdline, so these tests need Linux.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentClient } from '../../src/index.js';
import { type Banner, buildOnce, killAll, run } from './cli-process.js';

beforeAll(buildOnce, 60_000);
afterAll(killAll);

/** Starts `sandbox --port 0` with `env` and resolves with the child and its JSON line. */
async function start(env: NodeJS.ProcessEnv) {
  const started = run(['sandbox', '--port', '0'], { env });
  const info = await new Promise<Banner>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`No JSON line from the CLI; stderr: ${started.stderr()}`)), 5_000);
    started.child.stdout?.on('data', () => {
      const output = started.stdout();
      if (!output.includes('\n')) return;
      clearTimeout(timer);
      done(JSON.parse(output.slice(0, output.indexOf('\n'))) as Banner);
    });
    void started.exit.then(() => fail(new Error(`The CLI exited early; stderr: ${started.stderr()}`)));
  });
  const commandLine = readFileSync(`/proc/${started.child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  return { ...started, info, commandLine };
}

describe.runIf(existsSync('/proc/self/cmdline'))('sandbox process memory', () => {
  it('runs in the process it was started as, with a 2 MB semi-space, and serves and stops as before', async () => {
    const { NODE_OPTIONS: _, ...env } = process.env;
    const sandbox = await start(env);
    expect(sandbox.commandLine.slice(1, 3)).toEqual(['--max-semi-space-size=2', expect.stringMatching(/cli\.cjs$/)]);
    expect(sandbox.commandLine.slice(3)).toEqual(['sandbox', '--port', '0']);
    const client = new PaymentClient({
      apiKey: sandbox.info.keys.test,
      webcode: sandbox.info.webcode,
      baseUrl: sandbox.info.baseUrl,
      maxRetries: 0,
    });
    const session = await client.sessions.create({
      amount: { value: 2599, currency: 'EUR' },
      urlOk: 'https://shop.example/ok',
      urlKo: 'https://shop.example/ko',
    });
    expect(session.sessionId).toMatch(/^SANDBOX-/);
    sandbox.child.kill('SIGTERM');
    expect(await sandbox.exit).toEqual({ code: 0, signal: null });
    // One banner: the first process printed nothing before it made way for the second.
    expect(sandbox.stdout().trim().split('\n')).toHaveLength(1);
  });

  it('keeps a young-generation size given in NODE_OPTIONS and starts only once', async () => {
    const sandbox = await start({ ...process.env, NODE_OPTIONS: '--max-semi-space-size=8' });
    expect(sandbox.commandLine.join(' ')).not.toContain('--max-semi-space-size=2');
    expect(sandbox.commandLine.slice(1)).toEqual([expect.stringMatching(/cli\.cjs$/), 'sandbox', '--port', '0']);
    sandbox.child.kill('SIGTERM');
    expect(await sandbox.exit).toEqual({ code: 0, signal: null });
  });
});
