// Peak RSS while `for await` walks 100 000 sessions (1 000 pages of 100), in a fresh process so that
// nothing else in the bench shares its heap, and the heap after a full GC every 10 000 items: flat
// if the paginator holds one page at a time. Prints one JSON line.
// Usage: node --expose-gc memory.mjs <baseUrl> [sdk | raw]
import { PaymentClient } from '../dist/index.mjs';

const client = new PaymentClient({ apiKey: 'sk_test_bench', webcode: 'BIG1', baseUrl: process.argv[2] });
const mb = (bytes) => Math.round((bytes / 1e6) * 10) / 10;
let items = 0;
let peakRss = 0;
let peakHeap = 0;
let at10k;
const retainedMB = [];
const rssMB = [];
/** The same walk by hand, to tell the SDK's memory from fetch's: `node memory.mjs <baseUrl> raw`. */
async function* rawWalk(baseUrl) {
  let cursor;
  do {
    const url = `${baseUrl}/external/v1/test/payment/sessions?webcode=BIG1&take=100${cursor ? `&cursor=${cursor}` : ''}`;
    const { data } = JSON.parse(await (await fetch(url, { headers: { 'x-api-key': 'sk_test_bench' } })).text());
    yield* data.payments;
    cursor = data.meta.hasMore ? data.meta.cursor : undefined;
  } while (cursor);
}
const walk = process.argv[3] === 'raw' ? rawWalk(process.argv[2]) : client.sessions.list({ take: 100 });
for await (const item of walk) {
  items += item.amount.value > 0 ? 1 : 0;
  if (items % 100 === 0) {
    const { rss, heapUsed } = process.memoryUsage();
    peakRss = Math.max(peakRss, rss);
    peakHeap = Math.max(peakHeap, heapUsed);
    if (items === 10_000) at10k = { rssMB: mb(rss), heapUsedMB: mb(heapUsed) };
    if (items % 10_000 === 0) {
      globalThis.gc();
      retainedMB.push(mb(process.memoryUsage().heapUsed));
      rssMB.push(mb(rss));
    }
  }
}
console.log(
  JSON.stringify({
    items,
    at10k,
    peak: { rssMB: mb(peakRss), heapUsedMB: mb(peakHeap) },
    heapAfterGcEvery10kMB: retainedMB,
    rssEvery10kMB: rssMB,
  }),
);
