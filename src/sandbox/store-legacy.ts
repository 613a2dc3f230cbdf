/**
 * The JSON state file of earlier versions (`sandbox-state.json`), read once into a new store: its
 * records, stored answers and counters, the file itself left as it was.
 */
import type { Environment } from '../core/options.js';
import type { IdempotencyRecord, ModificationRecord, PosRecord, SessionRecord, WebhookDelivery } from './records.js';

/** What the state file held. */
export interface LegacyState {
  sessions?: (Omit<SessionRecord, 'attempts' | 'endedAt' | 'controlPayment'> & {
    attempts?: (Omit<SessionRecord['attempts'][number], 'paymentReference'> & { paymentReference: string | null })[];
  })[];
  posPayments?: PosRecord[];
  modifications?: ModificationRecord[];
  idempotency?: Partial<Record<Environment, Record<string, { endpoint: string; body: string; status: number; response: string }>>>;
  deliveries?: (Omit<WebhookDelivery, 'attempts' | 'createdAt'> & {
    attempts: { at: number; status: number | null; error: string | null }[];
  })[];
  counters?: { reference?: number; lastTimestamp?: number };
}

/** Where the state goes: the store's tables, and its counters raised to what the file had given out. */
export interface LegacyTarget {
  sessions: { save(record: SessionRecord): void };
  posPayments: { save(record: PosRecord): void };
  modifications: { save(record: ModificationRecord): void };
  deliveries: { save(record: WebhookDelivery): void };
  idempotency: { save(entry: IdempotencyRecord): void };
  /** Sets counter `name` to `value` when it is below it. */
  raiseCounter(name: string, value: number): void;
  /** How the store hashes a request body. */
  hash(text: string): string;
}

/** The state in `text`: a JSON object, or nothing for an empty file; throws when it is neither. */
export function parseLegacyState(text: string): LegacyState {
  const state = text.trim() === '' ? {} : (JSON.parse(text) as LegacyState);
  if (typeof state !== 'object' || state === null || Array.isArray(state)) throw new Error('not a JSON object');
  return state;
}

/** Copies `state` into `target`, in the caller's transaction. */
export function importLegacyState(state: LegacyState, target: LegacyTarget): void {
  for (const session of state.sessions ?? []) {
    let attempt = 0;
    const attempts = (session.attempts ?? []).map((item) => ({
      ...item,
      paymentReference: item.paymentReference ?? `${session.sessionId}-A${++attempt}`,
    }));
    // Their end times come from the store's SESSION_ENDS, run after the import.
    target.sessions.save({ ...session, attempts, endedAt: null, controlPayment: null });
  }
  for (const payment of state.posPayments ?? []) target.posPayments.save(payment);
  for (const modification of state.modifications ?? []) target.modifications.save(modification);
  for (const delivery of state.deliveries ?? []) {
    target.deliveries.save({
      ...delivery,
      createdAt: delivery.attempts[0]?.at ?? 0,
      attempts: delivery.attempts.map((item) => ({ durationMs: 0, responseBody: null, ...item })),
    });
  }
  for (const environment of ['test', 'live'] as const) {
    for (const [key, entry] of Object.entries(state.idempotency?.[environment] ?? {})) {
      const { endpoint, status, response } = entry;
      // Entries of the JSON store had no age: they count from the import.
      target.idempotency.save({ environment, key, endpoint, bodyHash: target.hash(entry.body), status, response, createdAt: Date.now() });
    }
  }
  if (state.counters) {
    target.raiseCounter('reference', state.counters.reference ?? 0);
    target.raiseCounter('lastTimestamp', state.counters.lastTimestamp ?? 0);
    target.raiseCounter('delivery', Math.max(0, ...(state.deliveries ?? []).map((delivery) => delivery.id)));
  }
}
