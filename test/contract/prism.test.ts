/**
 * The end-to-end walk of the SDK against the sandbox (test/contract/walk.ts: every endpoint of both
 * path families, successes, documented failures, idempotent replays, pagination) once more through
 * Prism's validating proxy, `prism proxy --errors`, in front of the sandbox and fed the document the
 * sandbox serves at `/openapi.json`. Every request the SDK sends and every answer the sandbox gives
 * must validate: an answer carrying `sl-violations` or a Prism `application/problem+json` fails the
 * test, and so does any violation line in Prism's log. Prism starts once for the file, connects to
 * nothing but 127.0.0.1 (scripts/loopback-only.cjs) and is stopped by its pid at the end.
 *
 * Prism rewrites `Host` to the upstream's (127.0.0.1:<sandbox port>), which the sandbox accepts as a
 * loopback name, and forwards `X-API-KEY` and `Idempotency-Key` unchanged. It answers a request that
 * breaks the document itself (422), and a path not in the document with 404, so the hosted payment
 * page is reached directly, as a browser would, and sessions are paid through the sandbox object.
 *
 * Prism stays silent when it cannot compile a schema (it then validates nothing), so the file ends
 * with two positive controls: a request that breaks the document must be refused before it reaches
 * the sandbox, and a canary operation added to Prism's copy of the document (the control API's
 * `GET /_sandbox/clock`, with a response schema its answer cannot meet) must be reported.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Environment, PaymentClient } from '../../src/index.js';
import { instrumentSandboxes, type Started, useSandboxes } from '../sandbox/support.js';
import { OpenApiCheck } from './openapi-check.js';
import { type Prism, startPrism } from './prism.js';
import { recorder } from './recorder.js';
import { WALK_SANDBOX_OPTIONS, walkEveryEndpoint } from './walk.js';

const { start } = useSandboxes();
// What reached the sandbox through Prism: to show which operations were walked.
const traffic = recorder();
instrumentSandboxes({ handle: (handle) => traffic.wrap(handle), fetch: (fetch) => fetch });

interface Seen {
  call: string;
  status: number;
  /** `sl-violations`, or the body of an answer Prism made itself. */
  violation: string | undefined;
}

/** What Prism said was wrong with an answer, if anything. */
async function violationOf(response: Response): Promise<string | undefined> {
  const header = response.headers.get('sl-violations');
  if (header) return header;
  if (response.headers.get('content-type')?.startsWith('application/problem+json')) return await response.clone().text();
  return undefined;
}

/** Added to Prism's copy only: a real sandbox route whose documented answer it can never give. */
const CANARY_PATH = '/_sandbox/clock';
const CANARY_PROPERTY = 'prism-canary';
const canary = {
  get: {
    operationId: 'prismCanary',
    summary: 'Positive control of the contract test',
    responses: {
      '200': {
        description: 'Never met: the answer lacks the required property.',
        content: { 'application/json': { schema: { type: 'object', required: [CANARY_PROPERTY] } } },
      },
    },
  },
};

let started: Started;
let prism: Prism;
let dir: string;
let document: unknown;
const seen: Seen[] = [];

/** A client through Prism that notes every answer it gets. */
function throughPrism(environment: Environment, apiKey: string): PaymentClient {
  return new PaymentClient({
    apiKey,
    webcode: started.sandbox.webcode,
    baseUrl: prism.origin,
    environment,
    maxRetries: 0,
    fetch: async (input, init) => {
      const request = input instanceof Request ? input : new Request(input, init);
      const response = await fetch(input, init);
      seen.push({
        call: `${request.method} ${new URL(request.url).pathname}`,
        status: response.status,
        violation: await violationOf(response),
      });
      return response;
    },
  });
}

beforeAll(async () => {
  started = await start(WALK_SANDBOX_OPTIONS);
  dir = mkdtempSync(join(tmpdir(), 'prism-'));
  const served = await fetch(`${started.baseUrl}/openapi.json`);
  expect(served.status).toBe(200);
  document = await served.json();
  const { paths } = document as { paths: Record<string, unknown> };
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify({ ...(document as object), paths: { ...paths, [CANARY_PATH]: canary } }));
  prism = await startPrism(join(dir, 'openapi.json'), started.baseUrl);
}, 40_000);

afterAll(async () => {
  await prism?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the SDK against the sandbox through Prism's validating proxy (prism proxy --errors)", () => {
  it.each(['test', 'live'] as const)(
    '%s paths: every endpoint, failures, replays and pages pass with 0 violations',
    async (environment) => {
      const other = environment === 'test' ? 'live' : 'test';
      const client = throughPrism(environment, started.sandbox.keys[environment]);
      const wrongKey = throughPrism(environment, started.sandbox.keys[other]);
      const before = seen.length;
      await walkEveryEndpoint({ sandbox: started.sandbox, environment, client, wrongKey }, `prism-${environment}`);
      const calls = seen.slice(before);
      expect(calls.filter((call) => call.violation !== undefined)).toEqual([]);
      expect(calls.length).toBeGreaterThan(30);
    },
  );

  it('Prism logged no violation, and every operation of the document went through it', async () => {
    expect(prism.violationLines()).toEqual([]);
    await traffic.settled();
    const check = new OpenApiCheck(document);
    const reached = new Set(traffic.exchanges.map((exchange) => check.operationOf(exchange.method, exchange.url)));
    expect(check.operations().filter((operation) => !reached.has(operation))).toEqual([]);
    // Documented failures went through as well: 400, 403, 404, 409 and 502 answers.
    expect([...new Set(seen.filter((call) => call.status >= 400).map((call) => call.status))].sort()).toEqual([400, 403, 404, 409, 502]);
  });

  it('Prism does validate: a request that breaks the document is refused, reported, and never reaches the sandbox', async () => {
    await traffic.settled();
    const reachedBefore = traffic.exchanges.length;
    const response = await fetch(`${prism.origin}/external/v1/test/payment/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': started.sandbox.keys.test },
      body: JSON.stringify({ webcode: started.sandbox.webcode, amount: { value: 'a lot', currency: 'EUR' } }),
    });
    expect(response.status).toBe(422);
    expect(await violationOf(response)).toMatch(/amount/);
    await traffic.settled();
    expect(traffic.exchanges.length).toBe(reachedBefore);
    await prism.violationLogged();
  });

  it('Prism does validate answers: the canary answer, which breaks its schema, comes back as a violation', async () => {
    const response = await fetch(`${prism.origin}${CANARY_PATH}`, { headers: { 'x-api-key': started.sandbox.keys.test } });
    expect(response.status).toBe(500);
    expect(response.headers.get('sl-violations')).toContain(CANARY_PROPERTY);
  });
});
