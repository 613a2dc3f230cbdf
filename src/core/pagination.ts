import type { APIPromise } from './api-promise.js';
import { ResponseValidationError } from './errors.js';
import type { Logger } from './options.js';

/** One page of a listing. */
export interface Page<T> {
  /** The items of this page. */
  items: T[];
  /** Cursor of the next page; `null` on the last page. */
  cursor: string | null;
  /** Whether another page follows. */
  hasMore: boolean;
  /** Total number of matching items across all pages. */
  total: number;
}

/** The listing body every paginated endpoint shares: an array under its own key, plus `meta`. */
type ListingData<Key extends string, T> = { [K in Key]: T[] } & {
  meta: { cursor: string | null; hasMore: boolean; total: number };
};

/**
 * A lazy walk over a cursor-paginated listing. Pages are fetched one at a time, only when the
 * iteration needs them, and leaving a loop stops the fetching.
 *
 * ```ts
 * for await (const session of client.sessions.list({ status: 'completed' })) { ... }
 * ```
 */
export class Paginator<T> implements AsyncIterable<T> {
  readonly #fetchPage: (cursor: string | undefined) => Promise<Page<T> & { response?: Response }>;
  readonly #startCursor: string | undefined;
  readonly #logger: Logger | undefined;
  /** The HTTP response of the page fetched last, for adapters that need headers; `undefined` before the first fetch. */
  lastResponse: Response | undefined;

  /**
   * @param fetchPage Fetches the page at a cursor; `undefined` means the listing's first page
   * (the one at the `cursor` the listing was given, if any).
   * @param startCursor The cursor the listing was given, so that the service handing it back counts as a loop.
   * @param logger Told when a walk ends on a page the service marked `hasMore` without a usable cursor.
   */
  constructor(
    fetchPage: (cursor: string | undefined) => Promise<Page<T> & { response?: Response }>,
    startCursor?: string,
    logger?: Logger,
  ) {
    this.#fetchPage = fetchPage;
    this.#startCursor = startCursor;
    this.#logger = logger;
  }

  /** Fetches the first page only. */
  firstPage(): Promise<Page<T>> {
    return this.#fetch(undefined);
  }

  async #fetch(cursor: string | undefined): Promise<Page<T>> {
    const { response, ...page } = await this.#fetchPage(cursor);
    this.lastResponse = response;
    return page;
  }

  /** Iterates page by page, following `meta.cursor` while `meta.hasMore`. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let cursor: string | undefined;
    // A cursor seen before means the service is cycling: stop rather than loop forever.
    const seen = new Set<string>(this.#startCursor === undefined ? [] : [this.#startCursor]);
    for (;;) {
      const page = await this.#fetch(cursor);
      yield page;
      if (!page.hasMore || page.cursor === null) return;
      // An empty cursor cannot be sent back (the service's own rule): the walk ends with what it has.
      if (page.cursor === '') {
        this.#logger?.warn('payment-service-sdk: the listing said hasMore but gave an empty cursor; ending the walk', {
          total: page.total,
        });
        return;
      }
      if (seen.has(page.cursor)) {
        throw new ResponseValidationError(`The listing returned cursor ${page.cursor} a second time; stopping to avoid a loop`, {
          body: '',
        });
      }
      seen.add(page.cursor);
      cursor = page.cursor;
    }
  }

  /** Iterates every item of every page. */
  [Symbol.asyncIterator](): AsyncIterableIterator<T, undefined> {
    const pages = this.pages();
    let items: readonly T[] = [];
    let index = 0;
    const nextPage = async (): Promise<IteratorResult<T, undefined>> => {
      for (;;) {
        const page = await pages.next();
        if (page.done) return { done: true, value: undefined };
        items = page.value.items;
        index = 0;
        if (items.length > 0) return { done: false, value: items[index++] as T };
      }
    };
    return {
      // An item of the page in hand resolves at once: a generator's `yield*` would cost several
      // promise turns per item, which is most of a 10 000-item walk's overhead.
      next: () => (index < items.length ? Promise.resolve({ done: false, value: items[index++] as T }) : nextPage()),
      // Leaving a `for await` early closes the page walk, so no further page is fetched.
      return: async () => {
        items = [];
        await pages.return(undefined);
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /** Collects items into an array, stopping after `max` items (default: all of them). */
  async toArray(options: { max?: number } = {}): Promise<T[]> {
    const max = options.max ?? Number.POSITIVE_INFINITY;
    const items: T[] = [];
    if (max <= 0) return items;
    for await (const page of this.pages()) {
      for (const item of page.items) {
        items.push(item);
        if (items.length >= max) return items;
      }
    }
    return items;
  }
}

/**
 * Builds a paginator over a listing endpoint: `fetch` is called with each cursor and the items are
 * read from `data[key]`. This is the one place that knows how the service spells its cursors.
 */
export function paginate<Key extends string, T>(
  key: Key,
  fetch: (cursor: string | undefined) => APIPromise<ListingData<Key, T>>,
  startCursor?: string,
  logger?: Logger,
): Paginator<T> {
  return new Paginator(
    async (cursor) => {
      // Guards matter only with `validateResponses: false`, where the shape is not checked.
      const { data, response } = await fetch(cursor).withResponse();
      const meta = data.meta ?? { cursor: null, hasMore: false, total: 0 };
      return { items: data[key] ?? [], cursor: meta.cursor ?? null, hasMore: meta.hasMore === true, total: meta.total, response };
    },
    startCursor,
    logger,
  );
}
