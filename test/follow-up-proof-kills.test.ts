/**
 * The proof of issue 32, scenario (d): on PostgreSQL with pg-boss, three app processes
 * (test/fixtures/follow-up-app.ts) write their side effects as rows of a table (no unique
 * constraint) through `context.transaction`, the webhook handler's and the follow-ups' alike, while
 * one of them is SIGKILLed every 2 s for PROOF_KILL_MS (default a minute) and started again, and
 * orders (paid sessions, POS payments that succeed or fail) keep coming, webhooks and follow-ups
 * both on: every outcome has exactly one row, 0 doubles. (a)-(c) are in test/follow-up-proof.test.ts.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { posTestAmount } from '../src/testing/index.js';
import { submitForm } from './sandbox/support.js';
import { APPS, dropAll, EUR, KILL_MS, pgUrl, poiIds, useProofApps, world } from './support/follow-up-proof.js';
import { sleep } from './support/follow-up-queues.js';
import { uniqueName } from './support/services.js';

useProofApps();

describe('(d) effects through context.transaction on PostgreSQL with pg-boss, a process SIGKILLed every 2 s', () => {
  it.skipIf(!pgUrl)(`0 doubles over ${KILL_MS / 1000} s of kills`, { timeout: KILL_MS + 240_000 }, async () => {
    const name = uniqueName('proofd').toLowerCase();
    const table = `${name}_effects`;
    const pool = new pg.Pool({ connectionString: pgUrl, max: 2 });
    await pool.query(`CREATE TABLE ${table} (kind text NOT NULL, key text NOT NULL, pid integer NOT NULL)`);
    const w = await world('pg-boss', { APP_EFFECTS_TABLE: table, APP_LEASE_MS: '3000', APP_HORIZON_MS: '600000' });
    Object.defineProperty(w, 'name', { value: name });
    try {
      for (let i = 0; i < APPS; i++) await w.startApp();
      let kills = 0;
      const starting = new Map<number, Promise<void>>();
      // Every 2 s, an app that is up is SIGKILLed and a new one started in its place (not awaited:
      // the kills keep their pace; a slot whose new app is still starting is skipped).
      const killing = (async () => {
        for (const end = Date.now() + KILL_MS; Date.now() < end; await sleep(2_000)) {
          const index = [0, 1, 2].map((offset) => (kills + offset) % APPS).find((slot) => !starting.has(slot));
          if (index === undefined) continue;
          kills++;
          const app = w.apps[index];
          app?.child.process.kill('SIGKILL');
          await app?.child.exited;
          starting.set(
            index,
            w.startApp(index).finally(() => starting.delete(index)),
          );
        }
        await Promise.all(starting.values());
      })();
      // Orders all along the kills: sessions paid and POS payments, webhooks and follow-ups both on.
      let round = 0;
      while (!(await Promise.race([killing.then(() => true), sleep(0).then(() => false)]))) {
        const created = await w.client.sessions.create({
          amount: EUR(2_500),
          urlOk: 'https://shop.example/ok',
          urlKo: 'https://shop.example/ko',
          customReference: `d-${round}`,
        });
        await w.track({ sessionId: created.sessionId });
        await submitForm(created.paymentUrl);
        const reference = (await w.client.sessions.retrieve(created.sessionId)).paymentReference ?? '';
        w.expected.add(`auth AUTHORISATION:${reference}:AUTHORISED`);
        const outcome = round % 3 === 0 ? 'failed' : 'success';
        const payment = await w.client.pos.createPayment(
          { poiId: poiIds[round % poiIds.length] ?? '', amount: EUR(posTestAmount(outcome)) },
          { recover: false },
        );
        await w.track({ posPaymentId: payment.posPaymentId });
        w.expected.add(`auth AUTHORISATION:${payment.posPaymentId}:${outcome === 'success' ? 'AUTHORISED' : 'REFUSED'}`);
        round++;
        await sleep(100);
      }
      await killing;
      const rows = async () =>
        (await pool.query<{ kind: string; key: string }>(`SELECT kind, key FROM ${table}`)).rows.map((row) => `${row.kind} ${row.key}`);
      let have: string[] = [];
      for (const end = Date.now() + 120_000; Date.now() < end; await sleep(200)) {
        have = await rows();
        if ([...w.expected].every((line) => have.includes(line))) break;
        await w.sandbox.advanceClock(2_000); // webhook retries now
      }
      await sleep(2_000);
      have = await rows();
      const output = await w.stop();
      const doubles = have.filter((line, index) => have.indexOf(line) !== index);
      const missing = [...w.expected].filter((line) => !have.includes(line));
      // A tick is skipped while every slot's new app is still starting (a loaded machine): most land.
      console.log(`(d): ${kills} SIGKILLs in ${KILL_MS / 1000} s, ${have.length} effects, 0 doubles expected`);
      expect({ kills: kills >= Math.floor(KILL_MS / 4_000), doubles, missing }, output.slice(-4_000)).toEqual({
        kills: true,
        doubles: [],
        missing: [],
      });
      expect(have.length).toBe(w.expected.size);
    } finally {
      await pool.query(`DROP TABLE IF EXISTS ${table}`);
      await pool.end();
      await dropAll('pg-boss', name);
    }
  });
});
