/**
 * A POS charge at a till that survives a terminal timeout. The SDK never resends a charge blindly:
 * when the outcome is uncertain it resends the same bytes with the same Idempotency-Key and polls
 * the listing, so the customer is charged once. When the outcome is still unknown after `maxWaitMs`,
 * `PosPaymentPendingError.state` (plain JSON) is saved and the recovery resumed later, here or in
 * another process, with `client.pos.resumeRecovery(state)`.
 *
 *   npm run build && node examples/pos-recovery.ts
 *
 * With PAYMENT_SERVICE_API_KEY, PAYMENT_SERVICE_WEBCODE, PAYMENT_SERVICE_BASE_URL (and
 * PAYMENT_SERVICE_ENVIRONMENT) set, it charges the Test terminals of the real service; otherwise
 * those of a local sandbox.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type PaymentClient,
  PosPaymentPendingError,
  type PosRecoveryState,
  type RecoveredPosPayment,
  type RecoveryOptions,
  TerminalBusyError,
  TerminalCommunicationError,
} from 'payment-service-sdk';
import { posTestAmount, TEST_TERMINALS } from 'payment-service-sdk/testing';
import { connect, isMain } from './setup.ts';

export type ChargeOutcome =
  | { kind: 'paid' | 'declined'; posPaymentId: string; recovered: boolean; message?: string }
  /** Nothing was charged: ask the customer to try again. */
  | { kind: 'busy' | 'offline' }
  /** Unknown yet: `savedState` is the JSON to resume from. Do not charge again. */
  | { kind: 'pending'; savedState: string };

export interface ChargeOptions {
  /** How long and how often to recover an uncertain outcome. The defaults suit a real terminal. */
  recover?: RecoveryOptions;
  /** Keeps the recovery state of a pending payment (a file, a database row). Default: a file in the temp folder. */
  saveState?: (reference: string, json: string) => unknown;
  /** Where the outcome is printed. Default `console.log`. */
  log?: (line: string) => void;
}

export const stateFile = (reference: string) => join(tmpdir(), `pos-pending-${reference.replace(/[^\w-]/g, '_')}.json`);

function paid(payment: RecoveredPosPayment): ChargeOutcome {
  return {
    kind: payment.status === 'success' ? 'paid' : 'declined',
    posPaymentId: payment.posPaymentId,
    recovered: payment.recovered === true,
    ...(payment.errorMessage ? { message: payment.errorMessage } : {}),
  };
}

/** Charges `amountCents` (EUR) on the terminal `poiId`, prints and returns what happened. */
export async function chargeAtTerminal(
  client: PaymentClient,
  { poiId, amountCents, reference }: { poiId: string; amountCents: number; reference: string },
  options: ChargeOptions = {},
): Promise<ChargeOutcome> {
  const {
    recover = { initialDelayMs: 10_000, pollIntervalMs: 2_000, maxWaitMs: 300_000 },
    saveState = (name, json) => writeFile(stateFile(name), json),
    log = console.log,
  } = options;
  const amount = `${(amountCents / 100).toFixed(2)} EUR`;
  try {
    const payment = await client.pos.createPayment(
      { poiId, amount: { value: amountCents, currency: 'EUR' }, customReference: reference },
      { recover },
    );
    const outcome = paid(payment);
    if (outcome.kind === 'paid') {
      log(`${reference}: ${amount} paid, ${payment.posPaymentId}${payment.recovered ? ' (recovered after a timeout, charged once)' : ''}`);
    } else {
      log(`${reference}: ${amount} declined by the terminal, ${payment.posPaymentId} (${payment.errorMessage ?? payment.status})`);
    }
    return outcome;
  } catch (error) {
    if (error instanceof TerminalBusyError) {
      log(`${reference}: terminal ${poiId} is busy with another payment; nothing was charged, try again`);
      return { kind: 'busy' };
    }
    if (error instanceof TerminalCommunicationError) {
      log(`${reference}: terminal ${poiId} is offline; nothing was charged, use another terminal`);
      return { kind: 'offline' };
    }
    if (error instanceof PosPaymentPendingError) {
      const savedState = JSON.stringify(error.state);
      await saveState(reference, savedState);
      log(`${reference}: ${amount} still unknown (${error.posPaymentId ?? 'no id yet'}); do NOT charge again. Saved the state to resume:`);
      log(`  client.pos.resumeRecovery(${savedState})`);
      return { kind: 'pending', savedState };
    }
    throw error;
  }
}

/** Resumes a pending charge from its saved state (in this process or another): never charges again. */
export async function resumeCharge(
  client: PaymentClient,
  savedState: string,
  options: Pick<ChargeOptions, 'recover' | 'log'> = {},
): Promise<ChargeOutcome> {
  const { recover = { pollIntervalMs: 2_000, maxWaitMs: 300_000 }, log = console.log } = options;
  const state = JSON.parse(savedState) as PosRecoveryState;
  try {
    const payment = await client.pos.resumeRecovery(state, recover);
    log(`resumed ${state.posPaymentId ?? state.idempotencyKey}: ${payment.status}`);
    return paid(payment);
  } catch (error) {
    if (!(error instanceof PosPaymentPendingError)) throw error;
    log(`resumed ${state.posPaymentId ?? state.idempotencyKey}: still unknown, keep the state and try later`);
    return { kind: 'pending', savedState: JSON.stringify(error.state) };
  }
}

if (isMain(import.meta.url)) {
  // A sandbox `timeout` payment completes after 1.5 s; the recovery below is shortened to match.
  const setup = await connect({ posTimeoutResolveMs: 1_500 });
  const [online, , offline] = TEST_TERMINALS;
  const recover = { initialDelayMs: 500, pollIntervalMs: 250, maxWaitMs: 30_000 };
  try {
    for (const outcome of ['success', 'failed', 'busy', 'timeout'] as const) {
      await chargeAtTerminal(
        setup.client,
        { poiId: online.poiId, amountCents: posTestAmount(outcome), reference: `till-${outcome}` },
        { recover },
      );
    }
    await chargeAtTerminal(setup.client, { poiId: offline.poiId, amountCents: 1_000, reference: 'till-offline' }, { recover });

    // Give up early (as a till would, to free the screen), then resume from the saved file.
    const reference = `till-pending-${Date.now()}`;
    const pending = await chargeAtTerminal(
      setup.client,
      { poiId: online.poiId, amountCents: posTestAmount('timeout', 2_000), reference },
      { recover: { ...recover, maxWaitMs: 200 } },
    );
    if (pending.kind === 'pending') {
      await resumeCharge(setup.client, await readFile(stateFile(reference), 'utf8'), {
        recover: { pollIntervalMs: 250, maxWaitMs: 30_000 },
      });
      await rm(stateFile(reference), { force: true });
    }
  } finally {
    await setup.close();
  }
}
