// The least a keyed create must cost (issue 39): `node:http` and `node:sqlite`, nothing else. Parse
// the JSON, check the fields the reference requires, insert the record and the idempotency entry in
// one transaction (a key seen before answers its stored response), answer the created session as
// JSON. In memory, or in DIR/bare.db (WAL, synchronous NORMAL, as the sandbox's `--data-dir`) with
// `--file DIR`. Prints `{ baseUrl, apiKey, webcode }` as one line, as bench/sandbox-server.mjs does.
import { createServer } from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { file: { type: 'string' } } });
const db = new DatabaseSync(values.file ? `${values.file}/bare.db` : ':memory:');
if (values.file) db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
db.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID;
         CREATE TABLE idempotency (key TEXT PRIMARY KEY, response TEXT NOT NULL) WITHOUT ROWID`);
const stored = db.prepare('SELECT response FROM idempotency WHERE key = ?');
const insertSession = db.prepare('INSERT INTO sessions VALUES (?, ?)');
const insertKey = db.prepare('INSERT INTO idempotency VALUES (?, ?)');
const CURRENCIES = new Set(['EUR', 'GBP', 'USD']);
let next = 0;

function create(body, key) {
  const amount = body?.amount;
  if (
    !Number.isInteger(amount?.value) ||
    !CURRENCIES.has(amount?.currency) ||
    typeof body.urlOk !== 'string' ||
    typeof body.urlKo !== 'string'
  )
    return [400, '{"success":false,"error":{"message":"invalid request","code":12001,"statusCode":400}}'];
  db.exec('BEGIN');
  try {
    const replay = key && stored.get(key);
    if (replay) return [201, replay.response];
    const sessionId = `${body.webcode}-EXTT-${Date.now()}${++next}`;
    const record = { sessionId, status: 'pending', amount, isPreAuth: body.isPreAuth ?? false, createdAt: new Date().toISOString() };
    const response = JSON.stringify({ success: true, data: record });
    insertSession.run(sessionId, JSON.stringify(record));
    if (key) insertKey.run(key, response);
    return [201, response];
  } finally {
    db.exec('COMMIT');
  }
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    let status;
    let text;
    try {
      [status, text] = create(JSON.parse(Buffer.concat(chunks).toString('utf8')), request.headers['idempotency-key']);
    } catch {
      [status, text] = [400, '{"success":false,"error":{"message":"not JSON","code":12001,"statusCode":400}}'];
    }
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  });
});
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ baseUrl: `http://127.0.0.1:${server.address().port}`, apiKey: 'bare', webcode: 'BARE' }));
});
