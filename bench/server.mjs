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

// The memory walk (webcode BIG1): 1 000 pages of 100, built per request so the server holds none.
const BIG_PAGES = 1_000;
function bigPage(page) {
  const payments = Array.from({ length: 100 }, (_, index) => {
    const { urlOk, urlKo, attempts, metadata, countryCode, shopperLocale, ...item } = session(page * 100 + index);
    return item;
  });
  const hasMore = page + 1 < BIG_PAGES;
  return JSON.stringify({
    success: true,
    data: { payments, meta: { cursor: hasMore ? `p${page + 1}` : null, hasMore, total: BIG_PAGES * 100 } },
  });
}

// The peers' comparable GETs: a ~1 KB record each, shaped as their APIs answer.
const stripeCustomerBody = JSON.stringify({
  id: 'cus_bench',
  object: 'customer',
  address: null,
  balance: 0,
  created: 1767261600,
  currency: 'eur',
  default_source: null,
  delinquent: false,
  description: 'Order with a description long enough to make the record about one kilobyte in all',
  email: 'jane@shop.example',
  invoice_prefix: 'ABC123',
  invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
  livemode: false,
  metadata: { channel: 'web', device: 'desktop', campaign: 'autumn-sale-2026', note: 'x'.repeat(300) },
  name: 'Jane Tester',
  next_invoice_sequence: 1,
  phone: null,
  preferred_locales: ['es-ES'],
  shipping: null,
  tax_exempt: 'none',
  test_clock: null,
});
const openaiModelBody = JSON.stringify({
  id: 'model-bench',
  object: 'model',
  created: 1767261600,
  owned_by: 'bench',
  description: 'Order with a description long enough to make the record about one kilobyte in all',
  metadata: { channel: 'web', device: 'desktop', campaign: 'autumn-sale-2026', note: 'x'.repeat(500) },
});

createServer((request, response) => {
  const url = new URL(request.url, 'http://127.0.0.1');
  let body = retrieveBody;
  let status = 200;
  if (request.method === 'POST') {
    request.resume();
    body = createBody;
    status = 201;
  } else if (url.pathname.startsWith('/v1/customers/')) {
    body = stripeCustomerBody;
  } else if (url.pathname.startsWith('/models/')) {
    body = openaiModelBody;
  } else if (url.pathname.endsWith('/payment/sessions')) {
    const page = Number((url.searchParams.get('cursor') ?? 'p0').slice(1));
    body = url.searchParams.get('webcode') === 'BIG1' ? bigPage(page) : pageBodies[page];
  }
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}).listen(0, '127.0.0.1', function () {
  console.log(`http://127.0.0.1:${this.address().port}`);
});
