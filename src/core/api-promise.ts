/** What `.withResponse()` resolves to: the data plus the raw exchange. */
export interface WithResponse<T> {
  /** The unwrapped `data` of the success envelope. */
  data: T;
  /** The HTTP response of the last attempt. Its body has already been read. */
  response: Response;
  /** The `Idempotency-Key` the call sent (writes only). */
  idempotencyKey: string | undefined;
}

/**
 * The promise every method returns: it resolves to the data, and `.withResponse()` also exposes
 * the response and the idempotency key. The request starts when the method is called.
 */
export class APIPromise<T> extends Promise<T> {
  // `then`, `catch` and `finally` of derived promises are plain promises.
  static override get [Symbol.species]() {
    return Promise;
  }

  readonly #exchange: Promise<WithResponse<T>>;

  constructor(exchange: Promise<WithResponse<T>>) {
    // The base promise is never observed: `then` is redirected to the exchange below.
    super((resolve) => resolve(undefined as T));
    this.#exchange = exchange;
  }

  /** Resolves to `{ data, response, idempotencyKey }`. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#exchange;
  }

  // biome-ignore lint/suspicious/noThenProperty: an APIPromise is a promise; `then` redirects it to the exchange.
  override then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#exchange.then(
      // One promise turn, not two: the data is unwrapped inside the caller's own callback.
      onfulfilled ? (exchange) => onfulfilled(exchange.data) : (exchange) => exchange.data as unknown as A,
      onrejected,
    );
  }
}
