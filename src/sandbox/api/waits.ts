/** Requests waiting for a running request with their `Idempotency-Key` to finish (a POS payment at its terminal). */
import type { Environment } from '../../core/options.js';
import type { ServiceFailure } from '../responses.js';

interface Waiter {
  resolve: () => void;
  reject: (failure: ServiceFailure) => void;
}

export class KeyWaits {
  readonly #waiting = new Map<string, Waiter[]>();

  /** Resolves when the request running with this key has stored its response or given up; rejects when {@link release}d. */
  settled(environment: Environment, key: string): Promise<void> {
    const slot = `${environment} ${key}`;
    return new Promise((resolve, reject) => {
      const waiting = this.#waiting.get(slot) ?? [];
      waiting.push({ resolve, reject });
      this.#waiting.set(slot, waiting);
    });
  }

  /** The request with this key has finished: its waiters replay it (or run it again, if it failed). */
  settle(environment: Environment, key: string): void {
    const slot = `${environment} ${key}`;
    for (const waiter of this.#waiting.get(slot) ?? []) waiter.resolve();
    this.#waiting.delete(slot);
  }

  /**
   * Every waiter is answered `failure` now (the sandbox stops, or the tenant is removed): the
   * request it waits for will not finish here. Returns how many there were.
   */
  release(failure: ServiceFailure): number {
    const waiting = [...this.#waiting.values()].flat();
    this.#waiting.clear();
    for (const waiter of waiting) waiter.reject(failure);
    return waiting.length;
  }
}
