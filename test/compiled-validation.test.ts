import { describe, expect, it, vi } from 'vitest';
import { SessionSchema } from '../src/schemas/sessions.js';
import { client, respond, success, useMsw } from './support/msw.js';

// The transport's wiring to zod's compiler: the compiled parser must be the one that validates.
const compile = vi.hoisted(() => vi.fn());
vi.mock('../src/core/schema-compiler.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/core/schema-compiler.js')>();
  compile.mockImplementation(original.compile);
  return { compile };
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
    const validations = vi.fn();
    compile.mockClear();

    await sdk.sessions.retrieve(session.sessionId);
    await sdk.sessions.retrieve(session.sessionId);

    expect(compile).toHaveBeenCalledTimes(1);
    expect(compile.mock.calls[0]?.[0]).toBe(SessionSchema);
    // The schema the transport validates with is the compiled one that compile returned.
    const compiledSchema = compile.mock.results[0]?.value as { _zod: { run: (...args: unknown[]) => unknown } };
    const run = compiledSchema._zod.run;
    compiledSchema._zod.run = (...args: unknown[]) => {
      validations();
      return run(...args);
    };
    await sdk.sessions.retrieve(session.sessionId);
    compiledSchema._zod.run = run;
    expect(validations).toHaveBeenCalledTimes(1);
  });

  it('compiles nothing when responses are not validated', async () => {
    respond('get', SESSION_PATH, () => success(session));
    compile.mockClear();
    await client({ validateResponses: false }).sessions.retrieve(session.sessionId);
    expect(compile).not.toHaveBeenCalled();
  });
});
