import { describe, expect, it } from 'vitest';
import { parseReference, RequestValidationError } from '../src/index.js';
import { client, respond, seen, success, useMsw } from './support/msw.js';
import { rejection } from './support/rejection.js';

useMsw();

describe('parseReference', () => {
  it.each([
    ['SHOP1-EXT-1700000000', 'session', 'live'],
    ['SHOP1-EXTT-1700000000', 'session', 'test'],
    ['SHOP1-PXT-42', 'payment', 'live'],
    ['SHOP1-PXTT-42', 'payment', 'test'],
    ['SHOP1-POSX-1700000000', 'posPayment', 'live'],
    ['SHOP1-POSXT-1700000000', 'posPayment', 'test'],
    ['SHOP1-RFX-7', 'refund', 'live'],
    ['SHOP1-RFXT-7', 'refund', 'test'],
    ['SHOP1-CTX-3', 'capture', 'live'],
    ['SHOP1-CTXT-3', 'capture', 'test'],
    ['SHOP1-CAX-9', 'cancel', 'live'],
    ['SHOP1-CAXT-9', 'cancel', 'test'],
  ])('reads %s as a %s of %s', (reference, kind, environment) => {
    expect(parseReference(reference)).toEqual({ kind, webcode: 'SHOP1', environment });
  });

  it('keeps hyphens in the webcode, taking the last infix', () => {
    expect(parseReference('MY-SHOP-2-PXTT-42')).toEqual({ kind: 'payment', webcode: 'MY-SHOP-2', environment: 'test' });
    expect(parseReference('ACME-EXT-EXTT-1')).toEqual({ kind: 'session', webcode: 'ACME-EXT', environment: 'test' });
  });

  it.each(['', 'SHOP1', 'SHOP1-XYZ-1', 'SHOP1-EXT-', '-EXT-123', 'SHOP1-ext-1', 'SHOP1-PXTT-4 2', 42, null])(
    'returns null for %j',
    (value) => {
      expect(parseReference(value as string)).toBeNull();
    },
  );
});

describe('the client refuses references it cannot use', () => {
  it.each([
    ['a live session on a test client', (c = client()) => c.sessions.retrieve('SHOP1-EXT-1'), 'sessionId', 'live reference'],
    ['another webcode', (c = client()) => c.sessions.retrieve('OTHER-EXTT-1'), 'sessionId', 'webcode OTHER'],
    [
      'a live payment in a refund',
      (c = client()) => c.modifications.refund({ paymentReference: 'SHOP1-PXT-1' }),
      'paymentReference',
      'live',
    ],
    [
      'a payment of another webcode in a capture',
      (c = client()) => c.modifications.capture({ paymentReference: 'OTHER-PXTT-1' }),
      'paymentReference',
      'OTHER',
    ],
    [
      'a live POS payment in a cancel',
      (c = client()) => c.modifications.cancel({ paymentReference: 'SHOP1-POSX-1' }),
      'paymentReference',
      'live',
    ],
    [
      'a test POS payment on a live client',
      (c = client({ environment: 'live' })) => c.pos.listModifications('SHOP1-POSXT-1'),
      'posPaymentId',
      'test reference',
    ],
    [
      'a test payment on a live client',
      (c = client({ environment: 'live' })) => c.modifications.extend({ paymentReference: 'SHOP1-PXTT-1' }),
      'paymentReference',
      'test',
    ],
  ])('%s, before sending', async (_label, call, path, words) => {
    const error = await rejection(call());
    expect(error).toBeInstanceOf(RequestValidationError);
    const issue = (error as RequestValidationError).issues[0];
    expect(issue?.path).toBe(path);
    expect(issue?.message).toContain(words);
    expect(seen).toHaveLength(0);
  });

  it('sends references of its own environment and webcode, and ones in no known format', async () => {
    respond('get', '/external/v1/test/payment/session/:id', ({ url }) =>
      success({
        sessionId: decodeURIComponent(url.split('/').pop()?.split('?')[0] ?? ''),
        status: 'pending',
        amount: { value: 1, currency: 'EUR' },
      }),
    );
    await client().sessions.retrieve('SHOP1-EXTT-1');
    await client().sessions.retrieve('legacy-id-77');
    expect(seen.map((request) => request.url.pathname)).toEqual([
      '/external/v1/test/payment/session/SHOP1-EXTT-1',
      '/external/v1/test/payment/session/legacy-id-77',
    ]);
  });
});
