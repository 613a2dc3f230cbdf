/**
 * One end-to-end run of the BUILT package (`dist/`, imported by its own name through the package's
 * `exports`) in whichever runtime executes this file: Node, Deno or Bun, unchanged.
 *
 * It proves, in that runtime:
 * - the sandbox runs there (`node:sqlite` through `process.getBuiltinModule`, `node:http` on
 *   127.0.0.1, a free port);
 * - `PaymentClient` creates a session, which is paid on the hosted page (`payTestSession`) and then
 *   retrieved as completed; `for await` walks the sessions listing across several pages;
 * - POS: a success, and a terminal-busy answer (amount ending 55) caught as `TerminalBusyError`;
 * - a refund through `modifications`, found in its listings;
 * - webhooks: a receiver made with `createWebhookHandler` on the runtime's own server (`Deno.serve`,
 *   `Bun.serve`, or `node:http` with `handler.node` on Node) gets the AUTHORISATION and REFUND
 *   events, which `parseWebhook` reads and `client.webhooks.confirm` confirms against the API;
 * - the `urlOk` redirect's `data` decodes with the Test client secret (`decodeRedirectData`), and a
 *   tampered token or another secret fails with `RedirectDataError`;
 * - errors made inside the bundle (and inside its lazily loaded chunks) are `instanceof` the classes
 *   the entry point exports, and a rejected API key never appears in a thrown error;
 * - everything closes: the process ends by itself (the test that spawns this file would time out).
 *
 * Prints one line, `runtime <name> <version>: <n> checks passed`, and exits 0; on the first failed
 * check it prints what differed to stderr and exits 1. A global timeout of 30 s fails the run.
 * Network: 127.0.0.1 only. Run by test/runtimes.test.ts (`deno run --allow-net=127.0.0.1`, `bun`, `node`).
 */
import { createServer } from 'node:http';
import { setTimeout as nodeTimeout } from 'node:timers';
import { inspect } from 'node:util';
import {
  ApiError,
  ConflictError,
  createWebhookHandler,
  decodeRedirectData,
  PaymentClient,
  PaymentServiceError,
  PermissionDeniedError,
  parseReference,
  parseWebhook,
  RedirectDataError,
  TerminalBusyError,
} from 'payment-service-sdk';
import { createSandbox } from 'payment-service-sdk/sandbox';
import { payTestSession, posTestAmount, TEST_TERMINALS } from 'payment-service-sdk/testing';

const TIMEOUT_MS = 30_000;
const WEBHOOK_WAIT_MS = 10_000;

// `Deno` and `Bun` also define `process.versions.node`, so they are asked first.
const runtime = globalThis.Deno
  ? `deno ${globalThis.Deno.version.deno}`
  : globalThis.Bun
    ? `bun ${globalThis.Bun.version}`
    : `node ${process.versions.node}`;

// A hang anywhere fails the run instead of blocking CI; cleared once everything is closed.
const watchdog = setTimeout(() => {
  console.error(`runtime ${runtime}: timed out after ${TIMEOUT_MS} ms`);
  process.exit(1);
}, TIMEOUT_MS);

let passed = 0;
/** One assertion: counts it, or throws with what was expected and what came. */
function check(what, ok, detail) {
  if (!ok) throw new Error(`check failed: ${what}${detail === undefined ? '' : `\n  got: ${inspect(detail, { depth: 4 })}`}`);
  passed++;
}

/** The error `action` rejects with; fails the run when it resolves. */
async function rejection(what, action) {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error(`check failed: ${what} should have thrown`);
}

// Webhook receiver -------------------------------------------------------------------------------
const events = [];
const wakers = [];
const record = (event) => {
  events.push(event);
  for (const wake of wakers.splice(0)) wake();
};
const webhook = createWebhookHandler({ onAuthorisation: record, onRefund: record, onUnknown: record });

/** The first webhook received with this code and `data[field]`, waiting for it up to WEBHOOK_WAIT_MS. */
async function nextEvent(code, field, reference) {
  const deadline = Date.now() + WEBHOOK_WAIT_MS;
  for (;;) {
    const found = events.find((event) => event.event_code === code && event.data[field] === reference);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`check failed: no ${code} webhook for ${reference} within ${WEBHOOK_WAIT_MS} ms`);
    await new Promise((resolve) => {
      wakers.push(resolve);
      setTimeout(resolve, 100);
    });
  }
}

/** The fetch-standard handler on the runtime's own server; Node has none, so `node:http` with `handler.node`. */
async function startReceiver() {
  if (globalThis.Deno) {
    const server = globalThis.Deno.serve({ hostname: '127.0.0.1', port: 0, onListen() {} }, (request) => webhook(request));
    return { url: `http://127.0.0.1:${server.addr.port}/webhooks`, close: () => server.shutdown() };
  }
  if (globalThis.Bun) {
    const server = globalThis.Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => webhook(request) });
    return { url: `http://127.0.0.1:${server.port}/webhooks`, close: () => server.stop(true) };
  }
  const server = createServer((req, res) => void webhook.node(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/webhooks`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// The run ----------------------------------------------------------------------------------------
const receiver = await startReceiver();
const sandbox = createSandbox({ posDelayMs: 0, modificationResolveMs: 50, webhookUrls: [receiver.url] });
let failed = false;
try {
  const { baseUrl } = await sandbox.listen();
  check('the sandbox listens on 127.0.0.1', baseUrl.startsWith('http://127.0.0.1:'), baseUrl);
  // No SDK retries: every answer is asserted as it comes.
  const client = new PaymentClient({
    apiKey: sandbox.keys.test,
    webcode: sandbox.webcode,
    baseUrl,
    environment: 'test',
    maxRetries: 0,
  });

  // Online payment: create, pay on the hosted page, retrieve.
  const order = { customReference: 'order-runtime-1', cents: 2599 };
  const session = await client.sessions.create({
    amount: { value: order.cents, currency: 'EUR' },
    urlOk: 'https://shop.example/ok',
    urlKo: 'https://shop.example/ko',
    customReference: order.customReference,
  });
  check('a new session is pending', session.status === 'pending', session);
  check('parseReference reads the session id', parseReference(session.sessionId)?.kind === 'session', parseReference(session.sessionId));
  const paid = await payTestSession(session.paymentUrl);
  check(
    'the hosted page sends the customer to urlOk with data',
    paid.paid && paid.redirectUrl?.startsWith('https://shop.example/ok'),
    paid,
  );
  const completed = await client.sessions.retrieve(session.sessionId);
  check(
    'the paid session is completed and authorised',
    completed.status === 'completed' && completed.paymentStatus === 'AUTHORISED' && Boolean(completed.paymentReference),
    completed,
  );
  const paymentReference = completed.paymentReference;

  // The redirect's data: decoded with the Test client secret; tampered or under another key, refused.
  const redirect = await decodeRedirectData(paid.data, sandbox.clientSecrets.test);
  check(
    'the redirect data decodes to this payment',
    redirect.paymentReference === paymentReference && redirect.customReference === order.customReference,
    redirect,
  );
  const [head, , signature] = paid.data.split('.');
  const forged = new TextEncoder().encode(JSON.stringify({ ...redirect, amount: 1 }));
  const tampered = `${head}.${btoa(String.fromCharCode(...forged))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '')}.${signature}`;
  const tamperedError = await rejection('a tampered token', () => decodeRedirectData(tampered, sandbox.clientSecrets.test));
  check(
    'a tampered token fails with RedirectDataError (from the lazily loaded jose chunk)',
    tamperedError instanceof RedirectDataError && tamperedError instanceof PaymentServiceError && tamperedError.reason === 'signature',
    tamperedError,
  );
  const otherKey = await rejection('another secret', () => decodeRedirectData(paid.data, sandbox.clientSecrets.live));
  check('a token under another secret fails with RedirectDataError', otherKey instanceof RedirectDataError, otherKey);

  // The AUTHORISATION webhook, received by the runtime's server, parsed and confirmed.
  const authorisation = await nextEvent('AUTHORISATION', 'paymentReference', paymentReference);
  const reparsed = parseWebhook(JSON.stringify(authorisation));
  check(
    'the AUTHORISATION webhook arrives and parseWebhook reads it',
    reparsed.event_code === 'AUTHORISATION' && reparsed.data.paymentReference === paymentReference && reparsed.data.amount === order.cents,
    reparsed,
  );
  const confirmedPayment = await client.webhooks.confirm(authorisation, { sessionId: session.sessionId });
  check(
    'client.webhooks.confirm confirms it against the API',
    confirmedPayment.kind === 'session' && confirmedPayment.record.status === 'completed',
    confirmedPayment,
  );

  // A refund and its listings, and its REFUND webhook.
  const refund = await client.modifications.refund({ paymentReference, amount: { value: 1000, currency: 'EUR' }, reason: 'runtime check' });
  check('the refund is acknowledged as pending', refund.status === 'pending' && Boolean(refund.refundReference), refund);
  const refundEvent = await nextEvent('REFUND', 'refundReference', refund.refundReference);
  const confirmedRefund = await client.webhooks.confirm(refundEvent);
  check('the REFUND webhook arrives and is confirmed', confirmedRefund.kind === 'refund', confirmedRefund);
  const refunds = [];
  for await (const item of client.modifications.list({ type: 'refund', take: 1 })) refunds.push(item);
  check(
    'modifications.list finds the resolved refund',
    refunds.some((item) => item.operationReference === refund.refundReference && item.status === 'success'),
    refunds,
  );
  const ofSession = await client.sessions.listModifications(session.sessionId);
  check(
    "the session's modifications list the refund",
    ofSession.some((item) => item.operationReference === refund.refundReference),
    ofSession,
  );

  // Listing across pages with `for await` (two more sessions: three in all, two per page).
  const created = [session.sessionId];
  for (const value of [1000, 1100]) {
    const more = await client.sessions.create({
      amount: { value, currency: 'EUR' },
      urlOk: 'https://shop.example/ok',
      urlKo: 'https://shop.example/ko',
    });
    created.push(more.sessionId);
  }
  const listed = [];
  for await (const item of client.sessions.list({ take: 2 })) listed.push(item.sessionId);
  const pages = [];
  for await (const page of client.sessions.list({ take: 2 }).pages()) pages.push(page.items.length);
  check(
    'for await walks every session across pages',
    listed.length === 3 && created.every((id) => listed.includes(id)) && pages.join() === '2,1',
    { listed, pages },
  );

  // POS: a success, then a busy terminal (amount ending 55).
  const poiId = TEST_TERMINALS[0].poiId;
  const pos = await client.pos.createPayment({ poiId, amount: { value: posTestAmount('success'), currency: 'EUR' } });
  check('a POS payment succeeds', pos.status === 'success' && parseReference(pos.posPaymentId)?.kind === 'posPayment', pos);
  const busy = await rejection('a busy terminal', () =>
    client.pos.createPayment({ poiId, amount: { value: posTestAmount('busy'), currency: 'EUR' } }, { recover: false }),
  );
  check(
    'a busy terminal throws TerminalBusyError, a ConflictError, ApiError, PaymentServiceError and Error',
    busy instanceof TerminalBusyError &&
      busy instanceof ConflictError &&
      busy instanceof ApiError &&
      busy instanceof PaymentServiceError &&
      busy instanceof Error &&
      busy.status === 409 &&
      busy.code === 13005,
    busy,
  );

  // A rejected key is never echoed: not in the message, the JSON, the stack or an inspection.
  const secretKey = `sk_test_runtime_${crypto.randomUUID().replaceAll('-', '')}`;
  const stranger = new PaymentClient({ apiKey: secretKey, webcode: sandbox.webcode, baseUrl, environment: 'test', maxRetries: 0 });
  const denied = await rejection('an unknown key', () => stranger.sessions.retrieve(session.sessionId));
  check('an unknown key throws PermissionDeniedError', denied instanceof PermissionDeniedError && denied.status === 403, denied);
  const renderings = [denied.message, String(denied), JSON.stringify(denied), denied.stack ?? '', inspect(denied, { depth: 8 })];
  check(
    'the API key appears in no rendering of the error',
    renderings.every((text) => !text.includes(secretKey)),
    renderings.filter((text) => text.includes(secretKey)),
  );
  const busyRenderings = [busy.message, JSON.stringify(busy), inspect(busy, { depth: 8 })];
  check(
    "the client's own key appears in no rendering of a service error",
    busyRenderings.every((text) => !text.includes(sandbox.keys.test)),
    busyRenderings,
  );
} catch (error) {
  failed = true;
  console.error(`runtime ${runtime}: ${passed} checks passed, then:`);
  console.error(error instanceof Error && error.message.startsWith('check failed') ? error.message : error);
} finally {
  await sandbox.close();
  await receiver.close();
  clearTimeout(watchdog);
}

if (failed) process.exit(1);
console.log(`runtime ${runtime}: ${passed} checks passed`);
// No process.exit on success: the process has to end by itself. Should a server, socket or timer
// be left open, this unref'd timer (node:timers, which all three runtimes have) says so and fails.
nodeTimeout(() => {
  console.error(`runtime ${runtime}: the process did not exit within 5 s of closing everything: a handle was left open`);
  process.exit(1);
}, 5_000).unref();
