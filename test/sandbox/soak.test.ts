/**
 * The soak the sandbox exists for: the SDK, with its default retries and POS recovery, makes a few
 * thousand write calls on every write route over real HTTP on 127.0.0.1 while fault rules strike
 * at random (errors before and after the commit, resets, 429 with `Retry-After`, cut bodies,
 * latency). At the end every logical call made exactly one record (after the calls that finally
 * failed are sent again with their key), every success named its own record, and every rule struck.
 * `SOAK_CALLS=20000 npx vitest run test/sandbox/soak.test.ts` runs a bigger soak (default 2 000).
 */
import { describe, expect, it } from 'vitest';
import {
  ConnectionError,
  PaymentClient,
  type PaymentServiceError,
  PosPaymentPendingError,
  RateLimitError,
  ServerError,
} from '../../src/index.js';
import type { FaultEffect, Sandbox } from '../../src/sandbox/index.js';
import { TEST_TERMINALS } from '../../src/testing/index.js';
import { clientFor, sessionParams, useSandboxes } from './support.js';

const { start } = useSandboxes();

const CALLS = Number(process.env.SOAK_CALLS ?? 2_000);
const WORKERS = 64;
/** Share of the calls per route; each modification call acts on a payment made beforehand. */
const MIX = { session: 0.25, refund: 0.15, capture: 0.15, extend: 0.15, cancel: 0.15, pos: 0.15 } as const;
type Kind = keyof typeof MIX;
const ROUTES: Record<Kind, string> = {
  session: 'POST /payment/session',
  refund: 'POST /payment/refund',
  capture: 'POST /payment/capture',
  extend: 'POST /payment/extend',
  cancel: 'POST /payment/cancel',
  pos: 'POST /pos/payment',
};
/** Calls per refunded, captured or extended payment. */
const PER_PAYMENT = 4;
/**
 * Every effect an API call can suffer, each rule striking a few percent of the attempts on its
 * route: with 300 calls or more per route, each strikes ten times or so, and none fails to strike.
 */
const EFFECTS: Array<{ probability: number; effect: FaultEffect }> = [
  { probability: 0.1, effect: { type: 'latency', ms: [0, 5] } },
  { probability: 0.04, effect: { type: 'error', status: 503, when: 'before' } },
  { probability: 0.03, effect: { type: 'reset', when: 'before' } },
  { probability: 0.03, effect: { type: 'error', status: 502, when: 'before' } },
  { probability: 0.03, effect: { type: 'error', status: 429, when: 'before', retryAfter: 0 } },
  { probability: 0.03, effect: { type: 'error', status: 429, when: 'before', retryAfter: 1 } },
  { probability: 0.04, effect: { type: 'error', status: 500, when: 'after-commit' } },
  { probability: 0.04, effect: { type: 'reset', when: 'after-commit' } },
  { probability: 0.03, effect: { type: 'error', status: 504, when: 'after-commit' } },
  { probability: 0.03, effect: { type: 'truncate' } },
];

interface Call {
  kind: Kind;
  index: number;
  /** What identifies the call's record: the session's or POS payment's `customReference`, the modification's payment and amount. */
  customReference: string;
  paymentReference?: string;
  amount: number;
  /** The record's id the call was answered with: `sessionId`, the operation reference, `posPaymentId`. */
  answered?: string;
  error?: unknown;
  /** The id after the failed call was sent again with its key, and whether the sandbox replayed it. */
  resent?: { id: string; replayed: boolean };
}

/** Payments made before the faults: paid sessions to refund, open pre-authorisations to capture, extend and cancel. */
async function paidPayments(sandbox: Sandbox, client: PaymentClient, count: number, isPreAuth: boolean): Promise<string[]> {
  const pay = async () => {
    const session = await client.sessions.create({ ...sessionParams, amount: { value: 100_000, currency: 'EUR' }, isPreAuth });
    return (await sandbox.paySession('test', session.sessionId)).paymentReference as string;
  };
  const references: string[] = [];
  for (let index = 0; index < count; index += 8) {
    references.push(...(await Promise.all(Array.from({ length: Math.min(8, count - index) }, pay))));
  }
  return references;
}

/** The calls, kinds interleaved so that every route is under load for the whole run. */
async function plan(sandbox: Sandbox): Promise<Call[]> {
  const counts = Object.fromEntries(Object.entries(MIX).map(([kind, share]) => [kind, Math.max(1, Math.round(CALLS * share))])) as Record<
    Kind,
    number
  >;
  const setup = clientFor(sandbox, 'test');
  const [refund, capture, extend, cancel] = await Promise.all([
    paidPayments(sandbox, setup, Math.ceil(counts.refund / PER_PAYMENT), false),
    paidPayments(sandbox, setup, Math.ceil(counts.capture / PER_PAYMENT), true),
    paidPayments(sandbox, setup, Math.ceil(counts.extend / PER_PAYMENT), true),
    paidPayments(sandbox, setup, counts.cancel, true),
  ]);
  const pools = { refund, capture, extend, cancel } as Record<string, string[]>;
  const calls: Call[] = [];
  const longest = Math.max(...Object.values(counts));
  for (let index = 0; index < longest; index++) {
    for (const kind of Object.keys(MIX) as Kind[]) {
      if (index >= counts[kind]) continue;
      // Distinct amounts: a modification's record names its call by payment and amount.
      const call: Call = { kind, index, customReference: `soak-${kind}-${index}`, amount: 100 + index };
      if (kind === 'pos') call.amount = 1_000 + 100 * index;
      if (kind in pools) {
        const pool = pools[kind] as string[];
        call.paymentReference = (kind === 'cancel' ? pool[index] : pool[Math.floor(index / PER_PAYMENT)]) as string;
      }
      calls.push(call);
    }
  }
  return calls;
}

/** POS recovery without its production waits: the soak has no terminal that takes minutes. */
const RECOVER = { initialDelayMs: 0, pollIntervalMs: 20, maxWaitMs: 20_000 };

/** One logical call through the SDK: the id of the record it was answered with, and whether that answer was a replay. */
async function send(client: PaymentClient, call: Call, idempotencyKey?: string): Promise<{ id: string; replayed: boolean }> {
  const options = idempotencyKey === undefined ? {} : { idempotencyKey };
  const amount = { value: call.amount, currency: 'EUR' } as const;
  const paymentReference = call.paymentReference as string;
  const replayed = (response: Response) => response.headers.get('idempotent-replayed') === 'true';
  switch (call.kind) {
    case 'session': {
      const { data, response } = await client.sessions
        .create({ ...sessionParams, amount, customReference: call.customReference }, options)
        .withResponse();
      return { id: data.sessionId, replayed: replayed(response) };
    }
    case 'refund': {
      const { data, response } = await client.modifications.refund({ paymentReference, amount }, options).withResponse();
      return { id: data.refundReference, replayed: replayed(response) };
    }
    case 'capture': {
      const { data, response } = await client.modifications.capture({ paymentReference, amount }, options).withResponse();
      return { id: data.captureReference, replayed: replayed(response) };
    }
    case 'extend': {
      const { data, response } = await client.modifications.extend({ paymentReference }, options).withResponse();
      return { id: data.extendReference as string, replayed: replayed(response) };
    }
    case 'cancel': {
      const { data, response } = await client.modifications.cancel({ paymentReference }, options).withResponse();
      return { id: data.cancelReference, replayed: replayed(response) };
    }
    case 'pos': {
      const { data, response } = await client.pos
        .createPayment(
          { poiId: TEST_TERMINALS[call.index % 2]?.poiId as string, amount, customReference: call.customReference },
          { ...options, recover: RECOVER },
        )
        .withResponse();
      return { id: data.posPaymentId, replayed: replayed(response) || data.recovered === true };
    }
  }
}

/** Each call's record, as the store holds it: its id, and what ties it to the call. */
function recordsOf(
  sandbox: Sandbox,
  kind: Kind,
): Array<{ id: string; customReference: string | null; paymentReference?: string; amount: number | null }> {
  const { records } = sandbox;
  if (kind === 'session')
    return records
      .sessions({ environment: 'test' })
      .filter((record) => record.customReference?.startsWith('soak-'))
      .map((record) => ({ id: record.sessionId, customReference: record.customReference, amount: record.amount.value }));
  if (kind === 'pos')
    return records.posPayments({ environment: 'test' }).map((record) => ({
      id: record.posPaymentId,
      customReference: record.customReference,
      amount: record.amount.value,
    }));
  return records.modifications({ environment: 'test', type: kind }).map((record) => ({
    id: record.operationReference,
    customReference: null,
    paymentReference: record.paymentReference,
    amount: record.amount?.value ?? null,
  }));
}

describe('soak: the SDK against injected faults on every write route', () => {
  it(
    `${CALLS} calls make exactly one record each, and every success names its own`,
    async () => {
      const { sandbox, baseUrl } = await start({ seed: 23 });
      const calls = await plan(sandbox);

      const rules = (Object.keys(ROUTES) as Kind[]).flatMap((kind) =>
        EFFECTS.map((rule) => sandbox.faults.add({ route: ROUTES[kind], probability: rule.probability, effect: rule.effect })),
      );
      const seen = new Map<string, number>();
      const client = new PaymentClient({
        apiKey: sandbox.keys.test,
        webcode: sandbox.webcode,
        baseUrl,
        environment: 'test',
        // The client's own fetch, only to see which answers a rule changed.
        fetch: async (request, init) => {
          const response = await globalThis.fetch(request, init);
          const rule = response.headers.get('x-sandbox-fault');
          if (rule) seen.set(rule, (seen.get(rule) ?? 0) + 1);
          return response;
        },
      });

      let next = 0;
      const worker = async () => {
        for (let call = calls[next++]; call; call = calls[next++]) {
          try {
            call.answered = (await send(client, call)).id;
          } catch (error) {
            call.error = error;
          }
        }
      };
      await Promise.all(Array.from({ length: WORKERS }, worker));

      // A call that finally failed did so with a typed error of a fault, never with a refusal that a
      // resend of its own earlier attempt caused (a second cancel's 400, an idempotency conflict).
      const failed = calls.filter((call) => call.error !== undefined);
      for (const call of failed) {
        const { error } = call;
        const transient =
          error instanceof ServerError ||
          error instanceof ConnectionError ||
          error instanceof RateLimitError ||
          error instanceof PosPaymentPendingError;
        expect(transient, `${call.customReference}: ${String(error)}`).toBe(true);
        // A charge whose outcome was uncertain was recovered; only one refused before it ran (429) may fail.
        if (call.kind === 'pos') expect(error, call.customReference).toBeInstanceOf(RateLimitError);
        expect((error as PaymentServiceError).idempotencyKey).toEqual(expect.any(String));
      }

      // Records made while the faults struck: at most one per call, each named by a success or left by a failure.
      const before = new Map((Object.keys(ROUTES) as Kind[]).map((kind) => [kind, recordsOf(sandbox, kind)]));

      // The faults stop; each failed call is sent again with its key and finds its record, or makes it now.
      const struck = new Map(sandbox.faults.list().map((rule) => [rule.id, rule.injected]));
      sandbox.faults.clear();
      const resend = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, environment: 'test' });
      for (const call of failed) call.resent = await send(resend, call, (call.error as PaymentServiceError).idempotencyKey);

      for (const kind of Object.keys(ROUTES) as Kind[]) {
        const ofKind = calls.filter((call) => call.kind === kind);
        const records = recordsOf(sandbox, kind);
        const byId = new Map(records.map((record) => [record.id, record]));
        // Exactly one record per logical call: the ids the calls ended with are distinct and are all the records.
        const ids = ofKind.map((call) => call.answered ?? call.resent?.id);
        expect(new Set(ids).size, kind).toBe(ofKind.length);
        expect(records.map((record) => record.id).sort(), kind).toEqual([...ids].sort());
        for (const call of ofKind) {
          const record = byId.get((call.answered ?? call.resent?.id) as string);
          if (kind === 'session' || kind === 'pos') expect(record?.customReference, call.customReference).toBe(call.customReference);
          else expect(record?.paymentReference, call.customReference).toBe(call.paymentReference);
          if (kind !== 'extend' && kind !== 'cancel') expect(record?.amount, call.customReference).toBe(call.amount);
        }
        // A failed call that had made its record before it failed got that record back, replayed.
        const madeBefore = new Set(before.get(kind)?.map((record) => record.id));
        const answered = ofKind.filter((call) => call.answered !== undefined).length;
        const leftByFailures = ofKind.filter((call) => call.resent && madeBefore.has(call.resent.id));
        expect(madeBefore.size, kind).toBe(answered + leftByFailures.length);
        for (const call of leftByFailures) expect(call.resent?.replayed, call.customReference).toBe(true);
      }
      // The listings count what the store holds.
      const total = async (pages: AsyncIterator<{ total: number }>) => (await pages.next()).value?.total;
      const test = { environment: 'test' } as const;
      expect(await total(resend.sessions.list({ take: 1 }).pages())).toBe(sandbox.records.sessions(test).length);
      expect(await total(resend.pos.list({ take: 1 }).pages())).toBe(sandbox.records.posPayments(test).length);
      for (const type of ['refund', 'capture', 'extend', 'cancel'] as const) {
        expect(await total(resend.modifications.list({ type, take: 1 }).pages()), type).toBe(
          sandbox.records.modifications({ ...test, type }).length,
        );
      }
      // POS payments ended in their final status, one charge each.
      for (const payment of sandbox.records.posPayments({ environment: 'test' })) expect(payment.status).toBe('success');

      for (const rule of rules) {
        expect(struck.get(rule.id), `${rule.route} ${JSON.stringify(rule.effect)}`).toBeGreaterThan(0);
        // A reset has no answer to carry the header; every other rule's answers name it.
        if (rule.effect.type !== 'reset') expect(seen.get(rule.id), `${rule.route} ${JSON.stringify(rule.effect)}`).toBeGreaterThan(0);
      }
      console.info(
        `soak: ${calls.length} calls, ${failed.length} failed after their retries, ` +
          `${[...seen.values()].reduce((sum, count) => sum + count, 0)} answers changed by a fault, ` +
          `${rules.length} rules struck ${[...struck.values()].reduce((sum, count) => sum + count, 0)} times (the least ${Math.min(...struck.values())})`,
      );
    },
    120_000 + CALLS * 30,
  );
});
