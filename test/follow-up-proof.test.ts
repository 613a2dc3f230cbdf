/**
 * The proof of issue 32: for each of pg-boss (PostgreSQL store) and BullMQ (Redis store), three app
 * processes (test/fixtures/follow-up-app.ts: createWebhookHandler + createFollowUps + the queue +
 * the store) share the queue and the store, against one sandbox on 127.0.0.1 whose webhooks go to
 * all three. The orders: sessions paid, declined, cancelled, expired (the sandbox clock moved) and
 * never opened; POS payments that succeed, fail, and time out then complete late; refunds of
 * sessions and of POS payments. Side effects are counted in an append-only log (one line per
 * callback run, no unique anything). Scenarios:
 * (a) every webhook dropped: every final outcome acted on exactly once through follow-ups, and
 *     every never-opened session reaches onStale at the horizon;
 * (b) webhooks on, duplicated and reordered by fault rules, follow-ups on: exactly once per outcome;
 * (c) one process SIGKILLed mid-callback and started again: nothing doubled, nothing missing;
 * (d), in test/follow-up-proof-kills.test.ts: pg-boss only, effects written through
 *     `context.transaction` while a process is SIGKILLed every 2 s for a minute: 0 doubles.
 * PROOF_ORDERS scales the orders of (a)-(c) (default 1: 32 orders, 29 final outcomes with their 4 refunds,
 * and 3 never-opened sessions a scenario: 174 outcomes over the six runs, and about 150 more in (d)).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APPS, checkOnce, dropAll, type Engine, orders, pgUrl, redis, settle, useProofApps, world } from './support/follow-up-proof.js';
import { sleep, until } from './support/follow-up-queues.js';
import { uniqueName } from './support/services.js';

const apps = useProofApps();

const engines: [Engine, string | undefined][] = [
  ['pg-boss', pgUrl],
  ['bullmq', redis],
];

describe.each(engines)('every outcome acted on exactly once, three app processes on %s', (engine, url) => {
  it.skipIf(!url)(
    '(a) every webhook dropped: follow-ups act on each final outcome once; never-opened sessions reach onStale',
    { timeout: 240_000 },
    async () => {
      const w = await world(engine);
      try {
        w.sandbox.faults.add({ event: 'AUTHORISATION', effect: { type: 'drop' } });
        w.sandbox.faults.add({ event: 'REFUND', effect: { type: 'drop' } });
        for (let i = 0; i < APPS; i++) await w.startApp();
        const stale = (await orders(w, 'a')).map((key) => `stale ${key}`);
        await settle(w, stale);
        const [deliveries, lines] = [w.sandbox.records.deliveries(), w.lines()];
        checkOnce(w, stale, await w.stop(), lines);
        expect(deliveries.length).toBeGreaterThan(0);
        expect(deliveries.every((delivery) => delivery.attempts.length === 0)).toBe(true);
      } finally {
        await dropAll(engine, w.name);
      }
    },
  );

  it.skipIf(!url)(
    '(b) webhooks on, duplicated and reordered, with follow-ups: each outcome once across both sources',
    { timeout: 240_000 },
    async () => {
      const w = await world(engine, { APP_HORIZON_MS: '600000' });
      try {
        for (const event of ['AUTHORISATION', 'REFUND'] as const) {
          w.sandbox.faults.add({ event, times: 4, effect: { type: 'reorder' } });
          w.sandbox.faults.add({ event, probability: 0.3, effect: { type: 'delay', ms: 300 } });
          w.sandbox.faults.add({ event, effect: { type: 'duplicate', copies: 3 } });
        }
        for (let i = 0; i < APPS; i++) await w.startApp();
        await orders(w, 'b');
        await settle(w);
        await w.sandbox.advanceClock(3_600_000); // every webhook retry now: each answered as a duplicate
        await w.sandbox.webhooksSettled();
        await sleep(1_000);
        const [deliveries, lines] = [w.sandbox.records.deliveries(), w.lines()];
        checkOnce(w, [], await w.stop(), lines);
        expect(deliveries.filter((delivery) => delivery.fault !== null)).not.toHaveLength(0);
        // Both sources acted: webhooks were answered as duplicates of what the follow-ups (or other copies) did.
        expect(deliveries.some((delivery) => delivery.attempts.some((attempt) => attempt.responseBody?.includes('"duplicate":true')))).toBe(
          true,
        );
      } finally {
        await dropAll(engine, w.name);
      }
    },
  );

  it.skipIf(!url)(
    '(c) a process SIGKILLed mid-callback and started again: nothing doubled, nothing missing',
    { timeout: 240_000 },
    async () => {
      const marker = join(apps.folder(), `${uniqueName('hang')}.pid`);
      const w = await world(engine, { APP_LEASE_MS: '15000', APP_HORIZON_MS: '600000' });
      try {
        w.sandbox.faults.add({ event: 'AUTHORISATION', effect: { type: 'drop' } });
        w.sandbox.faults.add({ event: 'REFUND', effect: { type: 'drop' } });
        // The first app hangs in its first callback run, whichever outcome that is. It runs alone
        // until then: with the others started, they could take every check and leave it none.
        await w.startApp(0, { APP_HANG_MARKER: marker });
        const creating = orders(w, 'c');
        await until(() => existsSync(marker) && readFileSync(marker, 'utf8') !== '', 120_000, 'a callback to hang');
        for (let i = 1; i < APPS; i++) await w.startApp();
        const victim = w.apps[0];
        const [hungPid = '', ...hung] = readFileSync(marker, 'utf8').split(' ');
        expect(hungPid).toBe(String(victim?.child.process.pid));
        victim?.child.process.kill('SIGKILL');
        await victim?.child.exited;
        const victimOutput = victim?.child.output() ?? '';
        await w.startApp(0); // again, on the same queue and store
        await creating;
        await settle(w);
        const lines = w.lines();
        checkOnce(w, [], victimOutput + (await w.stop()), lines);
        // The hung callback's outcome was acted on once, by another process (the victim, meanwhile,
        // ran other checks to the end: those lines are its own).
        const hungLines = lines.filter((line) => line.startsWith(`${hung.join(' ')} `));
        expect(hungLines).toHaveLength(1);
        expect(hungLines[0]?.endsWith(` ${hungPid}`)).toBe(false);
      } finally {
        rmSync(marker, { force: true });
        await dropAll(engine, w.name);
      }
    },
  );
});
