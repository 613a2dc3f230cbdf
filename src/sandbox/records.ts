import type { Environment } from '../core/options.js';

/** An amount as stored: integer cents and an ISO 4217 code. */
export interface StoredAmount {
  value: number;
  currency: string;
}

/** One payment attempt on the hosted page. */
export interface AttemptRecord {
  paymentReference: string | null;
  status: 'authorised' | 'refused' | 'error';
  /** Why a refused attempt failed, from the cardholder-name table. */
  reason: string | null;
  createdAt: number;
}

/** A payment session. */
export interface SessionRecord {
  environment: Environment;
  sessionId: string;
  /** The token of its `paymentUrl`. */
  token: string;
  status: 'pending' | 'completed' | 'failed' | 'expired' | 'cancelled';
  amount: StoredAmount;
  countryCode: string;
  shopperLocale: string;
  deliverAt: string | null;
  description: string | null;
  customReference: string | null;
  isPreAuth: boolean;
  urlOk: string;
  urlKo: string;
  createdAt: number;
  /** When the customer first opened `paymentUrl`; the 300 s countdown starts here. */
  openedAt: number | null;
  completedAt: number | null;
  paymentReference: string | null;
  paymentStatus: string | null;
  attempts: AttemptRecord[];
}

/** A POS payment. */
export interface PosRecord {
  environment: Environment;
  posPaymentId: string;
  poiId: string;
  amount: StoredAmount;
  status: 'pending' | 'success' | 'failed' | 'timeout';
  isPreAuth: boolean;
  pspReference: string | null;
  errorMessage: string | null;
  description: string | null;
  customReference: string | null;
  createdAt: number;
}

/** A refund, capture, cancel or extend. */
export interface ModificationRecord {
  environment: Environment;
  operationReference: string;
  operationType: 'refund' | 'capture' | 'cancel' | 'extend';
  paymentReference: string;
  sessionId: string;
  status: 'pending' | 'received' | 'success' | 'failed';
  requestedAt: number;
  createdAt: number;
  resolvedAt: number | null;
  amount: StoredAmount | null;
  reason: string | null;
}

/** A stored response for an `Idempotency-Key`. */
export interface IdempotencyRecord {
  endpoint: string;
  body: string;
  status: number;
  response: string;
}

/** One webhook delivery and its attempts. */
export interface WebhookDelivery {
  id: number;
  url: string;
  environment: Environment;
  event: { event_code: string; data: Record<string, unknown> };
  attempts: { at: number; status: number | null; error: string | null }[];
  delivered: boolean;
  /** True when the retries ran out without a 2xx. */
  abandoned: boolean;
}

/** Everything the sandbox keeps, as plain JSON (the `--data-dir` file). */
export interface SandboxState {
  sessions: SessionRecord[];
  posPayments: PosRecord[];
  modifications: ModificationRecord[];
  /** Stored responses by environment and key. */
  idempotency: Record<Environment, Record<string, IdempotencyRecord>>;
  deliveries: WebhookDelivery[];
  /** Counters behind `{number}` references and the monotonic timestamps of ids. */
  counters: { reference: number; lastTimestamp: number; delivery: number };
}

/** An empty state. */
export function emptyState(): SandboxState {
  return {
    sessions: [],
    posPayments: [],
    modifications: [],
    idempotency: { test: {}, live: {} },
    deliveries: [],
    counters: { reference: 1000, lastTimestamp: 0, delivery: 0 },
  };
}

/** A record timestamp, `YYYY-MM-DD HH:MM:SS` in UTC. */
export function recordTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ');
}
