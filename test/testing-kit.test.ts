import { describe, expect, it } from 'vitest';
import {
  isLuhnValid,
  POS_TEST_ENDINGS,
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
