/**
 * The timestamps of ids, kept in memory and reserved in the store ahead of use (store-timestamps.ts):
 * unique and increasing within a run, after a clean restart (going on exactly), after a run that
 * never closed (a kill: past everything it gave), and undone with a transaction that rolls back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxStore } from '../../src/sandbox/store.js';
import { TIMESTAMP_RESERVE } from '../../src/sandbox/store-timestamps.js';

const dirs: string[] = [];
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-timestamps-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const T = 1_800_000_000_000;
const give = (store: SandboxStore, count: number, now = T) =>
  Array.from({ length: count }, () => store.transaction(() => store.nextTimestamp(now)));

describe('id timestamps', () => {
  it('are now, or one past the last when the clock stands still or goes back', () => {
    const store = new SandboxStore();
    expect(give(store, 3)).toEqual([T, T + 1, T + 2]);
    expect(give(store, 1, T + 10)).toEqual([T + 10]);
    expect(give(store, 1, T - 1_000)).toEqual([T + 11]);
    store.close();
  });

  it('go on exactly after a clean close, and the store holds only the last one given', () => {
    const dir = folder();
    const first = new SandboxStore(dir);
    expect(give(first, 3)).toEqual([T, T + 1, T + 2]);
    expect(first.counter('lastTimestamp')).toBe(T + TIMESTAMP_RESERVE);
    first.close();
    const second = new SandboxStore(dir);
    expect(second.counter('lastTimestamp')).toBe(T + 2);
    expect(give(second, 2)).toEqual([T + 3, T + 4]);
    second.close();
  });

  it('never repeat after a run that did not close (killed): the next run starts past its reservation', () => {
    const dir = folder();
    const killed = new SandboxStore(dir);
    const given = give(killed, 5);
    // Opened beside it, as a run after a kill -9 opens the file: the reservation committed, the close never came.
    const next = new SandboxStore(dir);
    const after = give(next, 3);
    expect(Math.min(...after)).toBeGreaterThan(Math.max(...given));
    expect(new Set([...given, ...after]).size).toBe(8);
    next.close();
    killed.close();
  });

  it('given in a transaction that rolls back are given again, with its reservation undone', () => {
    const dir = folder();
    const store = new SandboxStore(dir);
    expect(give(store, 1)).toEqual([T]);
    const late = T + 2 * TIMESTAMP_RESERVE;
    expect(() =>
      store.transaction(() => {
        expect(store.nextTimestamp(late)).toBe(late);
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(store.counter('lastTimestamp')).toBe(T + TIMESTAMP_RESERVE);
    expect(give(store, 1)).toEqual([T + 1]);
    expect(give(store, 1, late)).toEqual([late]);
    expect(store.counter('lastTimestamp')).toBe(late + TIMESTAMP_RESERVE);
    store.close();
  });
});
