import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AuthorisationEvent,
  type ConfirmedPosPayment,
  type ConfirmedRefund,
  type ConfirmedSessionPayment,
  type ConfirmedWebhook,
  PAYMENT_OUTCOMES,
  type PaymentOutcome,
  PermissionDeniedError,
  parseWebhook,
  REFUND_OUTCOMES,
  type RefundEvent,
  type RefundOutcome,
  RequestValidationError,
  WebhookNotConfirmedError,
  type WebhookNotConfirmedReason,
  type WebhookOutcome,
  WebhookParseError,
} from '../src/index.js';
import { Webhooks } from '../src/resources/webhooks.js';
import { client, failure, listing, respond, seen, success, useMsw } from './support/msw.js';
import { REFUND_WEBHOOK } from './support/webhook-events.js';

useMsw();

const PREFIX = '/external/v1/test';
const POS_PATH = `${PREFIX}/pos/payments`;
const SESSIONS_PATH = `${PREFIX}/payment/sessions`;
const MODIFICATIONS_PATH = `${PREFIX}/modifications`;

const POS_ID = 'SHOP1-POSXT-1700000000';
const amount = { value: 1050, currency: 'EUR' };

function posPayment(id: string, overrides: Record<string, unknown> = {}) {
  return {
    posPaymentId: id,
    paymentReference: id,
    poiId: 'V400m-TEST-000001',
    amount,
    status: 'success',
    customReference: 'order-42',
    ...overrides,
  };
}

function authorisation(paymentReference: string, data: Record<string, unknown> = {}): AuthorisationEvent {
  return parseWebhook({
    event_code: 'AUTHORISATION',
    data: {
      amount: 1050,
      currency: 'EUR',
      paymentReference,
      paymentStatus: 'AUTHORISED',
      customReference: 'order-42',
      paymentSource: 'external_api',
      ...data,
    },
  }) as AuthorisationEvent;
}

const refundEvent = parseWebhook(REFUND_WEBHOOK) as RefundEvent;

/** Serves `pages` of a listing in turn: page n answers the request with cursor `c{n}`. */
function pagesOf(path: string, key: string, pages: unknown[][], hasMoreAfterLast = false): void {
  respond('get', path, (request) => {
    const cursor = new URL(request.url).searchParams.get('cursor');
    const index = cursor === null ? 0 : Number(cursor.slice(1));
    const items = pages[index] ?? [];
    const more = index < pages.length - 1 || hasMoreAfterLast;
    return success(listing(key, items, { cursor: more ? `c${index + 1}` : null, hasMore: more, total: 1000 }));
  });
}

async function rejection(promise: Promise<unknown>): Promise<WebhookNotConfirmedError> {
  const error = await promise.then(
    () => {
      throw new Error('confirm resolved');
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(WebhookNotConfirmedError);
  return error as WebhookNotConfirmedError;
}

function expectReason(error: WebhookNotConfirmedError, reason: WebhookNotConfirmedReason): void {
  expect(error.reason).toBe(reason);
  expect(error.name).toBe('WebhookNotConfirmedError');
}

describe('confirm: AUTHORISATION of a POS payment', () => {
  const others = (page: number) =>
    Array.from({ length: 100 }, (_, i) => posPayment(`SHOP1-POSXT-16999${String(page * 100 + i).padStart(5, '0')}`));

  it('finds the payment on page 2 of GET /pos/payments, newest first around its time, and stops there', async () => {
    pagesOf(POS_PATH, 'posPayments', [others(0), [...others(1).slice(0, 40), posPayment(POS_ID)], others(2)]);
    const confirmed = await client().webhooks.confirm(authorisation(POS_ID));
    expect(confirmed.kind).toBe('posPayment');
    expect(confirmed.outcome).toBe('authorised');
    expect(confirmed.record).toMatchObject({ posPaymentId: POS_ID, status: 'success' });
    expect(confirmed.event.data.paymentReference).toBe(POS_ID);
    expect(seen).toHaveLength(2);
    const [first, second] = seen;
    expect(first?.url.pathname).toBe(POS_PATH);
    expect(Object.fromEntries(first?.url.searchParams ?? [])).toEqual({
      webcode: 'SHOP1',
      order: 'desc',
      take: '100',
      // The id's time is 2023-11-14 22:13:20 UTC; the window is a day either side of it.
      created_at_start: '2023-11-13 22:13:20',
      created_at_end: '2023-11-15 22:13:20',
    });
    expect(second?.url.searchParams.get('cursor')).toBe('c1');
  });

  it('scans without a date window when the id carries no timestamp', async () => {
    const id = 'SHOP1-POSXT-abc';
    pagesOf(POS_PATH, 'posPayments', [[posPayment(id)]]);
    await client().webhooks.confirm(authorisation(id));
    expect(seen[0]?.url.searchParams.has('created_at_start')).toBe(false);
    expect(seen[0]?.url.searchParams.get('order')).toBe('desc');
  });

  it('accepts the event as a raw body too', async () => {
    pagesOf(POS_PATH, 'posPayments', [[posPayment(POS_ID)]]);
    const body = JSON.stringify({ event_code: 'AUTHORISATION', data: { paymentReference: POS_ID, amount: 1050, currency: 'EUR' } });
    const confirmed = await client().webhooks.confirm(body);
    expect(confirmed.kind).toBe('posPayment');
    expect(seen).toHaveLength(1);
  });

  it('rejects with mismatch when the amount differs, carrying the record', async () => {
    pagesOf(POS_PATH, 'posPayments', [[posPayment(POS_ID, { amount: { value: 105, currency: 'EUR' } })]]);
    const error = await rejection(client().webhooks.confirm(authorisation(POS_ID)));
    expectReason(error, 'mismatch');
    expect(error.message).toMatch(/amount is 105, the webhook says 1050/);
    expect(error.record).toMatchObject({ posPaymentId: POS_ID });
  });

  it('rejects with mismatch when the currency or customReference differs', async () => {
    pagesOf(POS_PATH, 'posPayments', [[posPayment(POS_ID, { amount: { value: 1050, currency: 'GBP' }, customReference: 'order-41' })]]);
    const error = await rejection(client().webhooks.confirm(authorisation(POS_ID)));
    expectReason(error, 'mismatch');
    expect(error.message).toMatch(/currency is "GBP"/);
    expect(error.message).toMatch(/customReference is "order-41"/);
  });

  it.each(['failed', 'timeout', 'pending'])(
    'rejects an AUTHORISED event with mismatch when the payment is %s, quoting the webhook',
    async (status) => {
      pagesOf(POS_PATH, 'posPayments', [[posPayment(POS_ID, { status })]]);
      const error = await rejection(client().webhooks.confirm(authorisation(POS_ID)));
      expectReason(error, 'mismatch');
      expect(error.message).toContain(
        `authorisation of POS payment ${POS_ID}: status is "${status}", the webhook says paymentStatus "AUTHORISED"`,
      );
      expect(error.message).not.toContain('"success"');
      expect((error.record as { status: string }).status).toBe(status);
    },
  );

  it('confirms a REFUSED event when the payment failed: outcome refused', async () => {
    pagesOf(POS_PATH, 'posPayments', [[posPayment(POS_ID, { status: 'failed', errorMessage: 'Card declined' })]]);
    const confirmed = await client().webhooks.confirm(authorisation(POS_ID, { paymentStatus: 'REFUSED' }));
    expect(confirmed).toMatchObject({ kind: 'posPayment', outcome: 'refused', record: { posPaymentId: POS_ID, status: 'failed' } });
    expect(confirmed.event.data.paymentStatus).toBe('REFUSED');
    expect(seen).toHaveLength(1);
  });

  it('treats any paymentStatus other than AUTHORISED as a refusal', async () => {
    pagesOf(POS_PATH, 'posPayments', [[posPayment(POS_ID, { status: 'failed' })]]);
    expect((await client().webhooks.confirm(authorisation(POS_ID, { paymentStatus: 'ERROR' }))).outcome).toBe('refused');
  });

  it.each(['success', 'timeout', 'pending'])('rejects a REFUSED event with mismatch when the payment is %s', async (status) => {
    pagesOf(POS_PATH, 'posPayments', [[posPayment(POS_ID, { status })]]);
    const error = await rejection(client().webhooks.confirm(authorisation(POS_ID, { paymentStatus: 'REFUSED' })));
    expectReason(error, 'mismatch');
    expect(error.message).toContain(`refusal of POS payment ${POS_ID}: status is "${status}", the webhook says paymentStatus "REFUSED"`);
  });

  it('quotes an AUTHORISATION without paymentStatus as such', async () => {
    pagesOf(POS_PATH, 'posPayments', [[posPayment(POS_ID, { status: 'failed' })]]);
    const error = await rejection(client().webhooks.confirm(authorisation(POS_ID, { paymentStatus: null })));
    expect(error.message).toContain('status is "failed", the webhook says an AUTHORISATION with no paymentStatus');
  });

  it('still compares the amount of a refused payment', async () => {
    pagesOf(POS_PATH, 'posPayments', [[posPayment(POS_ID, { status: 'failed', amount: { value: 1077, currency: 'EUR' } })]]);
    const error = await rejection(client().webhooks.confirm(authorisation(POS_ID, { paymentStatus: 'REFUSED' })));
    expect(error.message).toMatch(/amount is 1077, the webhook says 1050$/);
  });

  it('rejects with not-found after exactly maxPages requests', async () => {
    pagesOf(POS_PATH, 'posPayments', [others(0), others(1), others(2), others(3), others(4)], true);
    const error = await rejection(client().webhooks.confirm(authorisation(POS_ID), { maxPages: 3 }));
    expectReason(error, 'not-found');
    expect(error.message).toMatch(/3 pages of 100, the maxPages limit/);
    expect(error.record).toBeUndefined();
    expect(seen).toHaveLength(3);
  });

  it('stops at 10 pages by default', async () => {
    pagesOf(
      POS_PATH,
      'posPayments',
      Array.from({ length: 12 }, (_, page) => others(page)),
    );
    expectReason(await rejection(client().webhooks.confirm(authorisation(POS_ID))), 'not-found');
    expect(seen).toHaveLength(10);
  });

  it('rejects with not-found when the listing ends first', async () => {
    pagesOf(POS_PATH, 'posPayments', [others(0)]);
    const error = await rejection(client().webhooks.confirm(authorisation(POS_ID), { maxPages: 5 }));
    expectReason(error, 'not-found');
    expect(error.message).toMatch(/the whole listing \(1 page\)/);
    expect(seen).toHaveLength(1);
  });

  it('lets API failures through untouched', async () => {
    respond('get', POS_PATH, () => failure(403, 11008, 'API key without permission'));
    await expect(client().webhooks.confirm(authorisation(POS_ID))).rejects.toBeInstanceOf(PermissionDeniedError);
  });
});

describe('confirm: AUTHORISATION of an online payment', () => {
  const REFERENCE = 'SHOP1-PXTT-42';
  const SESSION_ID = 'SHOP1-EXTT-1700000042';
  const item = (sessionId: string, paymentReference: string) => ({
    sessionId,
    status: 'completed',
    amount,
    customReference: 'order-42',
    paymentReference,
    paymentStatus: 'AUTHORISED',
  });
  const session = (overrides: Record<string, unknown> = {}) => ({
    ...item(SESSION_ID, REFERENCE),
    attempts: [{ paymentReference: REFERENCE, status: 'authorised' }],
    ...overrides,
  });

  it('finds the session in GET /payment/sessions?status=completed, then reads it', async () => {
    pagesOf(SESSIONS_PATH, 'payments', [
      [item('SHOP1-EXTT-1', 'SHOP1-PXTT-1')],
      [item(SESSION_ID, REFERENCE)],
      [item('SHOP1-EXTT-3', 'SHOP1-PXTT-3')],
    ]);
    respond('get', `${PREFIX}/payment/session/${SESSION_ID}`, () => success(session()));
    const confirmed = await client().webhooks.confirm(authorisation(REFERENCE));
    expect(confirmed.kind).toBe('session');
    expect(confirmed.outcome).toBe('authorised');
    expect(confirmed.record).toMatchObject({ sessionId: SESSION_ID, paymentReference: REFERENCE, status: 'completed' });
    expect(seen.map((request) => request.url.pathname)).toEqual([SESSIONS_PATH, SESSIONS_PATH, `${PREFIX}/payment/session/${SESSION_ID}`]);
    expect(Object.fromEntries(seen[0]?.url.searchParams ?? [])).toEqual({ webcode: 'SHOP1', status: 'completed', take: '100' });
  });

  it('reads the session directly when the event carries its sessionId', async () => {
    respond('get', `${PREFIX}/payment/session/${SESSION_ID}`, () => success(session()));
    const confirmed = await client().webhooks.confirm(authorisation(REFERENCE, { sessionId: SESSION_ID }));
    expect(confirmed.kind).toBe('session');
    expect(seen).toHaveLength(1);
  });

  it('reads the session directly when options.sessionId names it', async () => {
    respond('get', `${PREFIX}/payment/session/${SESSION_ID}`, () => success(session()));
    const confirmed = await client().webhooks.confirm(authorisation(REFERENCE, { sessionId: 'SHOP1-EXTT-999' }), { sessionId: SESSION_ID });
    expect(confirmed.record.sessionId).toBe(SESSION_ID);
    expect(seen.map((request) => request.url.pathname)).toEqual([`${PREFIX}/payment/session/${SESSION_ID}`]);
  });

  it('rejects with mismatch when the session holds another payment, or it is not authorised', async () => {
    respond('get', `${PREFIX}/payment/session/${SESSION_ID}`, (_request, count) =>
      success(count === 1 ? session({ paymentReference: 'SHOP1-PXTT-41' }) : session({ paymentStatus: 'REFUSED' })),
    );
    const other = await rejection(client().webhooks.confirm(authorisation(REFERENCE), { sessionId: SESSION_ID }));
    expectReason(other, 'mismatch');
    expect(other.message).toMatch(/paymentReference is "SHOP1-PXTT-41"/);
    const refused = await rejection(client().webhooks.confirm(authorisation(REFERENCE), { sessionId: SESSION_ID }));
    expectReason(refused, 'mismatch');
    expect(refused.message).toContain('paymentStatus is "REFUSED", the webhook says paymentStatus "AUTHORISED"');
    expect(refused.record).toMatchObject({ sessionId: SESSION_ID });
  });

  it('rejects an AUTHORISED event for a failed session, quoting the webhook', async () => {
    respond('get', `${PREFIX}/payment/session/${SESSION_ID}`, () =>
      success(
        session({
          status: 'failed',
          paymentReference: null,
          paymentStatus: null,
          attempts: [{ paymentReference: REFERENCE, status: 'refused' }],
        }),
      ),
    );
    const error = await rejection(client().webhooks.confirm(authorisation(REFERENCE), { sessionId: SESSION_ID }));
    expect(error.message).toContain('status is "failed", the webhook says paymentStatus "AUTHORISED"');
  });

  describe('a refusal (paymentStatus other than AUTHORISED)', () => {
    const failedSession = (attempts: unknown) =>
      session({ status: 'failed', paymentReference: null, paymentStatus: null, completedAt: null, attempts });
    const refused = (data: Record<string, unknown> = {}) => authorisation(REFERENCE, { paymentStatus: 'REFUSED', ...data });

    it('is confirmed by the failed attempt of its session: outcome refused', async () => {
      respond('get', `${PREFIX}/payment/session/${SESSION_ID}`, () =>
        success(
          failedSession([
            { paymentReference: 'SHOP1-PXTT-41', status: 'error' },
            { paymentReference: REFERENCE, status: 'refused' },
          ]),
        ),
      );
      const confirmed = await client().webhooks.confirm(refused(), { sessionId: SESSION_ID });
      expect(confirmed).toMatchObject({ kind: 'session', outcome: 'refused', record: { sessionId: SESSION_ID, status: 'failed' } });
    });

    it('is confirmed by a failed session holding the payment when attempts are not shown', async () => {
      respond('get', `${PREFIX}/payment/session/${SESSION_ID}`, () =>
        success(session({ status: 'failed', paymentStatus: null, attempts: undefined })),
      );
      expect((await client().webhooks.confirm(refused(), { sessionId: SESSION_ID })).outcome).toBe('refused');
    });

    it.each([
      ['the attempt was authorised', session(), `the attempt ${REFERENCE} is "authorised", the webhook says paymentStatus "REFUSED"`],
      [
        'the session holds no such payment',
        failedSession([{ paymentReference: 'SHOP1-PXTT-41', status: 'refused' }]),
        `the session holds no payment "${REFERENCE}", the webhook says paymentStatus "REFUSED" for it`,
      ],
      [
        'the session holding it completed',
        session({ attempts: undefined }),
        'status is "completed", the webhook says paymentStatus "REFUSED"',
      ],
    ])('is a mismatch when %s', async (_name, record, message) => {
      respond('get', `${PREFIX}/payment/session/${SESSION_ID}`, () => success(record));
      const error = await rejection(client().webhooks.confirm(refused(), { sessionId: SESSION_ID }));
      expectReason(error, 'mismatch');
      expect(error.message).toContain(`refusal of payment ${REFERENCE} (session ${SESSION_ID}): ${message}`);
    });

    it('is looked up among failed sessions without a sessionId, and not-found says to pass one', async () => {
      pagesOf(SESSIONS_PATH, 'payments', [[{ ...item('SHOP1-EXTT-1', 'SHOP1-PXTT-1'), status: 'failed' }]]);
      const error = await rejection(client().webhooks.confirm(refused()));
      expectReason(error, 'not-found');
      expect(error.message).toContain(`A failed session holding payment ${REFERENCE} is not in GET /payment/sessions?status=failed`);
      expect(error.message).toContain('pass options.sessionId');
      expect(seen[0]?.url.searchParams.get('status')).toBe('failed');
    });
  });

  it('rejects with mismatch when the amount differs', async () => {
    respond('get', `${PREFIX}/payment/session/${SESSION_ID}`, () => success(session({ amount: { value: 1, currency: 'EUR' } })));
    expectReason(await rejection(client().webhooks.confirm(authorisation(REFERENCE), { sessionId: SESSION_ID })), 'mismatch');
  });

  it('rejects with not-found when no completed session holds the payment', async () => {
    pagesOf(SESSIONS_PATH, 'payments', [[item('SHOP1-EXTT-1', 'SHOP1-PXTT-1')], [item('SHOP1-EXTT-2', 'SHOP1-PXTT-2')]], true);
    const error = await rejection(client().webhooks.confirm(authorisation(REFERENCE), { maxPages: 2 }));
    expectReason(error, 'not-found');
    expect(seen).toHaveLength(2);
  });

  it('rejects with not-found when the service does not know the session', async () => {
    respond('get', `${PREFIX}/payment/session/${SESSION_ID}`, () => failure(404, undefined, 'Session not found'));
    expectReason(await rejection(client().webhooks.confirm(authorisation(REFERENCE), { sessionId: SESSION_ID })), 'not-found');
  });

  it('rejects with not-found, sending nothing, when the sessionId belongs to another webcode', async () => {
    const error = await rejection(client().webhooks.confirm(authorisation(REFERENCE, { sessionId: 'OTHER-EXTT-1' })));
    expectReason(error, 'not-found');
    expect(error.message).toMatch(/webcode OTHER/);
    expect(seen).toHaveLength(0);
  });

  it('rejects with unsupported a paymentReference in no documented format, without a sessionId', async () => {
    const error = await rejection(client().webhooks.confirm(authorisation('pay_123')));
    expectReason(error, 'unsupported');
    expect(seen).toHaveLength(0);
  });
});

describe('confirm: REFUND', () => {
  const record = (overrides: Record<string, unknown> = {}) => ({
    operationReference: 'SHOP1-RFXT-7',
    operationType: 'refund',
    paymentReference: 'SHOP1-PXTT-42',
    sessionId: 'SHOP1-EXTT-1700000042',
    status: 'success',
    amount: { value: 500, currency: 'EUR' },
    reason: 'damaged',
    ...overrides,
  });
  const other = (n: number) => record({ operationReference: `SHOP1-RFXT-${100 + n}` });

  it('finds the refund in GET /modifications?type=refund', async () => {
    pagesOf(MODIFICATIONS_PATH, 'modifications', [
      [other(1), other(2)],
      [other(3), record()],
    ]);
    const confirmed = await client().webhooks.confirm(refundEvent);
    expect(confirmed.kind).toBe('refund');
    expect(confirmed.outcome).toBe('refunded');
    expect(confirmed.record).toMatchObject({ operationReference: 'SHOP1-RFXT-7', status: 'success' });
    expect(seen).toHaveLength(2);
    expect(Object.fromEntries(seen[0]?.url.searchParams ?? [])).toEqual({ webcode: 'SHOP1', type: 'refund', take: '100' });
  });

  it.each([
    ['the refund is still pending', { status: 'pending' }, /status is "pending"/],
    ['it refunds another payment', { paymentReference: 'SHOP1-PXTT-41' }, /paymentReference is "SHOP1-PXTT-41"/],
    ['the amount differs', { amount: { value: 1050, currency: 'EUR' } }, /amount is 1050, the webhook says 500/],
  ])('rejects with mismatch when %s', async (_name, overrides, message) => {
    pagesOf(MODIFICATIONS_PATH, 'modifications', [[record(overrides)]]);
    const error = await rejection(client().webhooks.confirm(refundEvent));
    expectReason(error, 'mismatch');
    expect(error.message).toMatch(message);
    expect(error.record).toMatchObject({ operationReference: 'SHOP1-RFXT-7' });
  });

  it('confirms a failed refund as failed, and quotes the webhook status on a mismatch', async () => {
    const failedEvent = parseWebhook({ ...REFUND_WEBHOOK, data: { ...REFUND_WEBHOOK.data, status: 'failed' } }) as RefundEvent;
    pagesOf(MODIFICATIONS_PATH, 'modifications', [[record({ status: 'failed' })]]);
    expect(await client().webhooks.confirm(failedEvent)).toMatchObject({ kind: 'refund', outcome: 'failed' });
    pagesOf(MODIFICATIONS_PATH, 'modifications', [[record()]]);
    const error = await rejection(client().webhooks.confirm(failedEvent));
    expect(error.message).toContain('status is "success", the webhook says status "failed"');
  });

  it('rejects a REFUND whose status is no resolution with unsupported, sending nothing', async () => {
    const pending = parseWebhook({ ...REFUND_WEBHOOK, data: { ...REFUND_WEBHOOK.data, status: 'pending' } });
    expectReason(await rejection(client().webhooks.confirm(pending)), 'unsupported');
    expect(seen).toHaveLength(0);
  });

  it('rejects with not-found after maxPages', async () => {
    pagesOf(MODIFICATIONS_PATH, 'modifications', [[other(1)], [other(2)]], true);
    expectReason(await rejection(client().webhooks.confirm(refundEvent, { maxPages: 2 })), 'not-found');
    expect(seen).toHaveLength(2);
  });
});

describe('confirm: other cases', () => {
  it('rejects unknown event codes with unsupported, sending nothing', async () => {
    const error = await rejection(client().webhooks.confirm({ event_code: 'CHARGEBACK', data: { paymentReference: 'SHOP1-PXTT-1' } }));
    expectReason(error, 'unsupported');
    expect(error.message).toMatch(/CHARGEBACK/);
    expect(seen).toHaveLength(0);
  });

  it('rejects a malformed event with WebhookParseError, and bad options with RequestValidationError', async () => {
    await expect(client().webhooks.confirm('{')).rejects.toBeInstanceOf(WebhookParseError);
    await expect(client().webhooks.confirm({ event_code: 'AUTHORISATION', data: {} })).rejects.toBeInstanceOf(WebhookParseError);
    await expect(client().webhooks.confirm(authorisation(POS_ID), { maxPages: 0 })).rejects.toBeInstanceOf(RequestValidationError);
    await expect(client().webhooks.confirm(authorisation(POS_ID), { maxPages: 1.5 })).rejects.toThrow(/options\.maxPages/);
    await expect(client().webhooks.confirm(authorisation(POS_ID), { sessionId: '' })).rejects.toThrow(/options\.sessionId/);
    expect(seen).toHaveLength(0);
  });

  it('refuses references of another environment or webcode without a request, when it knows the client', async () => {
    const sdk = client();
    const webhooks = new Webhooks({
      sessions: sdk.sessions,
      pos: sdk.pos,
      modifications: sdk.modifications,
      environment: 'test',
      webcode: 'SHOP1',
    });
    const live = await rejection(webhooks.confirm(authorisation('SHOP1-POSX-1700000000')));
    expectReason(live, 'not-found');
    expect(live.message).toMatch(/live reference/);
    const otherShop = await rejection(webhooks.confirm(authorisation('SHOP2-PXTT-1')));
    expect(otherShop.message).toMatch(/webcode SHOP2/);
    expect(seen).toHaveLength(0);
  });

  it('stops when the signal aborts', async () => {
    respond('get', POS_PATH, () => new Promise(() => undefined));
    const controller = new AbortController();
    const pending = client().webhooks.confirm(authorisation(POS_ID), { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('shutting down')), 10);
    await expect(pending).rejects.toThrow('shutting down');
  });

  it('types the result by event', () => {
    const webhooks = client().webhooks;
    expectTypeOf(webhooks.confirm).toBeCallableWith(authorisation(POS_ID));
    const typed = () => ({
      authorisation: webhooks.confirm(authorisation(POS_ID)),
      refund: webhooks.confirm(refundEvent),
      raw: webhooks.confirm('{}'),
    });
    expectTypeOf<Awaited<ReturnType<typeof typed>['authorisation']>>().toEqualTypeOf<ConfirmedPosPayment | ConfirmedSessionPayment>();
    expectTypeOf<Awaited<ReturnType<typeof typed>['refund']>>().toEqualTypeOf<ConfirmedRefund>();
    expectTypeOf<Awaited<ReturnType<typeof typed>['raw']>>().toEqualTypeOf<ConfirmedWebhook>();
    expectTypeOf<Awaited<ReturnType<typeof typed>['authorisation']>['outcome']>().toEqualTypeOf<PaymentOutcome>();
    expectTypeOf<PaymentOutcome>().toEqualTypeOf<'authorised' | 'refused'>();
    expectTypeOf<ConfirmedRefund['outcome']>().toEqualTypeOf<RefundOutcome>();
    expectTypeOf<ConfirmedWebhook['outcome']>().toEqualTypeOf<WebhookOutcome>();
    expect(PAYMENT_OUTCOMES).toEqual(['authorised', 'refused']);
    expect(REFUND_OUTCOMES).toEqual(['refunded', 'failed']);
  });
});
