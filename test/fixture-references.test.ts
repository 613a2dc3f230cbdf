/**
 * References of fixture params (`${step.field.path}`): found and checked before the run, resolved
 * at run time with the referred value's type when the reference is the whole value.
 */
import { describe, expect, it } from 'vitest';
import { referencesIn, resolve, UnresolvedReferenceError } from '../src/cli/fixture/references.js';

/** `${path}`, written without a template placeholder in the test's own source. */
const ref = (path: string) => `\${${path}}`;

const results = new Map<string, unknown>([
  ['session', { sessionId: 'S-1', amount: { value: 2599, currency: 'EUR' }, customReference: null }],
  ['hooks', { items: [{ id: 7 }, { id: 8 }] }],
]);

describe('referencesIn', () => {
  it('finds each reference, with its step and path', () => {
    expect(referencesIn(`order-${ref('session.sessionId')}/${ref('hooks.items.1.id')}`)).toEqual({
      references: [
        { step: 'session', path: ['sessionId'] },
        { step: 'hooks', path: ['items', '1', 'id'] },
      ],
    });
    expect(referencesIn(ref('session'))).toEqual({ references: [{ step: 'session', path: [] }] });
  });

  it('takes $${ as a literal ${', () => {
    expect(referencesIn(`cost: $${ref('price')}`)).toEqual({ references: [] });
  });

  it('says what is wrong with a malformed or unclosed reference', () => {
    expect(referencesIn(ref('session..id'))).toEqual({ error: expect.stringMatching(/is not a reference/) });
    expect(referencesIn(ref('1step.id'))).toEqual({ error: expect.stringMatching(/is not a reference/) });
    expect(referencesIn(ref('session.id').slice(0, -1))).toEqual({ error: expect.stringMatching(/without its closing/) });
  });
});

describe('resolve', () => {
  it('a whole reference keeps the type; inside text it is written as text', () => {
    expect(
      resolve(
        {
          amount: ref('session.amount'),
          value: ref('session.amount.value'),
          text: `order ${ref('session.sessionId')}`,
          id: ref('hooks.items.0.id'),
        },
        results,
      ),
    ).toEqual({ amount: { value: 2599, currency: 'EUR' }, value: 2599, text: 'order S-1', id: 7 });
    expect(resolve([`$${ref('x')}`, 5, true], results)).toEqual([ref('x'), 5, true]);
  });

  it('a field the result does not have, or an object or null inside text, is an error naming the reference', () => {
    expect(() => resolve(ref('session.nope'), results)).toThrow(UnresolvedReferenceError);
    expect(() => resolve(ref('hooks.items.5.id'), results)).toThrow(/the result of step hooks has no hooks\.items\.5/);
    expect(() => resolve(`a ${ref('session.amount')}`, results)).toThrow(/is an object or a list/);
    expect(() => resolve(`a ${ref('session.customReference')}`, results)).toThrow(/is null/);
    expect(resolve(ref('session.customReference'), results)).toBeNull();
  });
});
