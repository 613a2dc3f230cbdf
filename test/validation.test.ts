import { beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { changesMadeBy } from '../src/core/schema-changes.js';
import { compile } from '../src/core/schema-compiler.js';
import {
  type CreatePosPaymentParams,
  type CreateSessionParams,
  type PaymentClient,
  type RequestOptions,
  RequestValidationError,
  ResponseValidationError,
} from '../src/index.js';
import * as modifications from '../src/schemas/modifications.js';
import * as pos from '../src/schemas/pos.js';
import * as sessions from '../src/schemas/sessions.js';
import * as terminals from '../src/schemas/terminals.js';
import { client, listing, respond, seen, success, useMsw, WEBCODE } from './support/msw.js';

useMsw();

/** The `response` schema of every endpoint the resources declare. */
const responseSchemas = {
  PaymentSession: sessions.PaymentSessionSchema,
  Session: sessions.SessionSchema,
  SessionList: sessions.SessionListSchema,
  ModificationsOfPayment: modifications.ModificationsOfPaymentSchema,
  PosPayment: pos.PosPaymentSchema,
  PosPaymentList: pos.PosPaymentListSchema,
  RefundAcknowledgement: modifications.RefundAcknowledgementSchema,
  CaptureAcknowledgement: modifications.CaptureAcknowledgementSchema,
  CancelAcknowledgement: modifications.CancelAcknowledgementSchema,
  ExtendAcknowledgement: modifications.ExtendAcknowledgementSchema,
  ModificationList: modifications.ModificationListSchema,
  TerminalList: terminals.TerminalListSchema,
};

const T = '/external/v1/test';
const amount = { value: 1050, currency: 'EUR' } as const;
const meta = { cursor: null, hasMore: false, total: 1 };
const validSession = { amount, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' };
const validPos = { poiId: 'V400m-TEST-000001', amount };
const created = {
  sessionId: 'SHOP1-EXTT-1700000000',
  paymentUrl: 'https://pay.test.invalid/pay-external-test/tok',
  status: 'pending',
  amount,
};
const session = { sessionId: 'SHOP1-EXTT-1700000000', status: 'pending', amount, createdAt: '2026-01-01 10:00:00' };
const posPayment = {
  posPaymentId: 'SHOP1-POSXT-1',
  paymentReference: 'SHOP1-POSXT-1',
  poiId: 'V400m-TEST-000001',
  amount,
  status: 'success',
};
const modification = {
  operationReference: 'SHOP1-RFXT-1',
  operationType: 'refund',
  paymentReference: 'SHOP1-PXTT-1',
  status: 'success',
  amount,
};

// Every endpoint answers successfully, so a request that should have been stopped is recorded in `seen`.
beforeEach(() => {
  respond('post', `${T}/payment/session`, () => success(created, 201));
  respond('get', `${T}/payment/session/:id`, () => success(session));
  respond('get', `${T}/payment/sessions`, () => success(listing('payments', [session], meta)));
  respond('get', `${T}/payment/session/:id/modifications`, () => success([modification]));
  respond('post', `${T}/payment/refund`, () => success({ refundReference: 'SHOP1-RFXT-1', status: 'pending' }, 202));
  respond('post', `${T}/payment/capture`, () => success({ captureReference: 'SHOP1-CTX-1', status: 'received' }, 202));
  respond('post', `${T}/payment/cancel`, () => success({ cancelReference: 'SHOP1-CAX-1', status: 'received' }, 202));
  respond('post', `${T}/payment/extend`, () => success(null));
  respond('get', `${T}/modifications`, () => success(listing('modifications', [modification], meta)));
  respond('get', `${T}/pos/terminals`, () => success([]));
  respond('post', `${T}/pos/payment`, () => success(posPayment));
  respond('get', `${T}/pos/payments`, () => success(listing('posPayments', [posPayment], meta)));
  respond('get', `${T}/pos/payment/:id/modifications`, () => success([modification]));
});

/** Casts deliberately wrong input past the compiler: the SDK must reject it at run time. */
function bad<T>(value: unknown): T {
  return value as T;
}

function without<T extends object>(object: T, key: keyof T): Partial<T> {
  const copy: Partial<T> = { ...object };
  delete copy[key];
  return copy;
}

/** Awaits `call`, expects a RequestValidationError naming `paths`, and checks nothing was sent. */
async function expectRejected(call: () => PromiseLike<unknown>, paths: string[]): Promise<RequestValidationError> {
  let error: unknown;
  try {
    await call();
  } catch (caught) {
    error = caught;
  }
  if (error === undefined) {
    const sent = seen.map((request) => `${request.method} ${request.url.pathname} ${request.body}`);
    expect.fail(`the call resolved instead of rejecting; sent: ${sent.join(' | ')}`);
  }
  expect(error).toBeInstanceOf(RequestValidationError);
  const validation = error as RequestValidationError;
  const issuePaths = validation.issues.map((issue) => issue.path);
  for (const path of paths) {
    expect(issuePaths).toContain(path);
    expect(validation.message).toContain(path);
  }
  expect(seen).toHaveLength(0);
  return validation;
}

function sentBody(): Record<string, unknown> {
  expect(seen).toHaveLength(1);
  return JSON.parse(seen[0]?.body ?? '') as Record<string, unknown>;
}

function sentQuery(): URLSearchParams {
  expect(seen).toHaveLength(1);
  return seen[0]?.url.searchParams ?? new URLSearchParams();
}

describe('sessions.create: documented rules are enforced before sending', () => {
  const create = (params: unknown) => (c: PaymentClient) => c.sessions.create(bad<CreateSessionParams>(params));

  it.each([
    ['a non-integer amount', { ...validSession, amount: { value: 10.5, currency: 'EUR' } }, 'amount.value'],
    ['an amount given as a string', { ...validSession, amount: { value: '1050', currency: 'EUR' } }, 'amount.value'],
    ['an unsupported currency', { ...validSession, amount: { value: 1050, currency: 'JPY' } }, 'amount.currency'],
    ['a lowercase currency', { ...validSession, amount: { value: 1050, currency: 'eur' } }, 'amount.currency'],
    ['a missing amount', without(validSession, 'amount'), 'amount'],
    ['an invalid urlOk', { ...validSession, urlOk: 'not a url' }, 'urlOk'],
    ['a non-http urlOk', { ...validSession, urlOk: 'ftp://shop.example/ok' }, 'urlOk'],
    ['a javascript: urlKo', { ...validSession, urlKo: 'javascript:alert(1)' }, 'urlKo'],
    ['a missing urlKo', without(validSession, 'urlKo'), 'urlKo'],
    ['a urlKo with CR/LF', { ...validSession, urlKo: 'https://shop.example/ko\r\nSet-Cookie: a=b' }, 'urlKo'],
    ['a urlOk with a tab', { ...validSession, urlOk: 'https://shop.example/o\tk' }, 'urlOk'],
    ['a urlOk with DEL', { ...validSession, urlOk: 'https://shop.example/ok\u007f' }, 'urlOk'],
    ['a urlKo with a C1 control (NEL)', { ...validSession, urlKo: 'https://shop.example/ko\u0085' }, 'urlKo'],
    ['a 3-letter countryCode', { ...validSession, countryCode: 'ESP' }, 'countryCode'],
    ['a lowercase countryCode', { ...validSession, countryCode: 'es' }, 'countryCode'],
    ['a shopperLocale over 10 characters', { ...validSession, shopperLocale: 'es-ES-x-abc' }, 'shopperLocale'],
    ['a shopperLocale that is not BCP-47', { ...validSession, shopperLocale: 'es_ES!' }, 'shopperLocale'],
    ['a date-only deliverAt', { ...validSession, deliverAt: '2026-01-01' }, 'deliverAt'],
    ['a free-text deliverAt', { ...validSession, deliverAt: 'tomorrow' }, 'deliverAt'],
    ['an invalid Date deliverAt', { ...validSession, deliverAt: new Date('nope') }, 'deliverAt'],
    ['a 256-character description', { ...validSession, description: 'd'.repeat(256) }, 'description'],
    ['a 101-character customReference', { ...validSession, customReference: 'r'.repeat(101) }, 'customReference'],
    ['a non-boolean isPreAuth', { ...validSession, isPreAuth: 'yes' }, 'isPreAuth'],
  ])('rejects %s', async (_label, params, path) => {
    const error = await expectRejected(() => create(params)(client()), [path]);
    expect(error).toMatchObject({ method: 'POST', path: `${T}/payment/session` });
  });

  it('lists several problems together', async () => {
    const params = { ...validSession, amount: { value: 10.5, currency: 'eur' }, urlOk: 'nope', countryCode: 'ESP', take: 3 };
    const error = await expectRejected(() => create(params)(client()), ['amount.value', 'amount.currency', 'urlOk', 'countryCode']);
    expect(error.issues.length).toBeGreaterThanOrEqual(5); // the unknown `take` too
  });

  it.each([
    ['a missing amount', without(validSession, 'amount'), 'amount', 'is required'],
    ['a numeric currency', { ...validSession, amount: { value: 1050, currency: 7 } }, 'amount.currency', 'must be one of EUR, GBP, USD'],
    ['a number as description', { ...validSession, description: 42 }, 'description', 'must be a string'],
    ['a non-boolean isPreAuth', { ...validSession, isPreAuth: 'yes' }, 'isPreAuth', 'must be a boolean'],
    ['an invalid Date deliverAt', { ...validSession, deliverAt: new Date('nope') }, 'deliverAt', 'must be a valid Date'],
    ['a number as deliverAt', { ...validSession, deliverAt: 17 }, 'deliverAt', 'must be a date or a string'],
    ['a free-text deliverAt', { ...validSession, deliverAt: 'tomorrow' }, 'deliverAt', 'must be an ISO 8601 date-time'],
    ['a missing urlOk', without(validSession, 'urlOk'), 'urlOk', 'is required'],
    ['a missing urlKo', without(validSession, 'urlKo'), 'urlKo', 'is required'],
    ['a missing amount.value', { ...validSession, amount: { currency: 'EUR' } }, 'amount.value', 'is required'],
    ['a missing amount.currency', { ...validSession, amount: { value: 100 } }, 'amount.currency', 'is required'],
    ['a non-URL urlKo', { ...validSession, urlKo: 'shop' }, 'urlKo', 'must be an absolute http(s) URL'],
    ['an unknown key', { ...validSession, urlOK: 'https://typo.example' }, 'urlOK', 'is not a known field'],
  ])('says what is wrong with %s', async (_label, params, path, message) => {
    const error = await expectRejected(() => create(params)(client()), [path]);
    expect(error.issues.find((issue) => issue.path === path)?.message).toContain(message);
  });

  it.each([
    ['webcode at the top level', { ...validSession, webcode: 'OTHER' }, 'webcode'],
    ['an unknown top-level key', { ...validSession, urlOK: 'https://typo.example' }, 'urlOK'],
    ['an unknown key inside amount', { ...validSession, amount: { ...amount, cents: true } }, 'cents'],
  ])('rejects %s', async (_label, params, key) => {
    const error = await expectRejected(() => create(params)(client()), []);
    expect(error.message).toContain(key);
  });

  it('sends the longest allowed values and the valid edge forms', async () => {
    await client().sessions.create({
      amount: { value: 1, currency: 'USD' },
      urlOk: 'http://localhost:3000/ok?order=42',
      urlKo: 'https://shop.example/ko',
      countryCode: 'ES',
      shopperLocale: 'zh-Hant-TW', // 10 characters
      deliverAt: '2026-01-31T10:00:00+01:00',
      description: 'd'.repeat(255),
      customReference: 'r'.repeat(100),
      isPreAuth: false,
    });
    expect(sentBody()).toEqual({
      webcode: WEBCODE,
      amount: { value: 1, currency: 'USD' },
      urlOk: 'http://localhost:3000/ok?order=42',
      urlKo: 'https://shop.example/ko',
      countryCode: 'ES',
      shopperLocale: 'zh-Hant-TW',
      deliverAt: '2026-01-31T10:00:00+01:00',
      description: 'd'.repeat(255),
      customReference: 'r'.repeat(100),
      isPreAuth: false,
    });
  });

  it.each([
    '2026-12-01T10:00',
    '2026-12-01T10:00Z',
    '2026-12-01T10:00+01:00',
    '2026-12-01T10:00:00',
    '2026-12-01T10:00:00.123456Z',
    '2026-12-01T10:00:00,5-05:30',
    '2026-12-01T10:00+0100',
    '2026-12-01T10:00-03',
    '20261201T1000Z',
    '20261201T100000+0100',
    '2028-02-29T10:00Z',
    '2000-02-29T00:00Z',
    '0000-02-29T00:00Z',
  ])('sends deliverAt %s as given', async (deliverAt) => {
    await client().sessions.create({ ...validSession, deliverAt });
    expect(sentBody().deliverAt).toBe(deliverAt);
  });

  it.each([
    '2026-02-30T10:00:00Z',
    '2027-02-29T10:00Z',
    '1900-02-29T10:00Z',
    '2026-04-31T10:00Z',
    '2026-13-01T10:00Z',
    '2026-12-00T10:00Z',
    '2026-12-01T24:00Z',
    '2026-12-01T10:60Z',
    '2026-12-01T10:00:60Z',
    '2026-12-01T10:00+24:00',
    '2026-12-01T10',
    '2026-12-01 10:00:00',
  ])('refuses deliverAt %s before sending, saying what is wrong', async (deliverAt) => {
    const error = await expectRejected(() => client().sessions.create({ ...validSession, deliverAt }), ['deliverAt']);
    expect(error.issues[0]?.message).toBe('must be an ISO 8601 date-time, for example 2026-01-31T10:00:00Z');
  });

  it('sends a Date deliverAt as an ISO 8601 string', async () => {
    await client().sessions.create({ ...validSession, deliverAt: new Date(Date.UTC(2026, 0, 31, 10, 0, 0)) });
    expect(sentBody().deliverAt).toBe('2026-01-31T10:00:00.000Z');
  });

  it.each(['GBP', 'USD', 'EUR'] as const)('accepts %s', async (currency) => {
    await client().sessions.create({ ...validSession, amount: { value: 999, currency } });
    expect(sentBody().amount).toEqual({ value: 999, currency });
  });
});

describe('other endpoints: documented rules are enforced before sending', () => {
  it.each([
    ['pos.createPayment without poiId', (c: PaymentClient) => c.pos.createPayment(bad(without(validPos, 'poiId'))), 'poiId'],
    ['pos.createPayment with an empty poiId', (c: PaymentClient) => c.pos.createPayment({ ...validPos, poiId: '' }), 'poiId'],
    [
      'pos.createPayment with a non-integer amount',
      (c: PaymentClient) => c.pos.createPayment({ ...validPos, amount: { value: 12.34, currency: 'EUR' } }),
      'amount.value',
    ],
    [
      'pos.createPayment with an unsupported currency',
      (c: PaymentClient) => c.pos.createPayment(bad<CreatePosPaymentParams>({ ...validPos, amount: { value: 100, currency: 'CHF' } })),
      'amount.currency',
    ],
    [
      'pos.createPayment with a 256-character description',
      (c: PaymentClient) => c.pos.createPayment({ ...validPos, description: 'd'.repeat(256) }),
      'description',
    ],
    [
      'pos.createPayment with a 101-character customReference',
      (c: PaymentClient) => c.pos.createPayment({ ...validPos, customReference: 'r'.repeat(101) }),
      'customReference',
    ],
    ['refund without paymentReference', (c: PaymentClient) => c.modifications.refund(bad({ amount })), 'paymentReference'],
    ['capture without paymentReference', (c: PaymentClient) => c.modifications.capture(bad({ amount })), 'paymentReference'],
    ['cancel without paymentReference', (c: PaymentClient) => c.modifications.cancel(bad({})), 'paymentReference'],
    ['extend without paymentReference', (c: PaymentClient) => c.modifications.extend(bad({})), 'paymentReference'],
    ['cancel with an empty paymentReference', (c: PaymentClient) => c.modifications.cancel({ paymentReference: '' }), 'paymentReference'],
    [
      'refund with a lowercase currency',
      (c: PaymentClient) => c.modifications.refund(bad({ paymentReference: 'SHOP1-PXTT-1', amount: { value: 100, currency: 'eur' } })),
      'amount.currency',
    ],
    ['sessions.retrieve with an empty id', (c: PaymentClient) => c.sessions.retrieve(''), 'sessionId'],
    ['sessions.listModifications with an empty id', (c: PaymentClient) => c.sessions.listModifications(' '), 'sessionId'],
    ['pos.listModifications with an empty id', (c: PaymentClient) => c.pos.listModifications(''), 'posPaymentId'],
    [
      'terminals.list with a non-boolean syncFromProvider',
      (c: PaymentClient) => c.terminals.list(bad({ syncFromProvider: 'true' })),
      'syncFromProvider',
    ],
  ])('rejects %s', async (_label, call, path) => {
    await expectRejected(() => call(client()), [path]);
  });

  it.each([
    ['pos.createPayment without poiId', (c: PaymentClient) => c.pos.createPayment(bad(without(validPos, 'poiId'))), 'poiId'],
    ['pos.createPayment without amount', (c: PaymentClient) => c.pos.createPayment(bad(without(validPos, 'amount'))), 'amount'],
    ['refund without paymentReference', (c: PaymentClient) => c.modifications.refund(bad({ amount })), 'paymentReference'],
    ['capture without paymentReference', (c: PaymentClient) => c.modifications.capture(bad({})), 'paymentReference'],
    ['cancel without paymentReference', (c: PaymentClient) => c.modifications.cancel(bad({})), 'paymentReference'],
    ['extend without paymentReference', (c: PaymentClient) => c.modifications.extend(bad({})), 'paymentReference'],
  ])('%s says the field is required', async (_label, call, path) => {
    const error = await expectRejected(() => call(client()), [path]);
    expect(error.issues).toContainEqual({ path, message: 'is required' });
  });

  it.each([
    ['pos.createPayment', (c: PaymentClient) => c.pos.createPayment(bad({ ...validPos, webcode: 'OTHER' }))],
    ['modifications.refund', (c: PaymentClient) => c.modifications.refund(bad({ paymentReference: 'SHOP1-PXTT-1', webcode: 'OTHER' }))],
    ['modifications.cancel', (c: PaymentClient) => c.modifications.cancel(bad({ paymentReference: 'SHOP1-PXTT-1', webcode: 'OTHER' }))],
    // extend passes unknown fields through (its body is not documented), but webcode belongs to the client.
    ['modifications.extend', (c: PaymentClient) => c.modifications.extend(bad({ paymentReference: 'SHOP1-PXTT-1', webcode: 'OTHER' }))],
    ['terminals.list', (c: PaymentClient) => c.terminals.list(bad({ webcode: 'OTHER' }))],
  ])('%s rejects a webcode in params', async (_label, call) => {
    const error = await expectRejected(() => call(client()), []);
    expect(error.message).toContain('webcode');
  });

  it('pos.createPayment sends the longest allowed description and customReference', async () => {
    await client().pos.createPayment({ ...validPos, description: 'd'.repeat(255), customReference: 'r'.repeat(100) });
    expect(sentBody()).toMatchObject({
      webcode: WEBCODE,
      poiId: validPos.poiId,
      description: 'd'.repeat(255),
      customReference: 'r'.repeat(100),
    });
  });

  it('refund and capture take a retrieved amount as it comes (currency a string) and send only value and currency', async () => {
    const retrieved = await client().sessions.retrieve(session.sessionId);
    seen.length = 0;
    // A read amount keeps fields the SDK does not know; they are not sent.
    const withUnknown: typeof retrieved.amount = { ...retrieved.amount, formatted: '10.50 EUR' };
    await client().modifications.refund({ paymentReference: 'SHOP1-PXTT-1', amount: withUnknown });
    expect(sentBody()).toEqual({ webcode: WEBCODE, paymentReference: 'SHOP1-PXTT-1', amount: { value: 1050, currency: 'EUR' } });
    seen.length = 0;
    await client().modifications.capture({ paymentReference: 'SHOP1-PXTT-1', amount: retrieved.amount });
    expect(sentBody()).toEqual({ webcode: WEBCODE, paymentReference: 'SHOP1-PXTT-1', amount: { value: 1050, currency: 'EUR' } });
  });

  it.each([
    [
      'refund',
      (c: PaymentClient, currency: string) =>
        c.modifications.refund({ paymentReference: 'SHOP1-PXTT-1', amount: { value: 100, currency } }),
    ],
    [
      'capture',
      (c: PaymentClient, currency: string) =>
        c.modifications.capture({ paymentReference: 'SHOP1-PXTT-1', amount: { value: 100, currency } }),
    ],
  ])('%s still refuses a currency the service does not accept, before sending', async (_label, call) => {
    for (const currency of ['JPY', 'eur', '']) {
      const error = await expectRejected(() => call(client(), currency), ['amount.currency']);
      expect(error.issues).toEqual([{ path: 'amount.currency', message: 'must be one of EUR, GBP, USD (uppercase)' }]);
    }
    const missing = await expectRejected(
      () => client().modifications.refund(bad({ paymentReference: 'SHOP1-PXTT-1', amount: { value: 100 } })),
      ['amount.currency'],
    );
    expect(missing.issues).toEqual([{ path: 'amount.currency', message: 'is required' }]);
  });

  it('extend sends fields it does not know as given', async () => {
    await client().modifications.extend({ paymentReference: 'SHOP1-PXTT-1', days: 7 });
    expect(sentBody()).toEqual({ webcode: WEBCODE, paymentReference: 'SHOP1-PXTT-1', days: 7 });
  });
});

describe('listing parameters: rejected when the paginator first fetches', () => {
  it.each([
    ['sessions.list take 0', (c: PaymentClient) => c.sessions.list({ take: 0 }), 'take'],
    ['sessions.list take 101', (c: PaymentClient) => c.sessions.list({ take: 101 }), 'take'],
    ['sessions.list take 2.5', (c: PaymentClient) => c.sessions.list({ take: 2.5 }), 'take'],
    ['sessions.list an unknown status', (c: PaymentClient) => c.sessions.list(bad({ status: 'done' })), 'status'],
    ['sessions.list an empty cursor', (c: PaymentClient) => c.sessions.list({ cursor: '' }), 'cursor'],
    ['pos.list take 0', (c: PaymentClient) => c.pos.list({ take: 0 }), 'take'],
    ['pos.list take 101', (c: PaymentClient) => c.pos.list({ take: 101 }), 'take'],
    ['pos.list order "up"', (c: PaymentClient) => c.pos.list(bad({ order: 'up' })), 'order'],
    ['pos.list an unknown status', (c: PaymentClient) => c.pos.list(bad({ status: 'ok' })), 'status'],
    ['pos.list an invalid Date', (c: PaymentClient) => c.pos.list({ createdAtStart: new Date('nope') }), 'createdAtStart'],
    ['modifications.list take 101', (c: PaymentClient) => c.modifications.list({ take: 101 }), 'take'],
    ['modifications.list take 0', (c: PaymentClient) => c.modifications.list({ take: 0 }), 'take'],
  ])('%s', async (_label, list, path) => {
    const sdk = client();
    const paginator = list(sdk); // building the paginator neither throws nor sends
    expect(seen).toHaveLength(0);
    await expectRejected(() => paginator.firstPage(), [path]);
  });

  it('rejects the wire name created_at_start: pos.list takes createdAtStart', async () => {
    const error = await expectRejected(
      () =>
        client()
          .pos.list(bad({ created_at_start: '2026-01-01 00:00:00' }))
          .firstPage(),
      [],
    );
    expect(error.message).toContain('created_at_start');
  });

  it('rejects an invalid take when iterated with for await', async () => {
    const iterate = async () => {
      for await (const _item of client().sessions.list({ take: 0 })) break;
    };
    await expectRejected(iterate, ['take']);
  });

  it.each([1, 100])('sends take %i', async (take) => {
    await client().sessions.list({ take }).firstPage();
    expect(sentQuery().get('take')).toBe(String(take));
  });

  it('pos.list sends a Date as a UTC record timestamp and a string as given', async () => {
    await client()
      .pos.list({ createdAtStart: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), createdAtEnd: '2026-01-31', order: 'desc', take: 100 })
      .firstPage();
    const query = sentQuery();
    expect(query.get('created_at_start')).toBe('2026-01-02 03:04:05');
    expect(query.get('created_at_end')).toBe('2026-01-31');
    expect(query.get('order')).toBe('desc');
    expect(query.get('take')).toBe('100');
    expect(query.has('createdAtStart')).toBe(false);
  });
});

describe('request options', () => {
  it.each<[string, RequestOptions, string]>([
    ['timeout -1', { timeout: -1 }, 'options.timeout'],
    ['timeout 0', { timeout: 0 }, 'options.timeout'],
    ['timeout 1.5', { timeout: 1.5 }, 'options.timeout'],
    ['maxRetries 1.5', { maxRetries: 1.5 }, 'options.maxRetries'],
    ['maxRetries -1', { maxRetries: -1 }, 'options.maxRetries'],
    ['an empty idempotencyKey', { idempotencyKey: '' }, 'options.idempotencyKey'],
    ['an idempotencyKey with a space', { idempotencyKey: 'order 42' }, 'options.idempotencyKey'],
  ])('%s is rejected and nothing is sent', async (_label, options, path) => {
    await expectRejected(() => client().sessions.create(validSession, options), [path]);
    await expectRejected(() => client().terminals.list({}, options), [path]);
  });
});

describe('response validation', () => {
  it('keeps unknown fields, nested ones too', async () => {
    respond('post', `${T}/payment/session`, () =>
      success({ ...created, riskScore: 3, amount: { ...amount, fxRate: 1.1 }, links: { self: '/x' } }, 201),
    );
    const result = await client().sessions.create(validSession);
    expect(result).toMatchObject({ riskScore: 3, amount: { value: 1050, currency: 'EUR', fxRate: 1.1 }, links: { self: '/x' } });
  });

  it('keeps unknown fields inside list items and attempts', async () => {
    respond('get', `${T}/payment/session/:id`, () =>
      success({ ...session, attempts: [{ paymentReference: 'SHOP1-PXTT-1', status: 'authorised', createdAt: 'x', threeDS: true }] }),
    );
    const result = await client().sessions.retrieve(session.sessionId);
    expect(result.attempts?.[0]).toMatchObject({ threeDS: true });
  });

  it('passes unknown enum values through', async () => {
    respond('get', `${T}/payment/session/:id`, () =>
      success({ ...session, status: 'on_hold', amount: { value: 1050, currency: 'JPY' }, paymentStatus: 'REFUSED' }),
    );
    const result = await client().sessions.retrieve(session.sessionId);
    expect(result).toMatchObject({ status: 'on_hold', amount: { currency: 'JPY' }, paymentStatus: 'REFUSED' });
  });

  it('passes an unknown POS status and modification type through a listing', async () => {
    respond('get', `${T}/pos/payments`, () => success(listing('posPayments', [{ ...posPayment, status: 'reversed' }], meta)));
    respond('get', `${T}/modifications`, () => success(listing('modifications', [{ ...modification, operationType: 'chargeback' }], meta)));
    const sdk = client();
    expect((await sdk.pos.list().firstPage()).items[0]?.status).toBe('reversed');
    expect((await sdk.modifications.list().firstPage()).items[0]?.operationType).toBe('chargeback');
  });

  const badData: [string, unknown, string][] = [
    ['a missing sessionId', { ...created, sessionId: undefined }, 'sessionId'],
    ['a non-integer amount.value', { ...created, amount: { value: 10.5, currency: 'EUR' } }, 'amount.value'],
  ];

  it.each(badData)('%s → ResponseValidationError with the raw body', async (_label, data, path) => {
    const body = JSON.stringify({ success: true, data });
    respond('post', `${T}/payment/session`, () => new Response(body, { status: 201, headers: { 'Content-Type': 'application/json' } }));
    let error: unknown;
    await client()
      .sessions.create(validSession)
      .then(undefined, (caught: unknown) => {
        error = caught;
      });
    expect(error).toBeInstanceOf(ResponseValidationError);
    const validation = error as ResponseValidationError;
    expect(validation).toMatchObject({ body, status: 201, method: 'POST', path: `${T}/payment/session` });
    expect(validation.issues.map((issue) => issue.path).some((issuePath) => issuePath.endsWith(path))).toBe(true);
  });

  it.each(badData)('with validateResponses: false, %s is returned as-is', async (_label, data) => {
    respond('post', `${T}/payment/session`, () => success(data as object, 201));
    const result = await client({ validateResponses: false }).sessions.create(validSession);
    expect(result).toEqual(JSON.parse(JSON.stringify(data)));
  });

  it('words response issues the SDK way, at their paths under data', async () => {
    respond('post', `${T}/payment/session`, () => success({ ...created, sessionId: undefined, amount: { value: 10.5, currency: 7 } }, 201));
    const error = await client()
      .sessions.create(validSession)
      .then(undefined, (caught: unknown) => caught);
    expect((error as ResponseValidationError).issues).toEqual([
      { path: 'data.sessionId', message: 'is required' },
      { path: 'data.amount.value', message: 'must be an integer' },
      { path: 'data.amount.currency', message: 'must be a string' },
    ]);
  });

  // A schema zod cannot compile still validates, through the runtime parser, at about a tenth of
  // the speed on a listing page: this keeps every endpoint's response on the generated check.
  it.each(Object.entries(responseSchemas))('the %s response schema compiles', (_name, schema) => {
    expect(() => compile(schema, { strict: true })).not.toThrow();
  });

  // Valid data of these is returned as parsed from JSON, without zod building a copy of it (the
  // fast path of every record and listing); the two that reshape what they accept are parsed.
  it.each(Object.entries(responseSchemas))('the %s response schema changes only what it should', (name, schema) => {
    const reshaped: Record<string, string[]> = {
      ModificationsOfPayment: ['(root): pipe'],
      ExtendAcknowledgement: ['(root): pipe'],
    };
    expect(changesMadeBy(schema)).toEqual(reshaped[name] ?? []);
  });

  it('the walk behind that test finds what would change a value', () => {
    const changing = z.looseObject({
      a: z.pipe(z.string(), z.transform(Number)),
      b: z._default(z.string(), 'x'),
      c: z.array(z.string().check(z.trim())),
      d: z.nullish(z.catch(z.number(), 0)),
      e: z.coerce.number(),
    });
    expect(changesMadeBy(changing)).toEqual(['a: pipe', 'b: default', 'c[]: overwrite check', 'd: catch', 'e: coercion']);
  });

  it('returns valid data exactly as the service sent it: unknown fields kept, absent fields absent', async () => {
    const data = { ...created, extra: { nested: [1, 2] }, description: null };
    respond('post', `${T}/payment/session`, () => success(data, 201));
    const result = await client().sessions.create(validSession);
    expect(result).toStrictEqual(JSON.parse(JSON.stringify(data)));
  });

  it('a body that is not the envelope → ResponseValidationError with the raw body', async () => {
    const body = JSON.stringify(created);
    respond('post', `${T}/payment/session`, () => new Response(body, { status: 201 }));
    await expect(client().sessions.create(validSession)).rejects.toMatchObject({ name: 'ResponseValidationError', body });
  });

  it('modifications.extend accepts data: null as {}', async () => {
    await expect(client().modifications.extend({ paymentReference: 'SHOP1-PXTT-1' })).resolves.toEqual({});
    expect(seen).toHaveLength(1);
  });

  it('modifications.extend accepts an acknowledgement object, unknown fields kept', async () => {
    const ack = { extendReference: 'SHOP1-EXX-1', paymentReference: 'SHOP1-PXTT-1', status: 'received', expiresAt: '2026-02-01 00:00:00' };
    respond('post', `${T}/payment/extend`, () => success(ack, 202));
    await expect(client().modifications.extend({ paymentReference: 'SHOP1-PXTT-1' })).resolves.toEqual(ack);
  });

  it.each([
    ['an array', [modification]],
    ['{ modifications: [...] }', { modifications: [modification] }],
    ['{ modifications: [...], meta }', listing('modifications', [modification], meta)],
  ])('listModifications accepts data as %s', async (_label, data) => {
    respond('get', `${T}/payment/session/:id/modifications`, () => success(data));
    respond('get', `${T}/pos/payment/:id/modifications`, () => success(data));
    const sdk = client();
    await expect(sdk.sessions.listModifications('SHOP1-EXTT-1')).resolves.toEqual([modification]);
    await expect(sdk.pos.listModifications('SHOP1-POSXT-1')).resolves.toEqual([modification]);
  });

  it.each([
    ['a number', 42, 'data', 'must be an array or an object'],
    ['null', null, 'data', 'must be an array or an object'],
    ['{ modifications: 5 }', { modifications: 5 }, 'data.modifications', 'must be an array'],
    ['{ modifications: [{}] }', { modifications: [{ ...modification, status: 7 }] }, 'data.modifications.0.status', 'must be a string'],
  ])('listModifications given %s as data says what is wrong, where, once', async (_label, data, path, message) => {
    respond(
      'get',
      `${T}/payment/session/:id/modifications`,
      () => new Response(JSON.stringify({ success: true, data }), { headers: { 'content-type': 'application/json' } }),
    );
    const error = (await client()
      .sessions.listModifications('SHOP1-EXTT-1')
      .then(undefined, (caught: unknown) => caught)) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.issues).toEqual([{ path, message }]);
    expect(error.message).not.toMatch(/an array or an array|an object or an object/);
  });

  it('listModifications rejects a record without operationReference', async () => {
    respond('get', `${T}/payment/session/:id/modifications`, () => success([{ ...modification, operationReference: undefined }]));
    await expect(client().sessions.listModifications('SHOP1-EXTT-1')).rejects.toBeInstanceOf(ResponseValidationError);
  });
});
