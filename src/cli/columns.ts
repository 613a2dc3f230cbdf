/**
 * The CSV columns of each record type, declared once: `sessions list`, `pos list`,
 * `modifications list` and `export` write exactly these, in this order, and a command that prints
 * one record of the type (`sessions get`, `pos pay`, `refund`...) writes them first. They are the
 * documented fields of a listing item, `amount` as `amount.value` and `amount.currency`.
 */

/** Columns of a session (the sessions listing's item). */
export const SESSION_COLUMNS = [
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
] as const;

/** Columns of a POS payment. */
export const POS_COLUMNS = [
  'posPaymentId',
  'paymentReference',
  'poiId',
  'amount.value',
  'amount.currency',
  'status',
  'isPreAuth',
  'pspReference',
  'errorMessage',
  'description',
  'customReference',
  'createdAt',
] as const;

/** Columns of a modification (a refund, capture, cancel or extend, as the modifications listing has it). */
export const MODIFICATION_COLUMNS = [
  'operationReference',
  'operationType',
  'paymentReference',
  'sessionId',
  'status',
  'requestedAt',
  'createdAt',
  'resolvedAt',
  'amount.value',
  'amount.currency',
  'reason',
] as const;
