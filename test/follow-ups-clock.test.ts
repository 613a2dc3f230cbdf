/**
 * Issue 37, item 8: follow-ups on the sandbox's clock (or `manualClock()`), so that a test moves
 * the clock and sees the checks and `onStale` happen, against the sandbox over real HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createFollowUps, type FollowUpTarget, memoryFollowUpQueue, memoryWebhookStore } from '../src/index.js';
import { manualClock } from '../src/sandbox/index.js';
import { submitForm, useSandboxes } from './sandbox/support.js';

const sandboxes = useSandboxes();
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function until(done: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 30_000; Date.now() < end; await sleep(20)) if (done()) return;
  throw new Error(`timed out waiting for ${what}`);
}

const session = { amount: { value: 2_500, currency: 'EUR' as const }, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' };

describe('follow-ups on the sandbox clock', () => {
  it('runs the first check (30 s by default) when the sandbox clock moves 30 s, and onStale at the 24 h horizon', async () => {
    const { sandbox, test } = await sandboxes.start();
    const paid: string[] = [];
    const stale: FollowUpTarget[] = [];
    const followUps = createFollowUps({
      client: test,
      store: memoryWebhookStore(),
      queue: memoryFollowUpQueue(),
      clock: sandbox.clock,
      onAuthorisation: (event) => void paid.push(event.data.paymentReference),
      onStale: (target) => void stale.push(target),
    });
    await followUps.start();
    stops.push(() => followUps.stop());

    const bought = await test.sessions.create(session);
    const abandoned = await test.sessions.create(session);
    await followUps.track({ sessionId: bought.sessionId });
    await followUps.track({ sessionId: abandoned.sessionId });
    await submitForm(bought.paymentUrl); // no webhook URL: only a follow-up can tell
    await sleep(300);
    expect(paid).toEqual([]); // 30 s of the sandbox clock have not passed

    await sandbox.advanceClock(30_000);
    await until(() => paid.length === 1, 'the first check');
    expect(paid[0]).toMatch(/-PXTT-/);
    expect(stale).toEqual([]);

    await sandbox.advanceClock(24 * 3_600_000);
    await until(() => stale.length === 1, 'onStale at the horizon');
    expect(stale).toEqual([{ sessionId: abandoned.sessionId }]);
    await sleep(200);
    expect(paid).toHaveLength(1);
  });

  it('follows manualClock(): nothing happens until it is advanced', async () => {
    const clock = manualClock();
    const { test } = await sandboxes.start({ clock });
    const stale: FollowUpTarget[] = [];
    const followUps = createFollowUps({
      client: test,
      store: memoryWebhookStore(),
      queue: memoryFollowUpQueue({ clock }),
      clock,
      schedule: [1_000],
      horizonMs: 5_000,
      onAuthorisation: () => undefined,
      onStale: (target) => void stale.push(target),
    });
    await followUps.start();
    stops.push(() => followUps.stop());
    const never = await test.sessions.create(session);
    await followUps.track({ sessionId: never.sessionId });
    await sleep(300);
    expect(stale).toEqual([]);
    for (let second = 0; second < 5; second++) await clock.advance(1_000);
    await until(() => stale.length === 1, 'onStale');
    expect(stale).toEqual([{ sessionId: never.sessionId }]);
  });

  it('runDue() runs the checks due on the clock now and resolves once they are done', async () => {
    const { sandbox, test } = await sandboxes.start();
    const paid: string[] = [];
    const followUps = createFollowUps({
      client: test,
      store: memoryWebhookStore(),
      queue: memoryFollowUpQueue(),
      clock: sandbox.clock,
      onAuthorisation: (event) => void paid.push(event.data.paymentReference),
    });
    await expect(followUps.runDue()).rejects.toThrow(/not started/);
    await followUps.start();
    stops.push(() => followUps.stop());
    const bought = await test.sessions.create(session);
    await followUps.track({ sessionId: bought.sessionId });
    await sandbox.paySession('test', bought.sessionId);
    await followUps.runDue();
    expect(paid).toEqual([]); // not due yet
    await sandbox.advanceClock(30_000);
    await followUps.runDue();
    expect(paid).toHaveLength(1);
  });

  it('refuses a clock without now()', () => {
    expect(() =>
      createFollowUps({
        client: {} as never,
        store: memoryWebhookStore(),
        queue: memoryFollowUpQueue(),
        clock: {} as never,
        onAuthorisation: () => undefined,
      }),
    ).toThrow(TypeError);
  });
});
