/**
 * Cursor pagination, per the service reference ("Cursor pagination"): the first request has no
 * `cursor`; while `meta.hasMore` is true the next request passes `meta.cursor`; the walk ends when
 * `hasMore` is false. Every listing endpoint is exercised against a fake listing that serves pages
 * keyed by cursor and records each request.
 */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError, type Paginator, type PaymentClient, PaymentServiceError } from '../src/index.js';
import { client, failure, listing, respond, seen, success, useMsw, WEBCODE } from './support/msw.js';

useMsw();

const amount = { value: 1050, currency: 'EUR' } as const;

/** The page-shaping params every listing takes; each listing adds its own filters. */
interface PageParams {
  take: number;
  cursor?: string;
}

/** One paginated endpoint of the SDK and what its fake needs. */
interface Listing {
  name: string;
  /** Path after `/external/v1/test`. */
  path: string;
  /** Key of the array in `data`. */
  key: string;
  /** Wire record of the n-th item (1-based). */
  item: (n: number) => Record<string, unknown>;
  /** The field that identifies an item. */
  idField: string;
  /** Opens the listing with its filters plus `params`. */
  open: (c: PaymentClient, params: PageParams) => Paginator<object>;
  /** Query parameters (besides webcode, take and cursor) every request must carry. */
  filters: Record<string, string>;
}

const listings: Listing[] = [
  {
    name: 'sessions.list',
    path: '/payment/sessions',
    key: 'payments',
    idField: 'sessionId',
    item: (n) => ({ sessionId: `SHOP1-EXTT-${1700000000 + n}`, status: 'completed', amount, createdAt: '2026-01-01 10:00:00' }),
    open: (c, params) => c.sessions.list({ status: 'completed', ...params }),
    filters: { status: 'completed' },
  },
  {
    name: 'pos.list',
    path: '/pos/payments',
    key: 'posPayments',
    idField: 'posPaymentId',
    item: (n) => {
      const id = `SHOP1-POSXT-${1700000000 + n}`;
      return { posPaymentId: id, paymentReference: id, poiId: 'V400m-TEST-000001', amount, status: 'success' };
    },
    open: (c, params) => c.pos.list({ status: 'success', order: 'desc', createdAtStart: new Date('2026-01-01T00:00:00Z'), ...params }),
    filters: { status: 'success', order: 'desc', created_at_start: '2026-01-01 00:00:00' },
  },
  {
    name: 'modifications.list',
    path: '/modifications',
    key: 'modifications',
    idField: 'operationReference',
    item: (n) => ({
      operationReference: `SHOP1-RFXT-${n}`,
      operationType: 'refund',
      paymentReference: `SHOP1-PXTT-${n}`,
      status: 'success',
      amount,
    }),
    open: (c, params) => c.modifications.list({ type: 'refund', status: 'success', ...params }),
    filters: { type: 'refund', status: 'success' },
  },
];

/** The opaque cursor of the page that starts at item index `offset`. */
const cursorAt = (offset: number) => `cur_${offset.toString(36)}_x`;

type ListingPage = ReturnType<typeof listing>;

/**
 * The pages of a listing of `total` items split by `take`, keyed by the cursor that asks for each
 * page (`''` is the first page, requested without a cursor).
 */
function* generatePages(l: Listing, total: number, take: number): Generator<[string, ListingPage]> {
  for (let offset = 0; offset < total; offset += take) {
    const end = Math.min(offset + take, total);
    const items = Array.from({ length: end - offset }, (_, i) => l.item(offset + i + 1));
    const hasMore = end < total;
    yield [offset === 0 ? '' : cursorAt(offset), listing(l.key, items, { cursor: hasMore ? cursorAt(end) : null, hasMore, total })];
  }
}

/**
 * Serves `pages` (keyed by the `cursor` query parameter, `''` for none). An unknown cursor gets a
 * 400; past `limit` requests the fake answers an empty last page, so a paginator that loops
 * cannot hang the test (its request count gives it away).
 */
function serve(l: Listing, pages: Map<string, ListingPage | Response>, limit = 10): void {
  respond('get', `/external/v1/test${l.path}`, (request, count) => {
    if (count > limit) return success(listing(l.key, [], { cursor: null, hasMore: false, total: 0 }));
    const page = pages.get(new URL(request.url).searchParams.get('cursor') ?? '');
    if (page === undefined) return failure(400, 12001, 'Invalid cursor');
    return page instanceof Response ? page.clone() : success(page);
  });
}

/** Serves `total` items in pages of `take`: 7 items, take 3 → 3 pages. */
function serveItems(l: Listing, total = 7, take = 3): void {
  serve(l, new Map(generatePages(l, total, take)));
}

const ids = (l: Listing, items: object[]) => items.map((item) => (item as Record<string, unknown>)[l.idField]);
const expectedIds = (l: Listing, from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => l.item(from + i)[l.idField]);
/** The `cursor` query parameter of each request made, `null` when absent. */
const sentCursors = () => seen.map((request) => request.url.searchParams.get('cursor'));
const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe.each(listings)('$name', (l) => {
  it('walks every item of every page, following meta.cursor and repeating webcode and filters', async () => {
    serveItems(l);
    const items: object[] = [];
    for await (const item of l.open(client(), { take: 3 })) items.push(item);

    expect(ids(l, items)).toEqual(expectedIds(l, 1, 7));
    expect(sentCursors()).toEqual([null, cursorAt(3), cursorAt(6)]);
    for (const request of seen) {
      expect(request.method).toBe('GET');
      expect(request.url.pathname).toBe(`/external/v1/test${l.path}`);
      expect(request.url.searchParams.getAll('webcode')).toEqual([WEBCODE]);
      expect(request.url.searchParams.getAll('take')).toEqual(['3']);
      for (const [name, value] of Object.entries(l.filters)) expect(request.url.searchParams.getAll(name)).toEqual([value]);
      // Exactly one cursor parameter on follow-up pages, none on the first.
      expect(request.url.searchParams.getAll('cursor').length).toBeLessThanOrEqual(1);
    }
  });

  it('stops fetching when the loop breaks early', async () => {
    serveItems(l);
    const items: object[] = [];
    for await (const item of l.open(client(), { take: 3 })) {
      items.push(item);
      if (items.length === 2) break;
    }
    await tick();
    expect(ids(l, items)).toEqual(expectedIds(l, 1, 2));
    expect(seen).toHaveLength(1);
  });

  it('does not fetch the next page when the loop breaks on the last item of a page', async () => {
    serveItems(l);
    let count = 0;
    for await (const _ of l.open(client(), { take: 3 })) {
      count += 1;
      if (count === 3) break;
    }
    await tick();
    expect(seen).toHaveLength(1);
  });

  it('fetches lazily: nothing on creation, one page at a time while iterating', async () => {
    serveItems(l);
    const paginator = l.open(client(), { take: 3 });
    await tick();
    expect(seen).toHaveLength(0);

    const iterator = paginator[Symbol.asyncIterator]();
    await tick();
    expect(seen).toHaveLength(0);

    await iterator.next();
    expect(seen).toHaveLength(1);
    await iterator.next();
    await iterator.next();
    await tick();
    expect(seen).toHaveLength(1); // items 2 and 3 come from the page already fetched
    await iterator.next();
    expect(seen).toHaveLength(2);
    await iterator.return?.();
  });

  it('pages() yields { items, cursor, hasMore, total } for each page', async () => {
    serveItems(l);
    const pages = [];
    for await (const page of l.open(client(), { take: 3 }).pages()) pages.push(page);

    expect(pages).toEqual([
      { items: [l.item(1), l.item(2), l.item(3)], cursor: cursorAt(3), hasMore: true, total: 7 },
      { items: [l.item(4), l.item(5), l.item(6)], cursor: cursorAt(6), hasMore: true, total: 7 },
      { items: [l.item(7)], cursor: null, hasMore: false, total: 7 },
    ]);
    expect(seen).toHaveLength(3);
  });

  it('firstPage() fetches the first page only', async () => {
    serveItems(l);
    const page = await l.open(client(), { take: 3 }).firstPage();

    expect(page).toEqual({ items: [l.item(1), l.item(2), l.item(3)], cursor: cursorAt(3), hasMore: true, total: 7 });
    await tick();
    expect(sentCursors()).toEqual([null]);
  });

  it('toArray({ max }) stops at max items and fetches no page it does not need', async () => {
    serveItems(l);
    const five = await l.open(client(), { take: 3 }).toArray({ max: 5 });
    expect(ids(l, five)).toEqual(expectedIds(l, 1, 5));
    expect(sentCursors()).toEqual([null, cursorAt(3)]);

    seen.length = 0;
    const three = await l.open(client(), { take: 3 }).toArray({ max: 3 });
    expect(ids(l, three)).toEqual(expectedIds(l, 1, 3));
    expect(seen).toHaveLength(1);
  });

  it('toArray() collects every item', async () => {
    serveItems(l);
    const all = await l.open(client(), { take: 3 }).toArray();
    expect(ids(l, all)).toEqual(expectedIds(l, 1, 7));
    expect(seen).toHaveLength(3);
  });

  it('ends on hasMore: false even when the page carries a cursor', async () => {
    const items = [l.item(1), l.item(2), l.item(3)];
    serve(l, new Map([['', listing(l.key, items, { cursor: cursorAt(3), hasMore: false, total: 3 })]]));
    const all = await l.open(client(), { take: 3 }).toArray();
    expect(ids(l, all)).toEqual(expectedIds(l, 1, 3));
    expect(seen).toHaveLength(1);
  });

  it('ends safely on cursor: null with hasMore: true', async () => {
    const items = [l.item(1), l.item(2), l.item(3)];
    serve(l, new Map([['', listing(l.key, items, { cursor: null, hasMore: true, total: 7 })]]));
    const all = await l.open(client(), { take: 3 }).toArray();
    expect(ids(l, all)).toEqual(expectedIds(l, 1, 3));
    expect(sentCursors()).toEqual([null]);
  });

  it('ends the walk on an empty cursor with hasMore: true, warning through the logger, for await and pages() alike', async () => {
    const [first] = [...generatePages(l, 7, 3)];
    const emptyCursor = listing(l.key, [l.item(4), l.item(5), l.item(6)], { cursor: '', hasMore: true, total: 7 });
    serve(l, new Map([first as [string, ListingPage], [cursorAt(3), emptyCursor]]));
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (message: string) => warnings.push(message), error() {} };
    const items: object[] = [];
    for await (const item of l.open(client({ logger }), { take: 3 })) items.push(item);
    expect(ids(l, items)).toEqual(expectedIds(l, 1, 6));
    expect(sentCursors()).toEqual([null, cursorAt(3)]);
    expect(warnings).toEqual([expect.stringContaining('empty cursor')]);

    const pages = [];
    for await (const page of l.open(client(), { take: 3 }).pages()) pages.push(page);
    expect(pages.map((page) => page.cursor)).toEqual([cursorAt(3), '']);
    // Never a request with an empty cursor.
    expect(sentCursors().filter((cursor) => cursor === '')).toEqual([]);
  });

  it('raises an error instead of looping when the service returns the same cursor again', async () => {
    const [first, second] = [...generatePages(l, 7, 3)];
    const stuck = listing(l.key, [l.item(4), l.item(5), l.item(6)], { cursor: cursorAt(3), hasMore: true, total: 7 });
    serve(l, new Map([first!, [second![0], stuck]]));

    const items: object[] = [];
    const walk = async () => {
      for await (const item of l.open(client(), { take: 3 })) items.push(item);
    };
    const error = await walk().then(
      () => undefined,
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(PaymentServiceError);
    expect(error).not.toBeInstanceOf(InvalidRequestError); // not the fake's own guard
    expect(sentCursors()).toEqual([null, cursorAt(3)]);
    expect(ids(l, items)).toEqual(expectedIds(l, 1, 6));
  });

  it('raises an error instead of looping when cursors cycle (A → B → A)', async () => {
    const page = (from: number, cursor: string) =>
      listing(l.key, [l.item(from), l.item(from + 1), l.item(from + 2)], { cursor, hasMore: true, total: 9 });
    const a = cursorAt(3);
    const b = cursorAt(6);
    serve(
      l,
      new Map([
        ['', page(1, a)],
        [a, page(4, b)],
        [b, page(7, a)], // points back at a page already walked
      ]),
    );

    const error = await l
      .open(client(), { take: 3 })
      .toArray()
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );

    expect(error).toBeInstanceOf(PaymentServiceError);
    expect(error).not.toBeInstanceOf(InvalidRequestError);
    expect(sentCursors()).toEqual([null, a, b]);
  });

  it('rejects with InvalidRequestError on a failing page 2, after yielding page 1', async () => {
    const [first] = [...generatePages(l, 7, 3)];
    serve(l, new Map<string, ListingPage | Response>([first!, [cursorAt(3), failure(400, 12001, 'Invalid cursor value')]]));

    const items: object[] = [];
    const walk = async () => {
      for await (const item of l.open(client(), { take: 3 })) items.push(item);
    };
    const error = await walk().then(
      () => undefined,
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ status: 400, code: 12001, message: 'Invalid cursor value' });
    expect(ids(l, items)).toEqual(expectedIds(l, 1, 3));
    expect(sentCursors()).toEqual([null, cursorAt(3)]); // a 400 is not retried
  });

  it('starts at a caller-provided cursor and follows the service from there', async () => {
    serveItems(l);
    const all = await l.open(client(), { take: 3, cursor: cursorAt(3) }).toArray();

    expect(ids(l, all)).toEqual(expectedIds(l, 4, 7));
    expect(sentCursors()).toEqual([cursorAt(3), cursorAt(6)]);
    for (const request of seen) expect(request.url.searchParams.getAll('cursor')).toHaveLength(1);
  });
});
