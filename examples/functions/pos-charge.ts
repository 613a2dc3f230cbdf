/**
 * A POS charge from a function with a time limit (AWS Lambda, Vercel, a Cloudflare Worker), written
 * once for the three adapters of this folder (./lambda.ts, ./vercel-route.ts,
 * ./cloudflare-worker.ts). The terminal may take minutes; the function has seconds. So:
 *
 * 1. `POST /orders/{id}/charge`: the charge is prepared (`preparePayment`: its Idempotency-Key from
 *    the order id and the attempt number, nothing sent) and SAVED with the order before the first
 *    byte leaves; then sent with a `deadline` shortly before the platform's limit. Final by then:
 *    200. Otherwise the SDK throws `PosPaymentPendingError` before the deadline, its state is
 *    saved, and the answer is 202: the cashier's screen polls the status route. If the platform
 *    kills the function anyway, the state saved before sending is enough to finish the charge.
 * 2. `GET /orders/{id}/status`: `checkPayment` reads where the charge stands, within the deadline,
 *    and never sends it. Final: saved, 200. Still at the terminal: 202. No trace of it: it may be
 *    on its way, or it never left (the function died before or while sending); after `graceMs`,
 *    `resumeRecovery` resends it with the SAME key, which starts it if it never arrived and
 *    otherwise reads its stored answer: at most one charge either way.
 * 3. The cashier pressing "charge" again reuses the saved state of an unfinished charge: the same
 *    key, so the same charge, never a second one. Only after a final `failed` is the next press
 *    a new attempt (`posPaymentKey(orderId, attempt + 1)`), a new charge, rightly.
 *
 * A follow-up (`followUps.track({ pos: order.charge })`, see the README's follow-ups section) learns
 * the outcome of a charge nobody asks about any more, and `onAuthorisation` acts on it once.
 */
import {
  InvalidRequestError,
  type PaymentClient,
  type PosPayment,
  PosPaymentPendingError,
  type PosRecoveryState,
  posPaymentKey,
  type RecoveryOptions,
  RequestValidationError,
  TerminalBusyError,
  TerminalCommunicationError,
} from 'payment-service-sdk';
import type { Order, OrderStore } from './orders.ts';

/** What a route answers, whatever the platform: each adapter turns it into its own response. */
export interface Answer {
  status: 200 | 202 | 400 | 404 | 409 | 500;
  body: {
    orderId: string;
    /**
     * `paid` and `failed` are final; `pending`: ask the status route again; `busy` / `offline`: the
     * terminal refused it, nothing charged, press again (the same charge); `open`: nothing sent yet.
     */
    status: Order['status'] | 'pending' | 'busy' | 'offline' | 'not-found' | 'invalid';
    attempt?: number;
    posPaymentId?: string | undefined;
    message?: string | undefined;
  };
}

export interface ChargeContext {
  client: PaymentClient;
  store: OrderStore;
  /** When this invocation must have answered (epoch ms), a margin before the platform kills it. */
  deadline: number;
  /**
   * How long the status route lets a charge without any trace be (from the moment it was prepared)
   * before it resends it with `resumeRecovery`. Default 10 s: a charge sent a moment ago may not be
   * listed yet. Resending earlier would not charge twice either (same key); it would only make the
   * status route wait with the charge instead of answering at once.
   */
  graceMs?: number | undefined;
  /** The recovery's pace within the deadline (the SDK's defaults suit a 5-minute process). */
  recover?: RecoveryOptions | undefined;
}

const DEFAULT_RECOVER: RecoveryOptions = { initialDelayMs: 1_000, pollIntervalMs: 1_000 };
const DEFAULT_GRACE_MS = 10_000;

const isFinal = (order: Order) => order.status === 'paid' || order.status === 'failed';

function answer(order: Order, status: Answer['status'] = isFinal(order) ? 200 : 202): Answer {
  return {
    status,
    body: {
      orderId: order.id,
      status: order.status === 'charging' ? 'pending' : order.status,
      attempt: order.attempt,
      posPaymentId: order.posPaymentId ?? order.charge?.posPaymentId,
      ...(order.failure ? { message: order.failure } : {}),
    },
  };
}

/** The order with the payment's final outcome (or as it was, when the payment is not final). */
function settled(order: Order, payment: PosPayment): Order {
  if (payment.status === 'success') return { ...order, status: 'paid', posPaymentId: payment.posPaymentId };
  if (payment.status === 'failed') {
    const failure = payment.errorMessage ?? 'declined';
    return { ...order, status: 'failed', posPaymentId: payment.posPaymentId, failure };
  }
  return { ...order, charge: { ...order.charge, posPaymentId: payment.posPaymentId } };
}

/**
 * Sends (or resends) the order's saved charge and saves what came of it. `send` is
 * `createPayment(state)` for the first send, `resumeRecovery(state)` for a charge that may have left.
 */
async function finish(context: ChargeContext, order: Order, send: () => PromiseLike<PosPayment>): Promise<Answer> {
  try {
    const done = settled(order, await send());
    await context.store.save(done);
    return answer(done);
  } catch (error) {
    if (error instanceof PosPaymentPendingError) {
      // Not final before the deadline: keep what the SDK learned (the posPaymentId, once known).
      const pending: Order = { ...order, charge: { ...order.charge, ...error.state } };
      await context.store.save(pending);
      return answer(pending, 202);
    }
    if (error instanceof TerminalBusyError || error instanceof TerminalCommunicationError) {
      // The terminal refused the charge (busy with another payment, offline): nothing was charged.
      // NOT a new attempt: whether the service keeps a refusal under its key is not documented, so
      // the key may still start a charge when resent. The order keeps this charge, and the next
      // press (or a follow-up) resends it with the same key: one charge, whenever it goes through.
      return { status: 409, body: { ...answer(order).body, status: error instanceof TerminalBusyError ? 'busy' : 'offline' } };
    }
    if (error instanceof InvalidRequestError) {
      // The params were refused (400): this charge can never go through. Final for this attempt.
      const refused: Order = { ...order, status: 'failed', failure: error.message };
      await context.store.save(refused);
      return answer(refused, 409);
    }
    // Anything else (the store failed, say): the saved state still finishes the charge later.
    throw error;
  }
}

/** Resends the saved charge with its own key (the same charge: started at most once), within the deadline. */
function resume(context: ChargeContext, order: Order, charge: PosRecoveryState): Promise<Answer> {
  const { pollIntervalMs } = context.recover ?? DEFAULT_RECOVER;
  return finish(context, order, () => context.client.pos.resumeRecovery(charge, { deadline: context.deadline, pollIntervalMs }));
}

/** `POST /orders/{id}/charge`: the cashier pressed "charge" (again, perhaps). */
export async function chargeOrder(context: ChargeContext, orderId: string): Promise<Answer> {
  const { client, store, deadline } = context;
  const recover = context.recover ?? DEFAULT_RECOVER;
  const order = await store.load(orderId);
  if (!order) return { status: 404, body: { orderId, status: 'not-found' } };
  if (order.status === 'paid') return answer(order);
  if (order.status === 'charging' && order.charge) {
    // A charge of this attempt was prepared, and perhaps sent, by an earlier invocation (killed,
    // or answered 202). NEVER a new key: the same state, so the same charge, started at most once.
    return resume(context, order, order.charge);
  }
  // First charge, or a new attempt after a final `failed`: a new key, derived, not random, so that
  // two invocations racing on the same attempt make the same key, hence one charge.
  const attempt = order.attempt + 1;
  let charge: PosRecoveryState;
  try {
    charge = client.pos.preparePayment(
      {
        poiId: order.poiId,
        amount: { value: order.amountCents, currency: order.currency },
        // The attempt in the reference too: the listing then tells this attempt's charge from
        // the last one's, where no posPaymentId is known yet.
        customReference: `${order.id}/${attempt}`,
        ...(order.description ? { description: order.description } : {}),
      },
      { idempotencyKey: posPaymentKey(order.id, attempt) },
    );
  } catch (error) {
    if (!(error instanceof RequestValidationError)) throw error;
    return { status: 400, body: { orderId, status: 'invalid', message: error.message } };
  }
  const prepared: Order = {
    ...order,
    status: 'charging',
    attempt,
    charge,
    posPaymentId: undefined,
    failure: undefined,
  };
  // Saved BEFORE sending: if the function dies from here on, whoever loads the order finishes this charge.
  await store.save(prepared);
  return finish(context, prepared, () => client.pos.createPayment(charge, { deadline, recover }));
}

/** `GET /orders/{id}/status`: polled by the cashier's screen while the answer was 202. */
export async function orderStatus(context: ChargeContext, orderId: string): Promise<Answer> {
  const { client, store, deadline } = context;
  const order = await store.load(orderId);
  if (!order) return { status: 404, body: { orderId, status: 'not-found' } };
  if (isFinal(order) || !order.charge) return answer(order, 200);
  const charge = order.charge;
  let check: Awaited<ReturnType<PaymentClient['pos']['checkPayment']>>;
  try {
    check = await client.pos.checkPayment(charge, { deadline });
  } catch (error) {
    // Out of time (or the listing failed): nothing learned, nothing lost; the screen asks again.
    if (error instanceof PosPaymentPendingError) return answer(order, 202);
    throw error;
  }
  if (check.status === 'success' || check.status === 'failed' || check.status === 'pending') {
    const known = settled(order, check.payment);
    await store.save(known);
    return answer(known);
  }
  // `unknown`: no trace of the charge. Either it is on its way (sent a moment ago), or it never
  // arrived (the function died before or while sending it). Resending it with its own key is safe in
  // both cases: a charge that arrived is not started again (the service replays its stored answer,
  // or waits with the one in progress), and one that never arrived starts now, once. After the grace
  // period, do that; before it, wait: the charge is most likely on its way.
  if (Date.now() - Date.parse(charge.sentAt ?? '') < (context.graceMs ?? DEFAULT_GRACE_MS)) return answer(order, 202);
  return resume(context, order, charge);
}

/** Where a route's answer becomes a platform's: JSON, with the status. */
export const answerBody = (result: Answer) => JSON.stringify(result.body);

/** `POST .../charge` or `GET .../status`, from a path like `/orders/{id}/charge` (for the adapters). */
export function route(method: string, path: string): { action: 'charge' | 'status'; orderId: string } | undefined {
  const match = /^\/orders\/([^/]+)\/(charge|status)$/.exec(path);
  if (!match) return undefined;
  const [, id, action] = match;
  if ((action === 'charge' && method !== 'POST') || (action === 'status' && method !== 'GET')) return undefined;
  return { action: action as 'charge' | 'status', orderId: decodeURIComponent(id ?? '') };
}

/** Turns an unexpected failure into a 500 answer (logged), so that the adapters stay thin. */
export async function answering(orderId: string, run: () => Promise<Answer>): Promise<Answer> {
  try {
    return await run();
  } catch (error) {
    console.error(`order ${orderId}:`, error);
    return { status: 500, body: { orderId, status: 'pending', message: 'try again' } };
  }
}
