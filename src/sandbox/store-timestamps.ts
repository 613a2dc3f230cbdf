/**
 * The timestamps of ids (`{webcode}-EXTT-{timestamp}`): `now`, made unique and increasing, also
 * across restarts. Kept here rather than raised in the store on every id (an UPDATE per create,
 * as much as the session's own insert): the store holds a value reserved ahead of them, written
 * once per {@link TIMESTAMP_RESERVE} ms of ids, so that a run killed at any point leaves a value no
 * later run goes below; a clean close writes the last one given, so that the next run goes on
 * from it exactly.
 */

/** How far past the last timestamp given the store's value is reserved. */
export const TIMESTAMP_RESERVE = 60_000;

/** The counter in the store: read once, written when a reservation runs out and on close. */
export interface StoredCounter {
  read(): number;
  write(value: number): void;
}

export class Timestamps {
  readonly #stored: StoredCounter;
  /** The last timestamp given, and the store's value; `undefined` until the first is asked for. */
  #state: { last: number; reserved: number } | undefined;
  /** The state when the store's transaction began, given back if it rolls back (its reservation with it). */
  #atBegin: { last: number; reserved: number } | undefined;

  constructor(stored: StoredCounter) {
    this.#stored = stored;
  }

  /** A timestamp for an id: `now`, or one past the last when that is later. */
  next(now: number): number {
    if (this.#state === undefined) {
      const value = this.#stored.read();
      this.#state = { last: value, reserved: value };
    }
    const state = this.#state;
    const value = Math.max(state.last + 1, now);
    if (value > state.reserved) {
      this.#stored.write(value + TIMESTAMP_RESERVE);
      state.reserved = value + TIMESTAMP_RESERVE;
    }
    state.last = value;
    return value;
  }

  /** The store's transaction began. */
  begin(): void {
    this.#atBegin = this.#state && { ...this.#state };
  }

  /** The store's transaction rolled back: the timestamps it gave and its reservation are undone. */
  rollback(): void {
    this.#state = this.#atBegin && { ...this.#atBegin };
  }

  /** The store closes: the last timestamp given is written in place of the reservation. */
  close(): void {
    if (this.#state !== undefined && this.#state.last !== this.#state.reserved) this.#stored.write(this.#state.last);
  }
}
