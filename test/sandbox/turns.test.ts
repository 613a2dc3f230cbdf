/** Turns: at most `size` under way, the rest served first come first served; idle once all ended. */
import { describe, expect, it } from 'vitest';
import { Turns } from '../../src/sandbox/turns.js';

describe('Turns', () => {
  it('gives at most size turns at once, then passes each ended turn to the first in line', async () => {
    const turns = new Turns(2);
    const order: number[] = [];
    const ends: (() => void)[] = [];
    const takers = Array.from({ length: 5 }, (_, index) =>
      turns.take().then((end) => {
        order.push(index);
        ends[index] = end;
      }),
    );
    await Promise.resolve();
    await Promise.resolve();
    expect(order).toEqual([0, 1]);
    expect(turns.waiting).toBe(3);
    ends[1]?.();
    ends[1]?.(); // ending twice gives back one turn only
    await Promise.resolve();
    await Promise.resolve();
    expect(order).toEqual([0, 1, 2]);
    expect(turns.waiting).toBe(2);
    ends[0]?.();
    ends[2]?.();
    await Promise.resolve();
    await Promise.resolve();
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(turns.idle).toBe(false);
    ends[3]?.();
    ends[4]?.();
    await Promise.all(takers);
    expect(turns.idle).toBe(true);
  });

  it('serves thousands in order', async () => {
    const turns = new Turns(8);
    let under = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 5_000 }, async (_, index) => {
        const end = await turns.take();
        order.push(index);
        under++;
        most = Math.max(most, under);
        await new Promise((resolve) => setImmediate(resolve));
        under--;
        end();
      }),
    );
    expect(most).toBe(8);
    expect(order).toEqual(Array.from({ length: 5_000 }, (_, index) => index));
    expect(turns.idle).toBe(true);
  });
});
