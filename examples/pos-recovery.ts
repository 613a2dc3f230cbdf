/**
 * A POS charge that survives a terminal timeout: the SDK recovers the outcome without charging
 * twice, and when it cannot tell yet, the state is saved to resume later (here or in another process).
 *
 *   npm run build && node examples/pos-recovery.ts
 */
import {
  type PaymentClient,
  PosPaymentPendingError,
  type PosRecoveryState,
  TerminalBusyError,
  TerminalCommunicationError,
} from 'payment-service-sdk';
import { posTestAmount } from 'payment-service-sdk/testing';
import { connect, isMain } from './setup.ts';

export type ChargeOutcome =
  | { kind: 'paid' | 'declined'; posPaymentId: string; recovered: boolean }
  | { kind: 'busy' | 'offline' }
  | { kind: 'pending'; state: PosRecoveryState };

export async function chargeAtTerminal(
  client: PaymentClient,
  charge: { poiId: string; amountCents: number; reference: string },
  recover = { initialDelayMs: 10_000, pollIntervalMs: 2_000, maxWaitMs: 300_000 },
): Promise<ChargeOutcome> {
  try {
    const payment = await client.pos.createPayment(
      { poiId: charge.poiId, amount: { value: charge.amountCents, currency: 'EUR' }, customReference: charge.reference },
      { recover },
    );
    return {
      kind: payment.status === 'success' ? 'paid' : 'declined',
      posPaymentId: payment.posPaymentId,
      recovered: payment.recovered === true,
    };
  } catch (error) {
    if (error instanceof TerminalBusyError) return { kind: 'busy' };
    if (error instanceof TerminalCommunicationError) return { kind: 'offline' };
    // Save error.state (plain JSON); later: client.pos.resumeRecovery(state) or error.resume().
    if (error instanceof PosPaymentPendingError) return { kind: 'pending', state: error.state };
    throw error;
  }
}

if (isMain(import.meta.url)) {
  const setup = await connect({ posTimeoutResolveMs: 1_500 });
  const fast = { initialDelayMs: 500, pollIntervalMs: 250, maxWaitMs: 30_000 };
  for (const outcome of ['success', 'failed', 'busy', 'timeout'] as const) {
    const result = await chargeAtTerminal(
      setup.client,
      { poiId: 'V400m-TEST-000001', amountCents: posTestAmount(outcome), reference: `till-${outcome}` },
      fast,
    );
    console.log(`${outcome.padEnd(8)} ->`, result);
  }
  console.log(
    'offline  ->',
    await chargeAtTerminal(setup.client, { poiId: 'P400Plus-TEST-000003', amountCents: 1_000, reference: 'till-offline' }, fast),
  );
  await setup.close();
}
