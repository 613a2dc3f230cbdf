/**
 * The sandbox database's schema: its forward migrations (`PRAGMA user_version`), and the request
 * log's table, which a store without a data folder makes again in its private file.
 */

/**
 * Gives sessions stored before the sandbox recorded their end what their record shows: completed at
 * `completedAt`, failed at the last attempt, expired at the page's deadline (opened + 300 s; an
 * "Expire now" of then is not told apart), cancelled at an unknown time (`null`); none paid by the
 * controls, which were not recorded either. Run on sessions that have no end time yet.
 */
export const SESSION_ENDS = `UPDATE sessions SET record = json_set(record,
     '$.endedAt', CASE status
       WHEN 'completed' THEN json_extract(record, '$.completedAt')
       WHEN 'failed' THEN (SELECT max(json_extract(value, '$.createdAt')) FROM json_each(record, '$.attempts'))
       WHEN 'expired' THEN json_extract(record, '$.openedAt') + 300000
     END,
     '$.controlPayment', NULL)
   WHERE ended_at IS NULL;
   UPDATE sessions SET ended_at = json_extract(record, '$.endedAt') WHERE ended_at IS NULL;`;

/** Where the request log's newest entries wait for their batch (see `SandboxStore.requestLogStaged`). */
export const STAGED_REQUEST_LOG = 'stage.request_log_staged';

/**
 * The request log's table as migrations 7 and 8 leave it, named `name` (`log.request_log` in the
 * temporary file of an in-memory store); `staged`, its staging table, whose numbers the log gives.
 */
export function requestLogTable(name: string, staged = false): string {
  return `CREATE TABLE ${name} (
     seq INTEGER PRIMARY KEY ${staged ? '' : 'AUTOINCREMENT'}, environment TEXT NOT NULL, at INTEGER NOT NULL, method TEXT NOT NULL,
     operation TEXT, status INTEGER NOT NULL, idempotency_key TEXT, trace_id TEXT, refs TEXT NOT NULL, record TEXT NOT NULL,
     request_headers TEXT, request_body TEXT, response_body TEXT);`;
}

/**
 * Forward migrations: entry `n` brings a database from version `n` to `n + 1`
 * (`PRAGMA user_version`). Append only.
 */
export const MIGRATIONS = [
  `CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
   INSERT INTO counters (name, value) VALUES ('reference', 1000), ('lastTimestamp', 0), ('delivery', 0), ('runs', 0);
   CREATE TABLE sessions (
     seq INTEGER PRIMARY KEY, session_id TEXT NOT NULL UNIQUE, environment TEXT NOT NULL, status TEXT NOT NULL,
     token TEXT NOT NULL UNIQUE, payment_reference TEXT UNIQUE, created_at INTEGER NOT NULL, record TEXT NOT NULL);
   CREATE INDEX sessions_by_status ON sessions (environment, status);
   CREATE TABLE pos_payments (
     seq INTEGER PRIMARY KEY, pos_payment_id TEXT NOT NULL UNIQUE, environment TEXT NOT NULL, status TEXT NOT NULL,
     poi_id TEXT NOT NULL, created_at INTEGER NOT NULL, record TEXT NOT NULL);
   CREATE INDEX pos_payments_by_status ON pos_payments (environment, status);
   CREATE INDEX pos_payments_by_time ON pos_payments (environment, created_at);
   CREATE INDEX pos_payments_by_terminal ON pos_payments (poi_id, status);
   CREATE TABLE modifications (
     seq INTEGER PRIMARY KEY, operation_reference TEXT NOT NULL UNIQUE, environment TEXT NOT NULL, status TEXT NOT NULL,
     operation_type TEXT NOT NULL, payment_reference TEXT NOT NULL, session_id TEXT NOT NULL,
     created_at INTEGER NOT NULL, record TEXT NOT NULL);
   CREATE INDEX modifications_by_type ON modifications (environment, operation_type, status);
   CREATE INDEX modifications_by_status ON modifications (environment, status);
   CREATE INDEX modifications_by_payment ON modifications (payment_reference);
   CREATE INDEX modifications_by_session ON modifications (session_id);
   CREATE TABLE deliveries (
     seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, environment TEXT NOT NULL, status TEXT NOT NULL,
     url TEXT NOT NULL, created_at INTEGER NOT NULL, record TEXT NOT NULL);
   CREATE INDEX deliveries_by_status ON deliveries (environment, status);
   CREATE TABLE idempotency (
     environment TEXT NOT NULL, key TEXT NOT NULL, endpoint TEXT NOT NULL, body_hash TEXT NOT NULL,
     status INTEGER, response TEXT, created_at INTEGER NOT NULL, PRIMARY KEY (environment, key)) WITHOUT ROWID;
   CREATE INDEX idempotency_by_age ON idempotency (created_at);
   CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, due_at INTEGER NOT NULL, subject TEXT NOT NULL);
   CREATE INDEX jobs_by_due ON jobs (due_at);`,
  // Unfiltered listings of one environment walk these in cursor (rowid) order, with no sort step.
  `CREATE INDEX sessions_by_environment ON sessions (environment);
   CREATE INDEX pos_payments_by_environment ON pos_payments (environment);
   CREATE INDEX modifications_by_environment ON modifications (environment);
   CREATE INDEX deliveries_by_environment ON deliveries (environment);`,
  // How far the sandbox clock was moved ahead (the control API's advance); deliveries by payment,
  // for a record's timeline.
  `INSERT INTO counters (name, value) VALUES ('clockOffset', 0);
   ALTER TABLE deliveries ADD COLUMN payment_reference TEXT;
   UPDATE deliveries SET payment_reference = json_extract(record, '$.event.data.paymentReference');
   CREATE INDEX deliveries_by_payment ON deliveries (payment_reference);`,
  // When each session ended (expired, cancelled, failed, completed).
  `ALTER TABLE sessions ADD COLUMN ended_at INTEGER;
   ${SESSION_ENDS}`,
  // Where fault rules struck, found by the references of the records they concern (a timeline's).
  `CREATE TABLE fault_entries (seq INTEGER PRIMARY KEY, environment TEXT NOT NULL, record TEXT NOT NULL);
   CREATE TABLE fault_subjects (reference TEXT NOT NULL, entry INTEGER NOT NULL, PRIMARY KEY (reference, entry)) WITHOUT ROWID;`,
  // Deliveries held back by a reorder rule, found without reading every delivery of their payment;
  // jobs under way (claimed), so that finding due work never reads them again.
  `ALTER TABLE deliveries ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
   UPDATE deliveries SET held = 1 WHERE json_extract(record, '$.held') = 1;
   CREATE INDEX deliveries_held ON deliveries (held, payment_reference);
   ALTER TABLE jobs ADD COLUMN claimed INTEGER NOT NULL DEFAULT 0;
   CREATE INDEX jobs_unclaimed ON jobs (claimed, due_at);`,
  // The request log (request-log/store.ts): what each request to the API sent and got back. Its
  // columns are what its filters read; the entry is the JSON of the last column, read only for the
  // rows answered. AUTOINCREMENT: a number is never given twice, even once its rows are deleted.
  `CREATE TABLE request_log (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, environment TEXT NOT NULL, at INTEGER NOT NULL, method TEXT NOT NULL,
     operation TEXT, status INTEGER NOT NULL, idempotency_key TEXT, trace_id TEXT, refs TEXT NOT NULL, record TEXT NOT NULL);`,
  // The headers and bodies in columns of their own: bodies kept as they are, not escaped again inside
  // the entry's JSON, and the rest of the entry ASCII, which V8 writes twice as fast (a masked key's
  // `…` is not). Rows written before keep theirs in `record` (these columns NULL).
  `ALTER TABLE request_log ADD COLUMN request_headers TEXT;
   ALTER TABLE request_log ADD COLUMN request_body TEXT;
   ALTER TABLE request_log ADD COLUMN response_body TEXT;`,
  // Each simulated terminal's own processing time (store-tables.ts), per environment. IF NOT EXISTS: the tests
  // of older databases set the version back without dropping what later versions made.
  `CREATE TABLE IF NOT EXISTS terminal_settings (
     environment TEXT NOT NULL, poi_id TEXT NOT NULL, processing_ms INTEGER NOT NULL, PRIMARY KEY (environment, poi_id)) WITHOUT ROWID;`,
  // Each simulated terminal's connectivity where it was set (online or offline), per environment.
  `CREATE TABLE IF NOT EXISTS terminal_connectivity (
     environment TEXT NOT NULL, poi_id TEXT NOT NULL, online INTEGER NOT NULL, PRIMARY KEY (environment, poi_id)) WITHOUT ROWID;`,
];
