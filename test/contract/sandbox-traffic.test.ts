/**
 * The sandbox's own end-to-end tests, held against the documents it publishes by a validator we
 * did not write: test/sandbox/api.test.ts (every endpoint, failures, idempotency, listings),
 * test/sandbox/control.test.ts (the control API) and the contract walk (test/contract/walk.ts,
 * every endpoint of both families) run again here with a recorder around each sandbox's handler.
 * Every request and answer they exchanged over HTTP is then checked with ajv against `/openapi.json`
 * (the service's paths) or `/_sandbox/openapi.json` (the control API): matched to its operation and
 * status, its parameters and body to the request, its body to the response documented for that
 * status. A request the document rejects must have been refused (4xx). The webhooks the sandbox sent
 * (through the `fetch` it was given) are held to the document's `webhooks`. Exchanges a fault rule
 * changed on purpose are left out. Network: 127.0.0.1 only.
 */
import '../sandbox/api.test.js';
import '../sandbox/control.test.js';
import { describe, expect, it } from 'vitest';
import { createSandbox, FAULT_HEADER } from '../../src/sandbox/index.js';
import { clientFor, instrumentSandboxes, useSandboxes } from '../sandbox/support.js';
import { type CheckResult, describeFindings, type Exchange, OpenApiCheck } from './openapi-check.js';
import { recorder } from './recorder.js';
import { WALK_SANDBOX_OPTIONS, walkEveryEndpoint } from './walk.js';

const traffic = recorder({ faultHeader: FAULT_HEADER });
const deliveries = recorder({ faultHeader: FAULT_HEADER });
instrumentSandboxes({ handle: (handle) => traffic.wrap(handle), fetch: (fetch) => deliveries.wrapFetch(fetch) });

const { start, receiver } = useSandboxes();

const SERVICE_PATHS = /^\/external\/v1\//;
const CONTROL_PATHS = /^\/_sandbox\//;

/** A document as the sandbox serves it (in process: no server of its own). */
async function served(path: string): Promise<unknown> {
  const sandbox = createSandbox();
  try {
    const response = await sandbox.handle(new Request(`${sandbox.baseUrl}${path}`));
    expect(response.status, `GET ${path}`).toBe(200);
    return await response.json();
  } finally {
    await sandbox.close();
  }
}

async function exchangesUnder(paths: RegExp): Promise<Exchange[]> {
  await traffic.settled();
  return traffic.exchanges.filter((exchange) => paths.test(new URL(exchange.url).pathname));
}

/** The operations no exchange reached, for the failure message. */
function unreached(check: OpenApiCheck, result: CheckResult): string[] {
  const reached = new Set(result.matched.map((matched) => matched.operation));
  return check.operations().filter((operation) => !reached.has(operation));
}

// The suites above call a few endpoints in Test only: the walk calls each in both families.
describe('the contract walk, recorded too', () => {
  it.each(['test', 'live'] as const)('%s paths: every endpoint', async (environment) => {
    const { url } = await receiver();
    const { sandbox, test, live } = await start({ ...WALK_SANDBOX_OPTIONS, webhookUrls: [url] });
    const client = environment === 'test' ? test : live;
    const wrongKey = clientFor(sandbox, environment, { apiKey: sandbox.keys[environment === 'test' ? 'live' : 'test'] });
    await walkEveryEndpoint({ sandbox, environment, client, wrongKey }, `traffic-${environment}`);
  });
});

describe('the sandbox suite traffic against the published OpenAPI documents (ajv, JSON Schema 2020-12)', () => {
  it('every service exchange conforms to /openapi.json, and every operation of both families was exercised', async () => {
    const check = new OpenApiCheck(await served('/openapi.json'));
    const exchanges = await exchangesUnder(SERVICE_PATHS);
    const result = check.check(exchanges);
    expect(describeFindings(result.findings), `${result.findings.length} of ${exchanges.length} exchanges break the document`).toBe('');
    expect(unreached(check, result), 'operations the suite never called').toEqual([]);
    // Documented failures were answered too, not only successes.
    expect(result.matched.filter((matched) => matched.status >= 400).length).toBeGreaterThan(20);
  });

  it("every webhook the sandbox sent conforms to the document's webhooks, and each was sent", async () => {
    const check = new OpenApiCheck(await served('/openapi.json'));
    await deliveries.settled();
    const sent = deliveries.exchanges.map((exchange) => ({ exchange, name: String(JSON.parse(exchange.requestBody).event_code) }));
    const problems = sent.flatMap(({ exchange, name }) =>
      check.checkWebhook(name, exchange).map((problem) => `${name} to ${exchange.url}: ${problem}`),
    );
    expect(problems).toEqual([]);
    expect(new Set(sent.map(({ name }) => name))).toEqual(new Set(check.webhooks()));
  });

  it('every control API exchange conforms to /_sandbox/openapi.json', async () => {
    const check = new OpenApiCheck(await served('/_sandbox/openapi.json'));
    const exchanges = await exchangesUnder(CONTROL_PATHS);
    const result = check.check(exchanges);
    expect(describeFindings(result.findings), `${result.findings.length} of ${exchanges.length} exchanges break the document`).toBe('');
    expect(result.matched.length).toBeGreaterThan(50);
  });

  it('reports a deliberately broken answer, an answer in another media type, an accepted invalid request and a broken webhook', async () => {
    const check = new OpenApiCheck(await served('/openapi.json'));
    const created = (await exchangesUnder(SERVICE_PATHS)).find((exchange) => exchange.method === 'POST' && exchange.status === 201);
    if (!created) throw new Error('no 201 answer was recorded');
    expect(check.check([created]).findings).toEqual([]);

    const answer = JSON.parse(created.responseBody);
    const brokenBody = { ...created, responseBody: JSON.stringify({ ...answer, data: { ...answer.data, amount: { value: '25.99' } } }) };
    const html = {
      ...created,
      responseHeaders: { ...created.responseHeaders, 'content-type': 'text/html' },
      responseBody: '<p>Created</p>',
    };
    const accepted = { ...created, requestBody: JSON.stringify({ ...JSON.parse(created.requestBody), amount: 'a lot' }) };
    const findings = check.check([brokenBody, html, accepted]).findings;
    expect(findings).toHaveLength(3);
    expect(findings[0]?.problems.join('\n')).toMatch(/response body \/data\/amount/);
    expect(findings[1]?.problems.join('\n')).toMatch(/response media type text\/html is not one of/);
    expect(findings[2]?.problems.join('\n')).toMatch(/answered 201 to a request the document rejects[\s\S]*request body \/amount/);

    await deliveries.settled();
    const delivery = deliveries.exchanges.find((exchange) => JSON.parse(exchange.requestBody).event_code === 'AUTHORISATION');
    if (!delivery) throw new Error('no AUTHORISATION delivery was recorded');
    expect(check.checkWebhook('AUTHORISATION', delivery)).toEqual([]);
    const event = JSON.parse(delivery.requestBody);
    const brokenEvent = { ...delivery, requestBody: JSON.stringify({ ...event, data: { ...event.data, amount: '25.99' } }) };
    expect(check.checkWebhook('AUTHORISATION', brokenEvent).join('\n')).toMatch(/request body \/data\/amount/);
  });
});
