// The least the sandbox's requests must cost (issue 39): `node:http` and `node:sqlite`, nothing else.
// - POST .../payment/session (keyed): parse the JSON, check the fields the reference requires, insert
//   the record and the idempotency entry in one transaction (a key seen before answers its stored
//   response), answer the created session (with its payment page's URL) as JSON.
// - POST /pay/{token}, the payment page's form: parse it, check the card fields, mark the session
//   paid in one transaction, sign the redirect's `data` (HS256), answer 303 to urlOk.
// - POST .../payment/refund (keyed): check the fields, read the payment, check the amount left,
//   insert the refund and the idempotency entry and update the payment in one transaction, answer 202.
// In memory, or in DIR/bare.db (WAL, synchronous NORMAL, as the sandbox's `--data-dir`) with
// `--file DIR`. Prints `{ baseUrl, apiKey, webcode }` as one line, as bench/sandbox-server.mjs does.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { file: { type: 'string' } } });
const db = new DatabaseSync(values.file ? `${values.file}/bare.db` : ':memory:');
if (values.file) db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
db.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, token TEXT NOT NULL UNIQUE, reference TEXT UNIQUE, record TEXT NOT NULL);
         CREATE TABLE refunds (reference TEXT PRIMARY KEY, payment TEXT NOT NULL, record TEXT NOT NULL);
         CREATE TABLE idempotency (key TEXT PRIMARY KEY, response TEXT NOT NULL) WITHOUT ROWID`);
const stored = db.prepare('SELECT response FROM idempotency WHERE key = ?');
const insertKey = db.prepare('INSERT INTO idempotency VALUES (?, ?)');
const insertSession = db.prepare('INSERT INTO sessions VALUES (?, ?, NULL, ?)');
const byToken = db.prepare('SELECT id, record FROM sessions WHERE token = ?');
const byReference = db.prepare('SELECT id, record FROM sessions WHERE reference = ?');
const updateSession = db.prepare('UPDATE sessions SET reference = ?, record = ? WHERE id = ?');
const insertRefund = db.prepare('INSERT INTO refunds VALUES (?, ?, ?)');
const CURRENCIES = new Set(['EUR', 'GBP', 'USD']);
const SECRET = 'cs_test_bare';
let next = 0;
const failure = (status, message) => [status, `{"success":false,"error":{"message":"${message}","code":12001,"statusCode":${status}}}`];
const validAmount = (amount) => Number.isInteger(amount?.value) && amount.value > 0 && CURRENCIES.has(amount?.currency);

/** `work` in one transaction, answering the response stored under `key` instead when there is one. */
function keyed(key, work) {
  db.exec('BEGIN');
  try {
    const replay = key && stored.get(key);
    if (replay) return [200, replay.response];
    const [status, text] = work();
    if (key && status < 300) insertKey.run(key, text);
    return [status, text];
  } finally {
    db.exec('COMMIT');
  }
}

function create(body, key, origin) {
  if (!validAmount(body?.amount) || typeof body.urlOk !== 'string' || typeof body.urlKo !== 'string')
    return failure(400, 'invalid request');
  return keyed(key, () => {
    const sessionId = `${body.webcode}-EXTT-${Date.now()}${++next}`;
    const token = randomBytes(16).toString('hex');
    const record = {
      sessionId,
      status: 'pending',
      amount: body.amount,
      urlOk: body.urlOk,
      refunded: 0,
      createdAt: new Date().toISOString(),
    };
    insertSession.run(sessionId, token, JSON.stringify(record));
    return [201, JSON.stringify({ success: true, data: { ...record, paymentUrl: `${origin}/pay/${token}` } })];
  });
}

function refund(body, key) {
  if (typeof body?.paymentReference !== 'string' || !validAmount(body.amount)) return failure(400, 'invalid request');
  return keyed(key, () => {
    const row = byReference.get(body.paymentReference);
    if (!row) return failure(404, 'payment not found');
    const payment = JSON.parse(row.record);
    if (payment.refunded + body.amount.value > payment.amount.value) return failure(400, 'amount over what is left');
    payment.refunded += body.amount.value;
    const refundReference = `${body.webcode}-RFXT-${++next}`;
    const record = {
      refundReference,
      paymentReference: body.paymentReference,
      amount: body.amount,
      status: 'pending',
      createdAt: new Date().toISOString(),
    };
    insertRefund.run(refundReference, body.paymentReference, JSON.stringify(record));
    updateSession.run(body.paymentReference, JSON.stringify(payment), row.id);
    return [202, JSON.stringify({ success: true, data: record })];
  });
}

/** HS256 JWT of `claims`, as the redirect's `data`. */
function signed(claims) {
  const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${unsigned}.${createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`;
}

function pay(token, text) {
  const form = new URLSearchParams(text);
  const card = (form.get('cardNumber') ?? '').replace(/\s/g, '');
  if (!/^\d{13,19}$/.test(card) || !/^\d{1,2}$/.test(form.get('expiryMonth') ?? '') || !/^\d{3,4}$/.test(form.get('cvc') ?? ''))
    return [422, 'card refused', {}];
  db.exec('BEGIN');
  try {
    const row = byToken.get(token);
    if (!row) return [404, 'no such page', {}];
    const session = JSON.parse(row.record);
    if (session.status !== 'pending') return [409, 'not pending', {}];
    const reference = `BARE-PAYT-${++next}`;
    Object.assign(session, { status: 'completed', paymentReference: reference, completedAt: new Date().toISOString() });
    updateSession.run(reference, JSON.stringify(session), row.id);
    const data = signed({ paymentReference: reference, sessionId: session.sessionId, amount: session.amount.value, status: 'AUTHORISED' });
    return [303, '', { location: `${session.urlOk}?data=${data}` }];
  } finally {
    db.exec('COMMIT');
  }
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    let answer;
    if (request.url.startsWith('/pay/')) {
      const [status, body, headers] = pay(request.url.slice('/pay/'.length), text);
      answer = [status, body, headers];
    } else {
      try {
        const body = JSON.parse(text);
        const key = request.headers['idempotency-key'];
        answer = request.url.endsWith('/payment/refund') ? refund(body, key) : create(body, key, `http://${request.headers.host}`);
      } catch {
        answer = failure(400, 'not JSON');
      }
    }
    const [status, body, headers = { 'content-type': 'application/json' }] = answer;
    response.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ baseUrl: `http://127.0.0.1:${server.address().port}`, apiKey: 'bare', webcode: 'BARE' }));
});
