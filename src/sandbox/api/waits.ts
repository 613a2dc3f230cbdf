/** Requests waiting for a running request with their `Idempotency-Key` to finish (a POS payment at its terminal). */
import type { Environment } from '../../core/options.js';

export class KeyWaits {
  readonly #waiting = new Map<string, (() => void)[]>();

  /** Resolves when the request running with this key has stored its response or given up. */
  settled(environment: Environment, key: string): Promise<void> {
    const slot = `${environment} ${key}`;
    return new Promise((resolve) => {
      const waiting = this.#waiting.get(slot) ?? [];
      waiting.push(resolve);
      this.#waiting.set(slot, waiting);
    });
  }

  /** The request with this key has finished: its waiters replay it (or run it again, if it failed). */
  settle(environment: Environment, key: string): void {
    const slot = `${environment} ${key}`;
    for (const resolve of this.#waiting.get(slot) ?? []) resolve();
    this.#waiting.delete(slot);
  }
}
