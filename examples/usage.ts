/**
 * Every namespace of the client in one place, type-checked by `npm test`. `tour()` takes any
 * client: one from PAYMENT_SERVICE_* variables (the default), or one of a sandbox
 * (see examples/setup.ts). Run it with `npm run example examples/usage.ts`: against a fresh local
 * sandbox, or the service when PAYMENT_SERVICE_* variables are set.
 */
import {
  ErrorCode,
  InvalidRequestError,
  type Page,
  PaymentClient,
  RequestValidationError,
  SESSION_STATUSES,
  type SessionListItem,
  TerminalBusyError,
} from 'payment-service-sdk';
import { connect, isMain } from './setup.ts';

/** Calls each namespace once; resolves when every call succeeded. */
export async function tour(client: PaymentClient = new PaymentClient()): Promise<void> {
  const session = await client.sessions.create({
    amount: { value: 2599, currency: 'EUR' },
    urlOk: 'https://shop.example/paid',
    urlKo: 'https://shop.example/failed',
    description: 'Order 1042',
    customReference: 'order-1042',
  });
  console.log('send the customer to', session.paymentUrl);

  const current = await client.sessions.retrieve(session.sessionId);
  const known: readonly string[] = SESSION_STATUSES;
  console.log(current.status, known.includes(current.status) ? '' : '(a status this SDK version does not know)');

  const [terminal] = await client.terminals.list({ syncFromProvider: true });
  if (terminal) {
    try {
      const payment = await client.pos.createPayment({ poiId: terminal.poiId, amount: { value: 1500, currency: 'EUR' } });
      console.log('POS', payment.posPaymentId, payment.status);
      // .withResponse() shows the HTTP exchange and the Idempotency-Key the call sent.
      const {
        data: refund,
        response,
        idempotencyKey,
      } = await client.modifications
        .refund(
          { paymentReference: payment.posPaymentId, amount: { value: 500, currency: 'EUR' } },
          { idempotencyKey: `refund-${payment.posPaymentId}` },
        )
        .withResponse();
      console.log('refund', refund.refundReference, response.status, idempotencyKey);
      console.log(await client.pos.listModifications(payment.posPaymentId));
    } catch (error) {
      if (error instanceof TerminalBusyError) console.log('terminal busy, nothing charged');
      else if (error instanceof InvalidRequestError && error.code === ErrorCode.INVALID_REQUEST) console.log(error.message, error.traceId);
      else if (error instanceof RequestValidationError) console.log(error.issues);
      else throw error;
    }
  }

  for await (const item of client.sessions.list({ status: 'completed', take: 100 })) {
    console.log(item.sessionId, item.paymentReference);
  }
  const page: Page<SessionListItem> = await client.sessions.list().firstPage();
  console.log(page.total, 'sessions');
  const refunds = await client.modifications.list({ type: 'refund' }).toArray({ max: 500 });
  console.log(refunds.length, 'refunds');
}

if (isMain(import.meta.url)) {
  const setup = await connect({ modificationResolveMs: 0 });
  try {
    await tour(setup.client);
  } finally {
    await setup.close();
  }
}
