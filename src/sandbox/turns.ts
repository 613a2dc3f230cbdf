/** A bound on work under way at once: the rest waits its turn, first come first served. */
export class Turns {
  readonly #size: number;
  #taken = 0;
  readonly #waiting: (() => void)[] = [];
  #head = 0;

  constructor(size: number) {
    this.#size = size;
  }

  /** Resolves with the function that ends the turn, once fewer than `size` turns are taken. */
  async take(): Promise<() => void> {
    if (this.#taken >= this.#size) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#taken++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#next();
    };
  }

  /** How many wait for a turn. */
  get waiting(): number {
    return this.#waiting.length - this.#head;
  }

  /** No turn is taken and no one waits. */
  get idle(): boolean {
    return this.#taken === 0 && this.waiting === 0;
  }

  /** The turn passes to the first in line, or is given back. */
  #next(): void {
    const first = this.#waiting[this.#head];
    if (first === undefined) {
      this.#taken--;
      return;
    }
    // A head index, not shift(): thousands wait at once, and shift() moves them all each time.
    this.#head++;
    if (this.#head === this.#waiting.length) {
      this.#waiting.length = 0;
      this.#head = 0;
    }
    first();
  }
}
