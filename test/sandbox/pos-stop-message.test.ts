/**
 * What a POS payment still at its terminal is told when the sandbox stops (SIGTERM runs the same
 * close), over real HTTP on 127.0.0.1: one sent with an `Idempotency-Key` may be sent again with it
 * to read its outcome; one sent without is not told to retry with a key it never had, but that a
 * resend would be a new payment and to look it up instead.
 */
import { describe, expect, it } from 'vitest';
import { startSandbox } from './support.js';

async function stoppedAnswer(idempotencyKey: string | undefined): Promise<{ status: number; message: string; posPaymentId: string }> {
  const { sandbox } = await startSandbox();
  sandbox.setTerminal('test', 'V400m-TEST-000001', { processingMs: 600_000 });
  const answer = fetch(`${sandbox.baseUrl}/external/v1/test/pos/payment`, {
    method: 'POST',
    headers: {
      'x-api-key': sandbox.keys.test,
      'content-type': 'application/json',
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
    },
    body: JSON.stringify({ webcode: sandbox.webcode, poiId: 'V400m-TEST-000001', amount: { value: 1000, currency: 'EUR' } }),
  });
  // A bound, not a measurement: the payment is at its terminal once it is listed pending.
  const deadline = Date.now() + 10_000;
  while (sandbox.records.posPayments().length === 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 10));
  const [payment] = sandbox.records.posPayments();
  await sandbox.close();
  const response = await answer;
  const body = (await response.json()) as { error: { message: string } };
  return { status: response.status, message: body.error.message, posPaymentId: payment?.posPaymentId ?? '' };
}

describe('a POS payment at its terminal when the sandbox stops', () => {
  it('sent without an Idempotency-Key: told that a resend is a new payment, and to look it up, not to retry with a key', async () => {
    const { status, message, posPaymentId } = await stoppedAnswer(undefined);
    expect(status).toBe(503);
    expect(message).not.toContain('retry with the same Idempotency-Key');
    expect(message).toContain('without an Idempotency-Key');
    expect(message).toContain(posPaymentId);
    expect(message).toContain('GET /pos/payments');
  });

  it('sent with one: told to send it again with the same key', async () => {
    const { status, message } = await stoppedAnswer('pos-stop-1');
    expect(status).toBe(503);
    expect(message).toContain('retry with the same Idempotency-Key');
  });
});
