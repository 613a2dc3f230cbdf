/**
 * The two-command demo: `npm install`, then `npm run demo`.
 *
 * It starts the bundled sandbox on 127.0.0.1 (no account, no network) and walks a whole payment:
 * create a session, pay it on the hosted page with a test card, verify the redirect data, receive
 * the AUTHORISATION webhook, refund part of it and see the REFUND webhook, list modifications,
 * charge every POS outcome (a `timeout` included, recovered without charging twice) and page
 * through sessions with `for await`.
 *
 * With PAYMENT_SERVICE_API_KEY, PAYMENT_SERVICE_WEBCODE and PAYMENT_SERVICE_BASE_URL set, the same
 * script runs against the real service's Test environment: it prints the payment URL for you to
 * pay in a browser, and skips the steps that need the sandbox (the local webhook receiver).
 */
import { createServer } from 'node:http';
import {
  type AuthorisationEvent,
  createWebhookHandler,
  PaymentClient,
  type RefundEvent,
  TerminalBusyError,
  TerminalCommunicationError,
  verifyRedirect,
} from 'payment-service-sdk';
import { createSandbox } from 'payment-service-sdk/sandbox';
import { posTestAmount, TEST_CARDS, TEST_SUCCESS_CARDHOLDER, TEST_TERMINALS } from 'payment-service-sdk/testing';

const real = Boolean(process.env.PAYMENT_SERVICE_API_KEY && process.env.PAYMENT_SERVICE_BASE_URL);
let step = 0;
const log = (title: string, detail = '') => console.log(`\n${++step}. ${title}${detail ? `\n   ${detail}` : ''}`);
const note = (line: string) => console.log(`   ${line}`);

// A local endpoint for the shop: the redirect pages and the webhook receiver.
const received: (AuthorisationEvent | RefundEvent)[] = [];
const waiters: (() => void)[] = [];
const webhook = createWebhookHandler({
  onAuthorisation: (event) => {
    received.push(event);
    for (const wake of waiters.splice(0)) wake();
  },
  onRefund: (event) => {
    received.push(event);
    for (const wake of waiters.splice(0)) wake();
  },
});
const shop = createServer((req, res) => {
  if (req.url?.startsWith('/webhook')) return void webhook.node(req, res);
  res.setHeader('content-type', 'text/plain');
  res.end(req.url?.startsWith('/ok') ? 'Thanks for your order!' : 'Payment not completed.');
});
await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
const shopAddress = shop.address();
const shopUrl = `http://127.0.0.1:${typeof shopAddress === 'object' && shopAddress ? shopAddress.port : 0}`;

async function nextWebhook(code: string, reference: string): Promise<AuthorisationEvent | RefundEvent> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = received.find(
      (event) => event.event_code === code && (event.data.paymentReference === reference || event.data.refundReference === reference),
    );
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${code} webhook for ${reference}`);
    await new Promise<void>((resolve) => {
      waiters.push(resolve);
      setTimeout(resolve, 500);
    });
  }
}

const sandbox = real
  ? undefined
  : createSandbox({ webhookUrls: [`${shopUrl}/webhook`], posDelayMs: [300, 600], posTimeoutResolveMs: 2_000 });
const baseUrl = sandbox ? (await sandbox.listen()).baseUrl : undefined;
const client = sandbox
  ? new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, environment: 'test' })
  : new PaymentClient();
const clientSecret = sandbox ? sandbox.clientSecrets.test : (process.env.PAYMENT_SERVICE_CLIENT_SECRET ?? '');

console.log(real ? `Against the service at ${client.baseUrl} (Test)` : `Against the local sandbox at ${baseUrl}`);

try {
  // Online payment
  const order = { id: `order-${Date.now()}`, cents: 4_990 };
  const session = await client.sessions.create({
    amount: { value: order.cents, currency: 'EUR' },
    urlOk: `${shopUrl}/ok`,
    urlKo: `${shopUrl}/ko`,
    description: 'Demo order: 2 coffees',
    customReference: order.id,
  });
  log('Created a payment session', `${session.sessionId} (${session.status}) -> ${session.paymentUrl}`);

  let paymentReference: string;
  if (sandbox) {
    const card = TEST_CARDS.visa;
    await fetch(session.paymentUrl); // the customer opens the page: the 5-minute countdown starts
    const paid = await fetch(session.paymentUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        cardNumber: card.number,
        expiryMonth: card.expiryMonth,
        expiryYear: card.expiryYear,
        cvc: card.cvc,
        holderName: TEST_SUCCESS_CARDHOLDER,
        action: 'pay',
      }),
      redirect: 'manual', // the page answers 303 to urlOk?data=...: read where it sends the customer
    });
    const redirect = paid.headers.get('location') ?? '';
    log('Paid on the hosted page with a test Visa card', `the page redirects the customer to ${redirect.slice(0, 60)}...`);
    const data = await verifyRedirect(redirect, clientSecret, { customReference: order.id, amount: order.cents, currency: 'EUR' });
    log('Verified the redirect data with the client secret', `payment ${data.paymentReference}, ${data.amount} cents, ${data.status}`);
    paymentReference = String(data.paymentReference);
    const authorisation = await nextWebhook('AUTHORISATION', paymentReference);
    log('Received the AUTHORISATION webhook', JSON.stringify(authorisation.data));
    const confirmed = await client.webhooks.confirm(authorisation);
    note(`confirmed against the API: ${confirmed.kind} ${confirmed.record.status}`);
  } else {
    log('Pay in your browser', `open ${session.paymentUrl} and pay with ${TEST_CARDS.visa.number}, any future expiry, CVC 123`);
    for (;;) {
      const current = await client.sessions.retrieve(session.sessionId);
      if (current.status !== 'pending') {
        paymentReference = current.paymentReference ?? '';
        note(`session ${current.status}, payment ${paymentReference}`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    }
  }

  const current = await client.sessions.retrieve(session.sessionId);
  log('Queried the session', `${current.status}, ${current.paymentStatus}, completed at ${current.completedAt}`);

  // Refund part of it
  const refund = await client.modifications.refund({
    paymentReference,
    amount: { value: 1_000, currency: 'EUR' },
    reason: 'One coffee was cold',
  });
  log('Refunded 10.00 EUR', `${refund.refundReference}: ${refund.status}`);
  if (sandbox) {
    const event = await nextWebhook('REFUND', refund.refundReference);
    log('Received the REFUND webhook', JSON.stringify(event.data));
  }
  const modifications = await client.sessions.listModifications(session.sessionId);
  log(
    'Listed the modifications of the session',
    modifications.map((item) => `${item.operationType} ${item.operationReference} ${item.status}`).join('; '),
  );

  // POS
  const terminals = await client.terminals.list({ syncFromProvider: true });
  log('Online terminals', terminals.map((terminal) => `${terminal.poiId} (${terminal.name})`).join(', '));
  const poiId = terminals[0]?.poiId ?? TEST_TERMINALS[0].poiId;
  for (const outcome of ['success', 'failed'] as const) {
    const payment = await client.pos.createPayment({ poiId, amount: { value: posTestAmount(outcome, 1_500), currency: 'EUR' } });
    log(
      `POS charge ending in ${String(posTestAmount(outcome, 1_500)).slice(-2)}`,
      `${payment.posPaymentId}: ${payment.status}${payment.errorMessage ? ` (${payment.errorMessage})` : ''}`,
    );
  }
  try {
    await client.pos.createPayment({ poiId, amount: { value: posTestAmount('busy', 1_500), currency: 'EUR' } });
  } catch (error) {
    if (!(error instanceof TerminalBusyError)) throw error;
    log('POS charge ending in 55', `TerminalBusyError ${error.code}: ${error.message} (nothing was charged)`);
  }
  try {
    await client.pos.createPayment({ poiId: TEST_TERMINALS[2].poiId, amount: { value: 1_500, currency: 'EUR' } });
  } catch (error) {
    if (!(error instanceof TerminalCommunicationError)) throw error;
    log('POS charge on the offline terminal', `TerminalCommunicationError ${error.code}: ${error.message}`);
  }
  const slow = await client.pos.createPayment(
    { poiId, amount: { value: posTestAmount('timeout', 1_500), currency: 'EUR' }, customReference: `${order.id}-pos` },
    { recover: { initialDelayMs: 1_000, pollIntervalMs: 500, maxWaitMs: 60_000 } },
  );
  log(
    'POS charge ending in 99: the terminal timed out',
    `recovered without a second charge: ${slow.posPaymentId} ${slow.status} (recovered: ${slow.recovered})`,
  );

  // Reconciliation
  let count = 0;
  let total = 0;
  for await (const item of client.sessions.list({ status: 'completed', take: 10 })) {
    count += 1;
    total += item.amount.value;
  }
  log('Paged through completed sessions with for await', `${count} sessions, ${(total / 100).toFixed(2)} EUR in all`);
  console.log('\nDone.');
} finally {
  await sandbox?.close();
  shop.close();
}
