import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeRedirectData, PaymentClient } from '../src/index.js';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import {
  isLuhnValid,
  POS_TEST_ENDINGS,
  payTestSession,
  posTestAmount,
  TEST_CARDHOLDER_NAMES,
  TEST_CARDS,
  TEST_SUCCESS_CARDHOLDER,
  TEST_TERMINALS,
} from '../src/testing/index.js';

describe('test-mode kit', () => {
  it('lists the seven scripted cardholder names of the reference', () => {
    expect(Object.keys(TEST_CARDHOLDER_NAMES).sort()).toEqual(
      ['CARD_EXPIRED', 'CVC_DECLINED', 'DECLINED', 'ERROR', 'FRAUD', 'INVALID_CARD', 'NOT_ENOUGH_BALANCE'].sort(),
    );
    expect(TEST_CARDHOLDER_NAMES.ERROR.result).toBe('error');
    expect(Object.keys(TEST_CARDHOLDER_NAMES)).not.toContain(TEST_SUCCESS_CARDHOLDER.toUpperCase());
    expect(TEST_SUCCESS_CARDHOLDER.length).toBeGreaterThanOrEqual(3);
  });

  it('offers Luhn-valid cards with CVCs of the right length and a future expiry', () => {
    for (const card of Object.values(TEST_CARDS)) {
      expect(isLuhnValid(card.number)).toBe(true);
      expect(card.number.length).toBeGreaterThanOrEqual(13);
      expect(card.number.length).toBeLessThanOrEqual(19);
      expect(card.cvc).toHaveLength(card.brand === 'amex' ? 4 : 3);
      const expiry = Date.UTC(2000 + Number(card.expiryYear), Number(card.expiryMonth), 0);
      expect(expiry).toBeGreaterThan(Date.now());
    }
  });

  it('checks Luhn', () => {
    expect(isLuhnValid('4111111111111111')).toBe(true);
    expect(isLuhnValid('4111111111111112')).toBe(false);
    expect(isLuhnValid('79927398713')).toBe(true);
    expect(isLuhnValid('4111 1111')).toBe(false);
    expect(isLuhnValid('')).toBe(false);
  });

  it('lists the three simulated terminals, one offline', () => {
    expect(TEST_TERMINALS.map((terminal) => terminal.poiId)).toEqual(['V400m-TEST-000001', 'S1F2-TEST-000002', 'P400Plus-TEST-000003']);
    expect(TEST_TERMINALS.filter((terminal) => terminal.online)).toHaveLength(2);
  });

  it.each([
    ['failed', 1_077],
    ['timeout', 1_099],
    ['busy', 1_055],
    ['success', 1_000],
  ] as const)('makes a %s amount', (outcome, amount) => {
    expect(posTestAmount(outcome)).toBe(amount);
  });

  it('keeps the units of baseCents and always returns positive integer cents', () => {
    expect(posTestAmount('failed', 2_599)).toBe(2_577);
    expect(posTestAmount('timeout', 0)).toBe(99);
    expect(posTestAmount('success', 0)).toBe(100);
    expect(posTestAmount('success', 12_345) % 100).toBe(0);
    for (const outcome of ['success', 'failed', 'timeout', 'busy'] as const) {
      for (const base of [0, 1, 99, 100, 5_055, 123_456]) {
        const amount = posTestAmount(outcome, base);
        expect(Number.isInteger(amount) && amount > 0).toBe(true);
        const ending = amount % 100;
        if (outcome === 'success') expect(Object.values(POS_TEST_ENDINGS)).not.toContain(ending);
        else expect(ending).toBe(POS_TEST_ENDINGS[outcome]);
      }
    }
  });

  it('refuses a bad base', () => {
    expect(() => posTestAmount('failed', -1)).toThrow(RangeError);
    expect(() => posTestAmount('failed', 1.5)).toThrow(RangeError);
    expect(() => posTestAmount('nope' as never)).toThrow(RangeError);
  });
});

describe('payTestSession, against the sandbox over HTTP on 127.0.0.1', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = createSandbox({ posDelayMs: 0 });
    await sandbox.listen();
  });
  afterAll(() => sandbox.close());
  const client = () => new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl: sandbox.baseUrl });
  const params = { amount: { value: 2599, currency: 'EUR' }, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' } as const;

  it('pays a session as the default holder: urlOk with a data token that decodes, session completed', async () => {
    const session = await client().sessions.create(params);
    const outcome = await payTestSession(session.paymentUrl);
    expect(outcome).toMatchObject({ paid: true, redirectUrl: expect.stringMatching(/^https:\/\/shop\.example\/ok\?data=/) });
    const data = await decodeRedirectData(outcome.data ?? '', sandbox.clientSecrets.test);
    const retrieved = await client().sessions.retrieve(session.sessionId);
    expect(retrieved.status).toBe('completed');
    expect(data.paymentReference).toBe(retrieved.paymentReference);
  });

  it.each(Object.keys(TEST_CARDHOLDER_NAMES))('as %s: sent to urlKo, not paid', async (holderName) => {
    const session = await client().sessions.create(params);
    const outcome = await payTestSession(session.paymentUrl, { holderName, card: TEST_CARDS.mastercard });
    expect(outcome).toMatchObject({ paid: false, redirectUrl: 'https://shop.example/ko', data: undefined });
    expect((await client().sessions.retrieve(session.sessionId)).status).not.toBe('completed');
  });

  it('reports a form the page refused (a card failing Luhn) with no redirect, and uses the fetch given', async () => {
    const session = await client().sessions.create(params);
    const calls: string[] = [];
    const outcome = await payTestSession(session.paymentUrl, {
      card: { ...TEST_CARDS.visa, number: '4111111111111112' },
      fetch: (input, init) => {
        calls.push(String(input));
        return fetch(input, init);
      },
    });
    expect(outcome).toMatchObject({ paid: false, redirectUrl: undefined, data: undefined });
    expect(outcome.status).toBeGreaterThanOrEqual(400);
    expect(calls).toEqual([session.paymentUrl]);
    // The session can still be paid afterwards.
    expect((await payTestSession(session.paymentUrl, { card: TEST_CARDS.amex })).paid).toBe(true);
  });
});
