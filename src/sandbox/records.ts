/** The shapes of the records the sandbox stores (sessions, POS payments, modifications, deliveries, idempotency entries) and its typed reads of them. */
import type { Environment } from '../core/options.js';
import type { FaultEffect } from './faults.js';

/** An amount as stored: integer cents and an ISO 4217 code. */
export interface StoredAmount {
  value: number;
  currency: string;
}

/** One payment attempt on the hosted page. */
export interface AttemptRecord {
  /** Every attempt has a payment reference; only an authorised one becomes the session's. */
  paymentReference: string;
  status: 'authorised' | 'refused' | 'error';
  /** Why a refused attempt failed, from the cardholder-name table. */
  reason: string | null;
  createdAt: number;
}

/** A payment made with the sandbox's controls rather than by a customer on the hosted page. */
export interface ControlPayment {
  /** `dashboard`: its Pay button; `control`: the control API, `sandbox.paySession` or the CLI's `trigger`. */
  from: 'dashboard' | 'control';
  /** The cardholder name it paid as, which decides the outcome as on the page. */
  holderName: string;
}

/** A payment session. Times are Unix milliseconds of the sandbox clock. */
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
  /**
   * When the session stopped being pending: completed (as `completedAt`), failed, cancelled, or
   * expired (at the page's deadline, `openedAt` + 300 s, however late the sandbox noticed). `null` while
   * pending, and for a session cancelled or expired before the sandbox recorded it.
   */
  endedAt: number | null;
  /** Set when the sandbox's controls paid it: there was no customer on the page. */
  controlPayment: ControlPayment | null;
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

/** The stored outcome of a write sent with an `Idempotency-Key`. */
export interface IdempotencyRecord {
  environment: Environment;
  key: string;
  /** The route it was first used on, for example `createSession`. */
  endpoint: string;
  /** SHA-256 of the body in canonical form (keys sorted): the body itself is not kept. */
  bodyHash: string;
  /** `null` while the first request is still running (a POS payment at its terminal). */
  status: number | null;
  /** The stored response body; `null` while running. */
  response: string | null;
  createdAt: number;
}

/** One attempt to deliver a webhook. */
export interface DeliveryAttempt {
  at: number;
  /** The endpoint's HTTP status; `null` when no answer came. */
  status: number | null;
  /** Why no answer came (network error, timeout). */
  error: string | null;
  durationMs: number;
  /** The first 2 KB of the endpoint's answer. */
  responseBody: string | null;
}

/** One webhook delivery and its attempts. */
export interface WebhookDelivery {
  id: number;
  url: string;
  environment: Environment;
  event: { event_code: string; data: Record<string, unknown> };
  attempts: DeliveryAttempt[];
  delivered: boolean;
  /** True when the retries ran out without a 2xx. */
  abandoned: boolean;
  createdAt: number;
  /** The delivery this one resends (the control API's resend), or `null`. */
  resendOf?: number | null | undefined;
  /** The fault rule that duplicated, delayed or dropped this delivery (its attempts carry `X-Sandbox-Fault`), if any. */
  fault?: string | null | undefined;
  /** Held back by a reorder rule: first attempted once the next event of the same payment to the same URL has been. */
  held?: boolean | undefined;
}

/**
 * Where a fault rule struck: an API call that named or made a record (its route), or a webhook
 * event whose deliveries it changed. It shows on the timeline of each record it concerns.
 */
export interface FaultEntry {
  /** Sandbox time, Unix ms. */
  at: number;
  environment: Environment;
  /** The rule's id, as `X-Sandbox-Fault` names it. */
  rule: string;
  /** What the rule did, as it was given. */
  effect: FaultEffect;
  /** The API call it changed, as a route template (`POST /payment/refund`); `null` for a webhook event. */
  route: string | null;
  /** The webhook event it changed (`AUTHORISATION`, `REFUND`); `null` for an API call. */
  event: string | null;
  /** The records it concerns: session ids, POS payment ids, payment and modification references. */
  references: string[];
  /** The deliveries a webhook effect made (duplicated, delayed, dropped or held back); empty for an API call. */
  deliveries: number[];
}

/** Filters of {@link SandboxRecords} listings; every field is optional. */
export interface RecordFilter<Status extends string> {
  environment?: Environment | undefined;
  status?: Status | undefined;
  /** `asc` (creation order, the default) or `desc`. */
  order?: 'asc' | 'desc' | undefined;
  /** At most this many records. Default: all. */
  limit?: number | undefined;
}

/** Typed reads of what the sandbox holds, for tests and tools. Each call reads the store as it is now. */
export interface SandboxRecords {
  sessions(filter?: RecordFilter<SessionRecord['status']>): SessionRecord[];
  session(sessionId: string): SessionRecord | undefined;
  posPayments(filter?: RecordFilter<PosRecord['status']> & { poiId?: string | undefined }): PosRecord[];
  posPayment(posPaymentId: string): PosRecord | undefined;
  modifications(
    filter?: RecordFilter<ModificationRecord['status']> & {
      type?: ModificationRecord['operationType'] | undefined;
      paymentReference?: string | undefined;
    },
  ): ModificationRecord[];
  deliveries(filter?: RecordFilter<'pending' | 'delivered' | 'abandoned'> & { url?: string | undefined }): WebhookDelivery[];
  idempotency(filter?: { environment?: Environment | undefined }): IdempotencyRecord[];
  /** How many records of each kind there are, both environments together. */
  counts(): { sessions: number; posPayments: number; modifications: number; deliveries: number; idempotency: number };
}

/** A record timestamp, `YYYY-MM-DD HH:MM:SS` in UTC. */
export function recordTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ');
}
