/**
 * A client generated from the package's own `dist/openapi.json` with openapi-typescript (its
 * defaults, `--default-non-nullable` included) and openapi-fetch, as a team without the SDK would
 * make one: `tsc --strict` type-checks calls that leave out what the service defaults (`countryCode`,
 * `shopperLocale`, `isPreAuth`) and reads of every answer by its status (404 and 403 included);
 * then the same calls run against the sandbox, and every status it answers is one the document
 * lists for that operation (not only `default`). Run after `npm run build`.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import { payTestSession } from '../src/testing/index.js';
import { buildOnce, ROOT } from './sandbox/cli-process.js';

const run = promisify(execFile);
// Under the repository, so that openapi-fetch resolves from its node_modules.
const DIR = join(ROOT, '.openapi-client');

/** The client's code: every call typed by the generated `paths`, each answer read by its status. */
const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

/** The JSON body of an answer by its status; \`never\` (so that nothing can be assigned) when the document lists no such answer. */
type Answer<P extends keyof paths, M extends 'get' | 'post', S extends number> = paths[P][M] extends { responses: infer R }
  ? S extends keyof R
    ? R[S] extends { content: { 'application/json': infer B } }
      ? B
      : never
    : never
  : never;

export interface Seen {
  method: string;
  path: string;
  status: number;
}

export async function exercise(
  baseUrl: string,
  keys: { test: string },
  webcode: string,
  pay: (paymentUrl: string) => Promise<void>,
): Promise<Seen[]> {
  const seen: Seen[] = [];
  const client = createClient<paths>({ baseUrl, headers: { 'x-api-key': keys.test } });
  const stranger = createClient<paths>({ baseUrl, headers: { 'x-api-key': 'sk_test_nobody' } });
  const note = (method: string, path: string, response: Response) => seen.push({ method, path, status: response.status });

  // Defaults left out: countryCode, shopperLocale and isPreAuth are optional in the generated body.
  const created = await client.POST('/external/v1/test/payment/session', {
    body: { webcode, amount: { value: 2590, currency: 'EUR' }, urlOk: 'https://shop.example/ok', urlKo: 'https://shop.example/ko' },
  });
  note('post', '/external/v1/test/payment/session', created.response);
  const session: Answer<'/external/v1/test/payment/session', 'post', 201> | undefined = created.data;
  if (!session) throw new Error('no session');
  const sessionId: string = session.data.sessionId;
  await pay(session.data.paymentUrl);

  const retrieved = await client.GET('/external/v1/test/payment/session/{sessionId}', { params: { path: { sessionId }, query: { webcode } } });
  note('get', '/external/v1/test/payment/session/{sessionId}', retrieved.response);
  const paymentReference = retrieved.data?.data.paymentReference;
  if (typeof paymentReference !== 'string') throw new Error('not paid');

  const unknownSession = await client.GET('/external/v1/test/payment/session/{sessionId}', {
    params: { path: { sessionId: \`\${webcode}-EXTT-1\` }, query: { webcode } },
  });
  note('get', '/external/v1/test/payment/session/{sessionId}', unknownSession.response);
  if (unknownSession.response.status === 404 && unknownSession.error) {
    const notFound: Answer<'/external/v1/test/payment/session/{sessionId}', 'get', 404> = unknownSession.error;
    const code: number = notFound.error.code;
    void code;
  }

  const refused = await stranger.GET('/external/v1/test/payment/sessions', { params: { query: { webcode } } });
  note('get', '/external/v1/test/payment/sessions', refused.response);
  if (refused.error) {
    const denied: Answer<'/external/v1/test/payment/sessions', 'get', 403> = refused.error;
    void denied.error.traceId;
  }

  const listed = await client.GET('/external/v1/test/payment/sessions', { params: { query: { webcode, take: 5 } } });
  note('get', '/external/v1/test/payment/sessions', listed.response);
  const hasMore: boolean | undefined = listed.data?.data.meta.hasMore;
  void hasMore;

  const refund = await client.POST('/external/v1/test/payment/refund', {
    body: { webcode, paymentReference, amount: { value: 500, currency: 'EUR' }, reason: 'Damaged item' },
  });
  note('post', '/external/v1/test/payment/refund', refund.response);
  const refundReference: string | undefined = refund.data?.data.refundReference;
  void refundReference;

  for (const path of ['/external/v1/test/payment/refund', '/external/v1/test/payment/capture', '/external/v1/test/payment/cancel', '/external/v1/test/payment/extend'] as const) {
    const missing = await client.POST(path, { body: { webcode, paymentReference: \`\${webcode}-PXTT-999999\` } });
    note('post', path, missing.response);
    if (missing.error) {
      const notFound: Answer<typeof path, 'post', 404> = missing.error;
      void notFound.error.message;
    }
  }
  const notPreAuth = await client.POST('/external/v1/test/payment/capture', { body: { webcode, paymentReference } });
  note('post', '/external/v1/test/payment/capture', notPreAuth.response);
  if (notPreAuth.error) {
    const invalid: Answer<'/external/v1/test/payment/capture', 'post', 400> = notPreAuth.error;
    void invalid;
  }

  const ofSession = await client.GET('/external/v1/test/payment/session/{sessionId}/modifications', { params: { path: { sessionId }, query: { webcode } } });
  note('get', '/external/v1/test/payment/session/{sessionId}/modifications', ofSession.response);
  const ofUnknown = await client.GET('/external/v1/test/payment/session/{sessionId}/modifications', {
    params: { path: { sessionId: \`\${webcode}-EXTT-2\` }, query: { webcode } },
  });
  note('get', '/external/v1/test/payment/session/{sessionId}/modifications', ofUnknown.response);
  const all = await client.GET('/external/v1/test/modifications', { params: { query: { webcode, type: 'refund' } } });
  note('get', '/external/v1/test/modifications', all.response);

  const terminals = await client.GET('/external/v1/test/pos/terminals', { params: { query: { webcode } } });
  note('get', '/external/v1/test/pos/terminals', terminals.response);
  // isPreAuth left out: optional.
  const charged = await client.POST('/external/v1/test/pos/payment', { body: { webcode, poiId: 'V400m-TEST-000001', amount: { value: 1500, currency: 'EUR' } } });
  note('post', '/external/v1/test/pos/payment', charged.response);
  const posPaymentId = charged.data?.data.posPaymentId ?? \`\${webcode}-POSXT-1\`;
  const offline = await client.POST('/external/v1/test/pos/payment', { body: { webcode, poiId: 'P400Plus-TEST-000003', amount: { value: 1500, currency: 'EUR' } } });
  note('post', '/external/v1/test/pos/payment', offline.response);
  const payments = await client.GET('/external/v1/test/pos/payments', { params: { query: { webcode, order: 'desc' } } });
  note('get', '/external/v1/test/pos/payments', payments.response);
  for (const id of [posPaymentId, \`\${webcode}-POSXT-2\`]) {
    const mods = await client.GET('/external/v1/test/pos/payment/{posPaymentId}/modifications', { params: { path: { posPaymentId: id }, query: { webcode } } });
    note('get', '/external/v1/test/pos/payment/{posPaymentId}/modifications', mods.response);
  }

  // The same key with another body: 409.
  const key = \`conflict-\${sessionId}\`;
  for (const value of [100, 200]) {
    const again = await client.POST('/external/v1/test/payment/refund', {
      params: { header: { 'Idempotency-Key': key } },
      body: { webcode, paymentReference, amount: { value, currency: 'EUR' } },
    });
    note('post', '/external/v1/test/payment/refund', again.response);
  }
  return seen;
}
`;

let sandbox: Sandbox;

beforeAll(async () => {
  buildOnce();
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  // As a user would: the CLI, on the document the package ships, with its defaults.
  await run(
    process.execPath,
    [join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), join(ROOT, 'dist/openapi.json'), '-o', join(DIR, 'api.d.ts')],
    {
      cwd: DIR,
    },
  );
  writeFileSync(join(DIR, 'client.ts'), CLIENT);
  sandbox = createSandbox({ posDelayMs: 0, modificationResolveMs: 0 });
  await sandbox.listen();
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
  rmSync(DIR, { recursive: true, force: true });
});

describe('a client generated with openapi-typescript from dist/openapi.json', () => {
  it('makes defaulted request fields optional: countryCode, shopperLocale, isPreAuth', () => {
    const types = readFileSync(join(DIR, 'api.d.ts'), 'utf8');
    const request = /CreateSessionRequest: \{([\s\S]*?)\n {8}\};/.exec(types)?.[1] ?? '';
    expect(request).toMatch(/countryCode\?: string;/);
    expect(request).toMatch(/shopperLocale\?: string;/);
    expect(request).toMatch(/isPreAuth\?: boolean;/);
    const pos = /CreatePosPaymentRequest: \{([\s\S]*?)\n {8}\};/.exec(types)?.[1] ?? '';
    expect(pos).toMatch(/isPreAuth\?: boolean;/);
  });

  it('type-checks under --strict: calls without the defaults, and each answer read by its status (404 and 403 included)', async () => {
    const compilerOptions = {
      strict: true,
      noEmit: true,
      target: 'es2022',
      module: 'preserve',
      moduleResolution: 'bundler',
      lib: ['es2022', 'dom'],
    };
    writeFileSync(join(DIR, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['client.ts'] }));
    const output = await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', DIR], { cwd: DIR }).then(
      () => '',
      (error: { stdout?: string }) => String(error.stdout ?? error),
    );
    expect(output).toBe('');
  }, 60_000);

  it('every status the sandbox answers is one the document lists for its operation', async () => {
    const { exercise } = (await import(join(DIR, 'client.ts'))) as {
      exercise: (...args: unknown[]) => Promise<{ method: string; path: string; status: number }[]>;
    };
    const seen = await exercise(sandbox.baseUrl, sandbox.keys, sandbox.webcode, async (paymentUrl: string) => {
      await payTestSession(paymentUrl);
    });
    const document = JSON.parse(readFileSync(join(ROOT, 'dist/openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const unlisted = seen.filter(({ method, path, status }) => !(String(status) in (document.paths[path]?.[method]?.responses ?? {})));
    expect(unlisted).toEqual([]);
    const statuses = new Set(seen.map((entry) => entry.status));
    for (const status of [200, 201, 202, 400, 403, 404, 409, 502]) expect(statuses, String(status)).toContain(status);
  }, 60_000);
});
