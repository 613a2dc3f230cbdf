/**
 * Type-level tests. `expectTypeOf` is a no-op at run time; the assertions are enforced by
 * `tsc --noEmit` (part of `npm test`), as are the `@ts-expect-error` lines, which fail the
 * type check if the line they guard ever compiles. Nothing here sends a request: calls only
 * appear inside functions that are never invoked, or as method types.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AmountParams,
  APIPromise,
  type ApiError,
  type CaptureParams,
  type CreatePosPaymentParams,
  type CreateSessionParams,
  type Currency,
  ErrorCode,
  type IdempotencyConflictError,
  isCurrency,
  type ListModificationsParams,
  type ListPosPaymentsParams,
  type ListSessionsParams,
  type ModificationAmountParams,
  type ModificationRecord,
  type ModificationStatus,
  type ModificationType,
  type Page,
  Paginator,
  type PaymentClient,
  type PaymentSession,
  type PosPayment,
  type PosPaymentStatus,
  type PosRecoveryState,
  type RateLimitError,
  type RecoveredPosPayment,
  type RefundParams,
  type RequestOptions,
  type Session,
  type SessionListItem,
  type SessionStatus,
  type Terminal,
  type TerminalStatus,
  type WithResponse,
} from '../src/index.js';
import { client } from './support/msw.js';

const urls = { urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' };
const eur = { value: 1000, currency: 'EUR' } as const;

describe('method signatures', () => {
  // Constructing a client sends nothing; its methods are only inspected, never called.
  const c = client();

  it('sessions.create returns APIPromise<PaymentSession> and resolves to PaymentSession', () => {
    expectTypeOf(c.sessions.create).parameter(0).toEqualTypeOf<CreateSessionParams>();
    expectTypeOf(c.sessions.create).parameter(1).toEqualTypeOf<RequestOptions | undefined>();
    expectTypeOf(c.sessions.create).returns.toEqualTypeOf<APIPromise<PaymentSession>>();
    expectTypeOf(c.sessions.create).returns.resolves.toEqualTypeOf<PaymentSession>();
    expectTypeOf<PaymentSession['sessionId']>().toEqualTypeOf<string>();
    expectTypeOf<PaymentSession['paymentUrl']>().toEqualTypeOf<string>();
    expectTypeOf<APIPromise<PaymentSession>>().toExtend<Promise<PaymentSession>>();
  });

  it('.withResponse() resolves to { data, response, idempotencyKey }', () => {
    expectTypeOf<APIPromise<PaymentSession>['withResponse']>().returns.resolves.toEqualTypeOf<{
      data: PaymentSession;
      response: Response;
      idempotencyKey: string | undefined;
    }>();
    expectTypeOf<WithResponse<PaymentSession>>().toEqualTypeOf<{
      data: PaymentSession;
      response: Response;
      idempotencyKey: string | undefined;
    }>();
  });

  it('the other single-result methods resolve to their records', () => {
    expectTypeOf(c.sessions.retrieve).parameters.toEqualTypeOf<[sessionId: string, options?: RequestOptions | undefined]>();
    expectTypeOf(c.sessions.retrieve).returns.toEqualTypeOf<APIPromise<Session>>();
    expectTypeOf(c.sessions.listModifications).returns.toEqualTypeOf<APIPromise<ModificationRecord[]>>();
    expectTypeOf(c.sessions.listModifications).returns.resolves.toEqualTypeOf<ModificationRecord[]>();
    expectTypeOf(c.pos.listModifications).returns.resolves.toEqualTypeOf<ModificationRecord[]>();
    expectTypeOf(c.pos.createPayment).parameter(0).toEqualTypeOf<CreatePosPaymentParams | PosRecoveryState>();
    expectTypeOf(c.pos.createPayment).returns.resolves.toEqualTypeOf<RecoveredPosPayment>();
    expectTypeOf<RecoveredPosPayment['recovered']>().toEqualTypeOf<true | undefined>();
    expectTypeOf<RecoveredPosPayment>().toExtend<PosPayment>();
    expectTypeOf(c.terminals.list).returns.toEqualTypeOf<APIPromise<Terminal[]>>();
    expectTypeOf(c.terminals.list).returns.resolves.toEqualTypeOf<Terminal[]>();
  });

  it('listings return a Paginator of their item type', () => {
    expectTypeOf(c.sessions.list).returns.toEqualTypeOf<Paginator<SessionListItem>>();
    expectTypeOf(c.sessions.list).parameter(0).toEqualTypeOf<ListSessionsParams | undefined>();
    expectTypeOf(c.pos.list).returns.toEqualTypeOf<Paginator<PosPayment>>();
    expectTypeOf(c.pos.list).parameter(0).toEqualTypeOf<ListPosPaymentsParams | undefined>();
    expectTypeOf(c.modifications.list).returns.toEqualTypeOf<Paginator<ModificationRecord>>();
    expectTypeOf(c.modifications.list).parameter(0).toEqualTypeOf<ListModificationsParams | undefined>();
  });

  it('a Paginator is async-iterable over items and exposes pages(), firstPage() and toArray()', () => {
    type P = Paginator<SessionListItem>;
    expectTypeOf<P>().toExtend<AsyncIterable<SessionListItem>>();
    expectTypeOf<P['firstPage']>().returns.resolves.toEqualTypeOf<Page<SessionListItem>>();
    expectTypeOf<P['pages']>().returns.toEqualTypeOf<AsyncGenerator<Page<SessionListItem>, void, undefined>>();
    expectTypeOf<P['toArray']>().returns.resolves.toEqualTypeOf<SessionListItem[]>();
    expectTypeOf<P['toArray']>().parameter(0).toEqualTypeOf<{ max?: number } | undefined>();
    expectTypeOf<Page<PosPayment>>().toEqualTypeOf<{ items: PosPayment[]; cursor: string | null; hasMore: boolean; total: number }>();

    async function neverCalled(paginator: Paginator<ModificationRecord>) {
      for await (const item of paginator) expectTypeOf(item).toEqualTypeOf<ModificationRecord>();
      for await (const page of paginator.pages()) expectTypeOf(page.items).toEqualTypeOf<ModificationRecord[]>();
    }
    expectTypeOf(neverCalled).toBeFunction();
  });
});

describe('open status enums', () => {
  it('SessionStatus keeps the known literals and accepts any string', () => {
    expectTypeOf<SessionStatus>().toEqualTypeOf<'pending' | 'completed' | 'failed' | 'expired' | 'cancelled' | (string & {})>();
    expectTypeOf<'completed'>().toExtend<SessionStatus>();
    expectTypeOf<string>().toExtend<SessionStatus>();
    expectTypeOf<SessionStatus>().toExtend<string>();
    expectTypeOf<PaymentSession['status']>().toEqualTypeOf<SessionStatus>();
    expectTypeOf<Session['status']>().toEqualTypeOf<SessionStatus>();
    expectTypeOf<SessionListItem['status']>().toEqualTypeOf<SessionStatus>();
  });

  it('POS, modification and terminal statuses are open too', () => {
    expectTypeOf<PosPaymentStatus>().toEqualTypeOf<'pending' | 'success' | 'failed' | 'timeout' | (string & {})>();
    expectTypeOf<PosPayment['status']>().toEqualTypeOf<PosPaymentStatus>();
    expectTypeOf<ModificationStatus>().toEqualTypeOf<'received' | 'pending' | 'success' | (string & {})>();
    expectTypeOf<ModificationType>().toEqualTypeOf<'refund' | 'capture' | 'cancel' | 'extend' | (string & {})>();
    expectTypeOf<ModificationRecord['status']>().toEqualTypeOf<ModificationStatus>();
    expectTypeOf<ModificationRecord['operationType']>().toEqualTypeOf<ModificationType>();
    expectTypeOf<TerminalStatus>().toEqualTypeOf<'boarded' | (string & {})>();
    expectTypeOf<Terminal['status']>().toEqualTypeOf<TerminalStatus>();
    expectTypeOf<string>().toExtend<PosPayment['status']>();
  });

  it('response amounts keep the currency open; request amounts do not', () => {
    expectTypeOf<PaymentSession['amount']['currency']>().toEqualTypeOf<'EUR' | 'GBP' | 'USD' | (string & {})>();
    expectTypeOf<Currency>().toEqualTypeOf<'EUR' | 'GBP' | 'USD'>();
    expectTypeOf<AmountParams['currency']>().toEqualTypeOf<'EUR' | 'GBP' | 'USD'>();
    expectTypeOf<CreateSessionParams['amount']['currency']>().toEqualTypeOf<'EUR' | 'GBP' | 'USD'>();
    expectTypeOf<CreatePosPaymentParams['amount']['currency']>().toEqualTypeOf<'EUR' | 'GBP' | 'USD'>();
    expectTypeOf<string>().not.toExtend<Currency>();
  });

  it('refund and capture take an amount as the service returned it; isCurrency narrows a read currency', () => {
    expectTypeOf<ModificationAmountParams>().toEqualTypeOf<{ value: number; currency: 'EUR' | 'GBP' | 'USD' | (string & {}) }>();
    expectTypeOf<string>().toExtend<ModificationAmountParams['currency']>();
    expectTypeOf<Session['amount']>().toExtend<ModificationAmountParams>();
    expectTypeOf<PaymentSession['amount']>().toExtend<ModificationAmountParams>();
    expectTypeOf<PosPayment['amount']>().toExtend<ModificationAmountParams>();
    expectTypeOf<NonNullable<ModificationRecord['amount']>>().toExtend<ModificationAmountParams>();
    expectTypeOf<AmountParams>().toExtend<ModificationAmountParams>();
    expectTypeOf<NonNullable<RefundParams['amount']>>().toEqualTypeOf<ModificationAmountParams>();
    expectTypeOf<NonNullable<CaptureParams['amount']>>().toEqualTypeOf<ModificationAmountParams>();
    expectTypeOf(isCurrency).guards.toEqualTypeOf<Currency>();
    function neverCalled(c: PaymentClient, session: Session, posPayment: PosPayment) {
      if (session.paymentReference) void c.modifications.refund({ paymentReference: session.paymentReference, amount: session.amount });
      void c.modifications.capture({ paymentReference: posPayment.posPaymentId, amount: posPayment.amount });
      const currency: string = session.amount.currency;
      // @ts-expect-error a read currency is a string: sessions.create takes only an accepted one
      void c.sessions.create({ amount: { value: 100, currency }, ...urls });
      if (isCurrency(currency)) void c.sessions.create({ amount: { value: 100, currency }, ...urls });
    }
    expect(typeof neverCalled).toBe('function');
    expect([isCurrency('EUR'), isCurrency('GBP'), isCurrency('USD')]).toEqual([true, true, true]);
    expect([isCurrency('eur'), isCurrency('JPY'), isCurrency(''), isCurrency(undefined), isCurrency(978)]).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('request parameters', () => {
  it('date fields take a string or a Date', () => {
    expectTypeOf<CreateSessionParams['deliverAt']>().toEqualTypeOf<string | Date | undefined>();
    expectTypeOf<ListPosPaymentsParams['createdAtStart']>().toEqualTypeOf<string | Date | undefined>();
    expectTypeOf<ListPosPaymentsParams['createdAtEnd']>().toEqualTypeOf<string | Date | undefined>();
  });

  it('required fields are required and webcode is the client’s, not a parameter', () => {
    expectTypeOf<CreateSessionParams>().toHaveProperty('urlOk').toEqualTypeOf<string>();
    expectTypeOf<CreateSessionParams>().toHaveProperty('urlKo').toEqualTypeOf<string>();
    expectTypeOf<CreateSessionParams>().toHaveProperty('amount').toEqualTypeOf<{ value: number; currency: 'EUR' | 'GBP' | 'USD' }>();
    expectTypeOf<CreateSessionParams>().not.toHaveProperty('webcode');
    expectTypeOf<ListSessionsParams>().not.toHaveProperty('webcode');
    expectTypeOf<CreatePosPaymentParams>().not.toHaveProperty('webcode');
  });

  it('rejects at compile time what the service rejects', () => {
    // Every call below only has to type-check (or fail to); the function is never invoked.
    function neverCalled(c: PaymentClient) {
      void c.sessions.create({ amount: eur, ...urls });
      void c.sessions.create({ amount: eur, ...urls, deliverAt: new Date(), countryCode: 'ES', isPreAuth: true });
      void c.pos.list({ createdAtStart: new Date(), createdAtEnd: '2026-01-31 23:59:59', status: 'timeout', order: 'desc' });
      void c.modifications.list({ type: 'chargeback', status: 'anything-new' }); // open enums as filters
      void c.sessions.create({
        // @ts-expect-error JPY is not an accepted currency
        amount: { value: 1000, currency: 'JPY' },
        ...urls,
      });
      void c.pos.createPayment({
        poiId: 'V400m-TEST-000001',
        // @ts-expect-error a currency must be uppercase
        amount: { value: 1000, currency: 'eur' },
      });
      // @ts-expect-error urlOk is required
      void c.sessions.create({ amount: eur, urlKo: urls.urlKo });
      // @ts-expect-error amount is required
      void c.sessions.create({ ...urls });
      // @ts-expect-error webcode comes from the client, not from params
      void c.sessions.create({ amount: eur, ...urls, webcode: 'SHOP1' });
      // @ts-expect-error webcode comes from the client, not from params
      void c.sessions.list({ webcode: 'SHOP1' });
      // @ts-expect-error webcode comes from the client, not from params
      void c.terminals.list({ webcode: 'SHOP1' });
      // @ts-expect-error deliverAt is a string or a Date, not a number
      void c.sessions.create({ amount: eur, ...urls, deliverAt: 1767225600000 });
      // @ts-expect-error pos.list takes camelCase names; created_at_start is the wire name
      void c.pos.list({ created_at_start: '2026-01-01 00:00:00' });
      // @ts-expect-error order is asc or desc
      void c.pos.list({ order: 'newest' });
      // @ts-expect-error take is a number
      void c.sessions.list({ take: '10' });
      // @ts-expect-error unknown request options are rejected
      void c.terminals.list({}, { retries: 3 });
    }
    expectTypeOf(neverCalled).toBeFunction();
    expect(typeof neverCalled).toBe('function');
  });
});

describe('errors and options', () => {
  it('error classes carry typed details', () => {
    expectTypeOf<RateLimitError['retryAfterMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<IdempotencyConflictError['reason']>().toEqualTypeOf<'body-mismatch' | 'endpoint-mismatch'>();
    expectTypeOf<ApiError['status']>().toEqualTypeOf<number>();
    expectTypeOf<ApiError['code']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<ApiError['traceId']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<RateLimitError>().toExtend<ApiError>();
    expectTypeOf<IdempotencyConflictError>().toExtend<ApiError>();
  });

  it('ErrorCode members are literal types', () => {
    expectTypeOf(ErrorCode.TERMINAL_BUSY).toEqualTypeOf<13005>();
    expectTypeOf(ErrorCode.TERMINAL_COMMUNICATION).toEqualTypeOf<13004>();
    expectTypeOf(ErrorCode.INVALID_REQUEST).toEqualTypeOf<12001>();
    expectTypeOf(ErrorCode.PERMISSION_DENIED).toEqualTypeOf<11008>();
    expectTypeOf<ErrorCode>().toEqualTypeOf<12001 | 12002 | 12006 | 12009 | 11008 | 13004 | 13005>();
    expect(ErrorCode.TERMINAL_BUSY).toBe(13005);
  });

  it('RequestOptions has exactly the documented keys', () => {
    expectTypeOf<keyof RequestOptions>().toEqualTypeOf<'idempotencyKey' | 'timeout' | 'signal' | 'maxRetries' | 'headers'>();
    expectTypeOf<RequestOptions>().toEqualTypeOf<{
      idempotencyKey?: string | undefined;
      timeout?: number | undefined;
      signal?: AbortSignal | undefined;
      maxRetries?: number | undefined;
      headers?: Record<string, string> | undefined;
    }>();
  });

  it('runtime exports match their types', () => {
    expect(APIPromise.prototype).toBeInstanceOf(Promise);
    expect(typeof Paginator.prototype[Symbol.asyncIterator]).toBe('function');
  });
});
