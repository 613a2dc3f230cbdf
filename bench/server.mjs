// The loopback service the benchmarks call, in its own process so that it does not share the
// measured event loop. Prints its base URL as one line.
import { createServer } from 'node:http';

const amount = { value: 2599, currency: 'EUR' };
const session = (id) => ({
  sessionId: `SHOP1-EXTT-${id}`,
  status: 'completed',
  amount,
  countryCode: 'ES',
  shopperLocale: 'es-ES',
  description: 'Order with a description long enough to make the record about one kilobyte in all',
  customReference: `order-${id}`,
  isPreAuth: false,
  urlOk: 'https://shop.example/payments/ok?order=12345',
  urlKo: 'https://shop.example/payments/ko?order=12345',
  createdAt: '2026-01-01 10:00:00',
  paymentReference: `SHOP1-PXTT-${id}`,
  completedAt: '2026-01-01 10:01:00',
  paymentStatus: 'AUTHORISED',
  attempts: [{ paymentReference: `SHOP1-PXTT-${id}`, status: 'authorised', createdAt: '2026-01-01 10:01:00' }],
  metadata: { channel: 'web', device: 'desktop', campaign: 'autumn-sale-2026', note: 'x'.repeat(300) },
});
const retrieveBody = JSON.stringify({ success: true, data: session(1700000000) });
const createBody = JSON.stringify({
  success: true,
  data: {
    sessionId: 'SHOP1-EXTT-1700000001',
    paymentUrl: 'http://127.0.0.1/pay-external-test/abc',
    status: 'pending',
    amount,
    createdAt: '2026-01-01 10:00:00',
  },
});
const PAGES = 100;
const pageBodies = Array.from({ length: PAGES }, (_, page) =>
  JSON.stringify({
    success: true,
    data: {
      payments: Array.from({ length: 100 }, (_, index) => {
        const { urlOk, urlKo, attempts, metadata, countryCode, shopperLocale, ...item } = session(page * 100 + index);
        return item;
      }),
      meta: { cursor: page + 1 < PAGES ? `p${page + 1}` : null, hasMore: page + 1 < PAGES, total: PAGES * 100 },
    },
  }),
);

createServer((request, response) => {
  const url = new URL(request.url, 'http://127.0.0.1');
  let body = retrieveBody;
  let status = 200;
  if (request.method === 'POST') {
    request.resume();
    body = createBody;
    status = 201;
  } else if (url.pathname.endsWith('/payment/sessions')) {
    body = pageBodies[Number((url.searchParams.get('cursor') ?? 'p0').slice(1))];
  }
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}).listen(0, '127.0.0.1', function () {
  console.log(`http://127.0.0.1:${this.address().port}`);
});
