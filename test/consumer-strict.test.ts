/**
 * A merchant's own code, compiled by `tsc --strict` against the built package as a consumer would
 * (ts-jest's default transpiles without type-checking, so only `tsc` shows a type error): the amount
 * of a retrieved session refunded as it comes, and `isCurrency` narrowing a read currency. Under
 * `moduleResolution: bundler` and `nodenext`, the package linked into the shop's node_modules. Run after
 * `npm run build`.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOnce, ROOT } from './sandbox/cli-process.js';

const run = promisify(execFile);
// A shop's folder with the package linked into its node_modules (under the repository, so that
// the package's own dependencies and @types/node resolve as they would once installed).
const DIR = join(ROOT, '.consumer-strict');

const SNIPPET = `import { isCurrency, PaymentClient, RequestValidationError } from 'payment-service-sdk';

const client = new PaymentClient({ apiKey: 'sk_test_x', webcode: 'SHOP1', baseUrl: 'http://127.0.0.1:1' });

export async function refundSession(sessionId: string): Promise<string | undefined> {
  const session = await client.sessions.retrieve(sessionId);
  if (!session.paymentReference) return undefined;
  try {
    const refund = await client.modifications.refund({ paymentReference: session.paymentReference, amount: session.amount, reason: 'Order cancelled' });
    return refund.refundReference;
  } catch (error) {
    if (error instanceof RequestValidationError) return undefined; // a currency the service does not take, refused before sending
    throw error;
  }
}

export async function captureRecord(sessionId: string): Promise<void> {
  const [first] = await client.sessions.listModifications(sessionId);
  if (first?.paymentReference && first.amount) await client.modifications.capture({ paymentReference: first.paymentReference, amount: first.amount });
}

export async function again(sessionId: string): Promise<void> {
  const { amount } = await client.sessions.retrieve(sessionId);
  const currency: string = amount.currency;
  if (isCurrency(currency)) {
    await client.sessions.create({ amount: { value: amount.value, currency }, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' });
  }
}
`;

/** What `tsc` says of the snippet, with these module settings; empty when it compiles. */
async function compile(module: 'preserve' | 'nodenext', snippet = SNIPPET): Promise<string> {
  const dir = join(DIR, module);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  const link = join(dir, 'node_modules/payment-service-sdk');
  if (!existsSync(link)) symlinkSync(ROOT, link, 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(dir, 'shop.ts'), snippet);
  // Only `strict` and the module settings: what a consumer's tsconfig commonly holds.
  const compilerOptions = {
    strict: true,
    noEmit: true,
    target: 'es2022',
    module,
    moduleResolution: module === 'preserve' ? 'bundler' : 'nodenext',
    types: ['node'],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['shop.ts'] }));
  try {
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

beforeAll(buildOnce, 120_000);
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe('a consumer compiled with tsc --strict', () => {
  it.each(['preserve', 'nodenext'] as const)(
    'refunds a retrieved amount as it comes (module %s)',
    async (module) => {
      expect(await compile(module)).toBe('');
    },
    60_000,
  );

  it('still refuses an unaccepted currency where only an accepted one is taken', async () => {
    const output = await compile(
      'preserve',
      `import { PaymentClient } from 'payment-service-sdk';
declare const client: PaymentClient;
export async function f(sessionId: string) {
  const { amount } = await client.sessions.retrieve(sessionId);
  await client.sessions.create({ amount, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' });
}
`,
    );
    expect(output).toMatch(/TS2322/);
  }, 60_000);
});
