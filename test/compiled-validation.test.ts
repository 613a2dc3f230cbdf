import { describe, expect, it, vi } from 'vitest';
import { ResponseValidationError } from '../src/index.js';
import { SessionSchema } from '../src/schemas/sessions.js';
import { client, respond, success, useMsw } from './support/msw.js';

// The transport's wiring to zod's compiler: the compiled schema must be the one that validates.
const { compile, validate } = vi.hoisted(() => ({ compile: vi.fn(), validate: vi.fn() }));
vi.mock('../src/core/schema-compiler.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/core/schema-compiler.js')>();
  compile.mockImplementation(original.compile);
  validate.mockImplementation(original.validate);
  return { compile, validate };
});

useMsw();

const SESSION_PATH = '/external/v1/test/payment/session/:id';
const session = {
  sessionId: 'SHOP1-EXTT-1700000000',
  status: 'pending',
  amount: { value: 1050, currency: 'EUR' },
  createdAt: '2026-01-01 10:00:00',
};

describe('responses validated by compiled parsers', () => {
  it('compiles an endpoint response schema once, on first use, and validates with it', async () => {
    respond('get', SESSION_PATH, () => success(session));
    const sdk = client();
    compile.mockClear();
    validate.mockClear();

    await sdk.sessions.retrieve(session.sessionId);
    const result = await sdk.sessions.retrieve(session.sessionId);

    expect(compile).toHaveBeenCalledTimes(1);
    expect(compile.mock.calls[0]?.[0]).toBe(SessionSchema);
    // Each response is checked once, by the compiled schema that compile returned.
    const compiledSchema = compile.mock.results[0]?.value;
    expect(validate.mock.calls).toEqual([
      [compiledSchema, session],
      [compiledSchema, session],
    ]);
    expect(validate.mock.results.map((outcome) => outcome.value)).toEqual([true, true]);
    expect(result).toStrictEqual(session);
  });

  it('hands back valid data without running the runtime parser, which only words invalid data', async () => {
    const runtime = SessionSchema._zod.run;
    const runs = vi.fn();
    SessionSchema._zod.run = (...args) => {
      runs();
      return runtime(...args);
    };
    try {
      const sdk = client();
      respond('get', SESSION_PATH, () => success(session));
      expect(await sdk.sessions.retrieve(session.sessionId)).toStrictEqual(session);
      expect(runs).not.toHaveBeenCalled();

      respond('get', SESSION_PATH, () => success({ ...session, status: 7 }));
      await expect(sdk.sessions.retrieve(session.sessionId)).rejects.toBeInstanceOf(ResponseValidationError);
      expect(runs).toHaveBeenCalled();
    } finally {
      SessionSchema._zod.run = runtime;
    }
  });

  it('re-parses data the compiled check refuses, to word the issues', async () => {
    respond('get', SESSION_PATH, () => success({ ...session, amount: { value: 10.5, currency: 'EUR' } }));
    validate.mockClear();
    const error = await client()
      .sessions.retrieve(session.sessionId)
      .then(undefined, (caught: unknown) => caught);
    expect(validate.mock.results.map((outcome) => outcome.value)).toEqual([false]);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).issues).toEqual([{ path: 'data.amount.value', message: 'must be an integer' }]);
  });

  it('leaves a schema that reshapes what it accepts to the runtime parser', async () => {
    respond('post', '/external/v1/test/payment/extend', () => success(null));
    compile.mockClear();
    validate.mockClear();
    const result = await client().modifications.extend({ paymentReference: 'SHOP1-PXTT-1' });
    expect(compile).not.toHaveBeenCalled();
    expect(validate).not.toHaveBeenCalled();
    expect(result).toEqual({});
  });

  it('compiles nothing when responses are not validated', async () => {
    respond('get', SESSION_PATH, () => success(session));
    compile.mockClear();
    validate.mockClear();
    await client({ validateResponses: false }).sessions.retrieve(session.sessionId);
    expect(compile).not.toHaveBeenCalled();
    expect(validate).not.toHaveBeenCalled();
  });
});
