// The baseline of the CLI export section: the CSV that `payment-service-sdk export sessions
// --format csv --out FILE` writes, by a hand-written loop (raw fetch page by page, `take` 100, the
// same columns and RFC 4180 quoting, a page written as one chunk, 'drain' awaited), in a process of
// its own as the bin is. Prints one JSON line: the rows written and the milliseconds the walk took.
// Usage: node export-raw.mjs <baseUrl> <apiKey> <webcode> <file>
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

const [baseUrl, apiKey, webcode, file] = process.argv.slice(2);
const COLUMNS = [
  'sessionId',
  'status',
  'amount.value',
  'amount.currency',
  'description',
  'customReference',
  'isPreAuth',
  'createdAt',
  'completedAt',
  'paymentReference',
  'paymentStatus',
];
const field = (value) => {
  const text = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};
const line = (values) => `${values.map(field).join(',')}\r\n`;
const getters = COLUMNS.map((column) => {
  const [outer, inner] = column.split('.');
  return inner === undefined ? (item) => item[outer] : (item) => item[outer]?.[inner];
});

const started = performance.now();
// `flush`: synced to disk before it closes, as the CLI does with --out.
const out = createWriteStream(file, { highWaterMark: 256 * 1024, flush: true });
let chunk = line(COLUMNS);
let rows = 0;
let cursor;
for (;;) {
  const url = `${baseUrl}/external/v1/test/payment/sessions?webcode=${webcode}&take=100${cursor ? `&cursor=${cursor}` : ''}`;
  const response = await fetch(url, { headers: { 'x-api-key': apiKey, accept: 'application/json' } });
  const body = JSON.parse(await response.text());
  if (!response.ok || body.success !== true) throw new Error(`the sandbox answered ${response.status}`);
  for (const item of body.data.payments) chunk += line(getters.map((get) => get(item)));
  rows += body.data.payments.length;
  if (!out.write(chunk)) await once(out, 'drain');
  chunk = '';
  if (!body.data.meta.hasMore) break;
  cursor = body.data.meta.cursor;
}
out.end();
await once(out, 'close');
console.log(JSON.stringify({ rows, ms: performance.now() - started }));
