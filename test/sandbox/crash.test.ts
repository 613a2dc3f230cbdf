/**
 * Crash soak: the CLI sandbox with `--data-dir` is killed with SIGKILL while keyed writes are in
 * flight, restarted, and every unanswered write is sent again with its key. No acknowledged write
 * may be lost, and no key may create twice. Network: 127.0.0.1 only; bounded rounds and requests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/sandbox/index.js';
import { type Banner, buildOnce, killAll, type Running, startCli, stop } from './cli-process.js';

const ROUNDS = 5;
const CONCURRENCY = 24;

interface Write {
  key: string;
  path: '/payment/session' | '/pos/payment';
  body: Record<string, unknown>;
  /** The id the first 2xx answer named: `sessionId` or `posPaymentId`. */
  acknowledged?: string | undefined;
}

const dirs: string[] = [];
beforeAll(buildOnce, 60_000);
afterAll(() => {
  killAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function send(info: Banner, write: Write): Promise<{ status: number; id: string | undefined } | undefined> {
  try {
    const response = await fetch(`${info.baseUrl}/external/v1/test${write.path}`, {
      method: 'POST',
      headers: { 'x-api-key': info.keys.test, 'content-type': 'application/json', 'idempotency-key': write.key },
      body: JSON.stringify({ webcode: info.webcode, ...write.body }),
    });
    const body = (await response.json()) as { data?: { sessionId?: string; posPaymentId?: string } };
    return { status: response.status, id: body.data?.sessionId ?? body.data?.posPaymentId };
  } catch {
    // Connection reset by the kill: no answer, so not acknowledged.
    return undefined;
  }
}

/** Records the first acknowledgement of a write; a later one must name the same record. */
function acknowledge(write: Write, answer: { status: number; id: string | undefined } | undefined): void {
  if (!answer || answer.status < 200 || answer.status >= 300) return;
  if (write.acknowledged !== undefined && write.acknowledged !== answer.id)
    throw new Error(`Key ${write.key} answered ${answer.id} after ${write.acknowledged}`);
  write.acknowledged = answer.id;
}

async function listAll(info: Banner, path: '/payment/sessions' | '/pos/payments'): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ webcode: info.webcode, take: '100', ...(cursor ? { cursor } : {}) });
    const response = await fetch(`${info.baseUrl}/external/v1/test${path}?${query}`, { headers: { 'x-api-key': info.keys.test } });
    const { data } = (await response.json()) as {
      data: { payments?: Record<string, unknown>[]; posPayments?: Record<string, unknown>[]; meta: { cursor: string | null } };
    };
    items.push(...(data.payments ?? data.posPayments ?? []));
    cursor = data.meta.cursor;
  } while (cursor);
  return items;
}

describe('crash soak (kill -9 during keyed writes, --data-dir)', () => {
  it('loses no acknowledged write and creates nothing twice over repeated kills and resends', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-crash-'));
    dirs.push(dir);
    const random = seededRandom(7);
    const writes: Write[] = [];
    let next = 0;
    const newWrite = (kind: 'session' | 'pos'): Write => {
      const index = next++;
      const write: Write =
        kind === 'pos'
          ? {
              key: `crash-pos-${index}`,
              path: '/pos/payment',
              body: {
                poiId: 'V400m-TEST-000001',
                amount: { value: 1_000 + index * 100, currency: 'EUR' },
                customReference: `crash-${index}`,
              },
            }
          : {
              key: `crash-session-${index}`,
              path: '/payment/session',
              body: {
                amount: { value: 1_000 + index, currency: 'EUR' },
                urlOk: 'https://shop.example/ok',
                urlKo: 'https://shop.example/ko',
                customReference: `crash-${index}`,
              },
            };
      writes.push(write);
      return write;
    };
    const resendUnacknowledged = async (info: Banner) => {
      for (const write of writes.filter((candidate) => candidate.acknowledged === undefined)) acknowledge(write, await send(info, write));
    };

    for (let round = 0; round < ROUNDS; round++) {
      const running: Running = await startCli(['--data-dir', dir, '--pos-delay-ms', '20-60']);
      // Writes left unanswered by the last kill first: they replay or run once, never twice.
      await resendUnacknowledged(running.info);
      let killed = false;
      // Lane 0 sends POS payments one after another (a terminal takes one at a time), so that a
      // terminal answer, scheduled work, is in flight at the kill; the other lanes create sessions.
      const loops = Array.from({ length: CONCURRENCY }, async (_, lane) => {
        while (!killed) {
          const write = newWrite(lane === 0 ? 'pos' : 'session');
          acknowledge(write, await send(running.info, write));
        }
      });
      await new Promise((done) => setTimeout(done, 80 + Math.floor(random() * 120)));
      killed = true;
      running.child.kill('SIGKILL');
      expect((await running.exit).signal).toBe('SIGKILL');
      await Promise.all(loops);
    }

    const final = await startCli(['--data-dir', dir, '--pos-delay-ms', '0']);
    await resendUnacknowledged(final.info);
    const sessions = await listAll(final.info, '/payment/sessions');
    const payments = await listAll(final.info, '/pos/payments');
    expect((await stop(final)).code).toBe(0);

    const acknowledged = writes.filter((write) => write.acknowledged !== undefined);
    // Enough traffic for the soak to mean something, and every write finally answered.
    expect(writes.length).toBeGreaterThan(100);
    expect(acknowledged).toHaveLength(writes.length);
    expect(writes.filter((write) => write.path === '/pos/payment').length).toBeGreaterThan(ROUNDS);

    // No duplicates: each customReference (one per key) names exactly one record.
    const byReference = new Map<string, string[]>();
    for (const record of [...sessions, ...payments]) {
      const ids = byReference.get(record.customReference as string) ?? [];
      ids.push((record.sessionId ?? record.posPaymentId) as string);
      byReference.set(record.customReference as string, ids);
    }
    const duplicates = [...byReference].filter(([, ids]) => ids.length > 1);
    expect(duplicates).toEqual([]);
    // No acknowledged write lost: the record each key was answered with is stored under its reference.
    const lost = acknowledged.filter((write) => byReference.get(write.body.customReference as string)?.[0] !== write.acknowledged);
    expect(lost).toEqual([]);
    // POS payments a kill left at the terminal were completed by their stored job, not left pending.
    expect(payments.filter((payment) => payment.status === 'pending')).toEqual([]);
  }, 60_000);
});
