/**
 * The sandbox's request steps, each on its own: the escaping HTML template, the chain that runs
 * the steps in order, the Host check, the caller's tenant, the empty faults slot and the
 * idempotency claim. In process, no network.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxAnswer } from '../../src/sandbox/answer.js';
import { manualClock } from '../../src/sandbox/index.js';
import { ServiceFailure } from '../../src/sandbox/responses.js';
import { chain } from '../../src/sandbox/steps/chain.js';
import { faults } from '../../src/sandbox/steps/faults.js';
import { hostCheck } from '../../src/sandbox/steps/host.js';
import { canonical, idempotency } from '../../src/sandbox/steps/idempotency.js';
import type { Located } from '../../src/sandbox/steps/request.js';
import { tenant } from '../../src/sandbox/steps/tenant.js';
import { openTenant, type Tenant, Tenants } from '../../src/sandbox/tenants.js';
import { html, raw } from '../../src/sandbox/views/html.js';

describe('html``', () => {
  it('escapes every interpolated text, in content and in attributes', () => {
    const text = `<script>alert("x")</script> & 'q'`;
    expect(String(html`<p title="${text}">${text}</p>`)).toBe(
      '<p title="&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;q&#39;">&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;q&#39;</p>',
    );
  });

  it('keeps nested html and raw() as they are, joins lists, leaves out false, null and undefined, writes numbers', () => {
    const items = ['a<', 'b>'].map((item) => html`<li>${item}</li>`);
    expect(String(html`<ul>${items}</ul>${false}${null}${undefined}${0}${raw('<b>trusted</b>')}`)).toBe(
      '<ul><li>a&#60;</li><li>b&#62;</li></ul>0<b>trusted</b>',
    );
  });

  it('escapes a string that looks like markup: only html`` and raw() are trusted', () => {
    const markup: string = String(html`<b>x</b>`);
    expect(String(html`${markup}`)).toBe('&#60;b&#62;x&#60;/b&#62;');
  });
});

describe('chain', () => {
  it('runs the steps in their order, lets one answer early, and lets an outer one change the answer', async () => {
    const seen: string[] = [];
    type Path = { path: string };
    const handler = chain<Path>()
      .use<Path>(async (context, next) => {
        const response = await next(context);
        return new Response(`outer(${await response.text()})`);
      })
      .use<Path>((context, next) => {
        seen.push(`first ${context.path}`);
        return context.path === '/early' ? Promise.resolve(new Response('early')) : next({ ...context, path: `${context.path}+` });
      })
      .end(async (context) => {
        seen.push(`last ${context.path}`);
        return new Response(context.path);
      });
    expect(await (await handler({ path: '/a' })).text()).toBe('outer(/a+)');
    expect(await (await handler({ path: '/early' })).text()).toBe('outer(early)');
    expect(seen).toEqual(['first /a', 'last /a+', 'first /early']);
  });
});

const reached = () => Promise.resolve(new Response('reached'));

async function failureOf(run: () => Promise<SandboxAnswer>): Promise<ServiceFailure> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ServiceFailure) return error;
    throw error;
  }
  throw new Error('the step let the request through');
}

describe('host check', () => {
  const check = hostCheck({ bound: () => new Set(['10.0.0.5']), declared: new Set(['shop.test']), baseUrl: () => 'http://127.0.0.1:1' });
  const incoming = (url: string, host: string | null) => ({
    request: new Request(url, { headers: host === null ? {} : { host } }),
    info: undefined,
  });

  it('lets loopback, bound and declared names through, and a request with no Host (in process)', async () => {
    for (const host of ['localhost:3000', '127.0.0.1', '10.0.0.5:80', 'shop.test', null])
      expect(await (await check(incoming('http://127.0.0.1/', host), reached)).text()).toBe('reached');
  });

  it('refuses another name: the envelope for the API (421 / 19421), a page for the dashboard', async () => {
    const failure = await failureOf(() => check(incoming('http://127.0.0.1/external/v1/test/payment/sessions', 'evil.test'), reached));
    expect([failure.status, failure.code]).toEqual([421, 19421]);
    const page = await check(incoming('http://127.0.0.1/', 'evil.test'), reached);
    expect(page.status).toBe(421);
    expect(page.headers.get('content-type')).toContain('text/html');
  });

  it('answers 431 / 19431 to a URL over 8 192 characters', async () => {
    const failure = await failureOf(() => check(incoming(`http://127.0.0.1/${'a'.repeat(8_200)}`, null), reached));
    expect([failure.status, failure.code]).toEqual([431, 19431]);
  });
});

describe('tenant and idempotency', () => {
  let opened: Tenant | undefined;
  afterEach(() => {
    opened?.scheduler.close();
    opened?.store.close();
    opened = undefined;
  });

  function mainTenant(): Tenant {
    opened = openTenant({
      webcode: 'SHOP',
      keys: { test: 'sk_test_shop', live: 'sk_live_shop' },
      made: false,
      clientSecrets: { test: 'cs_test', live: 'cs_live' },
      dataDir: undefined,
      clock: manualClock(),
      seed: 1,
      webhookUrls: [],
      webhookRetry: undefined,
      fetch: () => Promise.reject(new Error('no network in this test')),
      onWebhookAttempt: undefined,
      posDelay: 0,
      posTimeoutResolveMs: 10_000,
      modificationResolveMs: 200,
      idempotencyTtlMs: 86_400_000,
      requestLogSize: 100,
      onError: (error) => {
        throw error;
      },
      origin: () => 'http://sandbox.localhost',
    });
    return opened;
  }

  const call = (key: string | null, environment: 'test' | 'live' | undefined, remoteAddress?: string) => ({
    request: new Request('http://127.0.0.1/', { headers: key === null ? {} : { 'x-api-key': key } }),
    info: { remoteAddress },
    url: new URL('http://127.0.0.1/'),
    environment,
  });

  it('resolves the caller from the key into its tenant and key entry', async () => {
    const main = mainTenant();
    const step = tenant<Located & { environment: 'test' | 'live' | undefined }>(
      new Tenants(main, [{ key: 'sk_test_office', environment: 'test', ipAllowList: ['10.1.1.1'] }], () => {
        throw new Error('no tenant is made here');
      }),
    );
    let caller: unknown;
    await step(call('sk_live_shop', 'live'), (context) => {
      caller = { tenant: context.tenant, key: context.key.key };
      return reached();
    });
    expect(caller).toEqual({ tenant: main, key: 'sk_live_shop' });
    // No environment in the path (the control API's clock, reset...): a key of either passes.
    expect(await (await step(call('sk_test_shop', undefined), reached)).text()).toBe('reached');
    expect(await (await step(call('sk_test_office', 'test', '::ffff:10.1.1.1'), reached)).text()).toBe('reached');

    for (const [key, environment] of [
      [null, 'test'],
      ['sk_unknown', 'test'],
      ['sk_test_shop', 'live'],
    ] as const) {
      const failure = await failureOf(() => step(call(key, environment), reached));
      expect([failure.status, failure.code]).toEqual([403, 11008]);
    }
    const outside = await failureOf(() => step(call('sk_test_office', 'test', '10.9.9.9'), reached));
    expect([outside.status, outside.code]).toEqual([403, 19403]);
  });

  it('faults: with no rule the call and its answer pass unchanged', async () => {
    const answer = new Response('as committed', { status: 201 });
    const context = { environment: 'test', route: { template: 'POST /payment/session' }, tenant: mainTenant() } as never;
    expect(
      await faults(() => 'trace', 1024)(context, (passed) => Promise.resolve(passed === context ? answer : new Response('changed'))),
    ).toBe(answer);
  });

  it('idempotency: a body hashes as the sorted-entries form of earlier versions did, whatever its key order', () => {
    // The form stored hashes were made with (a replacer that rebuilt every object from its sorted entries).
    const before = (value: unknown) =>
      JSON.stringify(value, (_key, inner: unknown) =>
        inner && typeof inner === 'object' && !Array.isArray(inner)
          ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
          : inner,
      );
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const KEYS = ['b', 'a', '10', '2', '0', '4294967295', '4294967294', '01', 'Z', 'é', '', 'amount', '__x'];
    const make = (depth: number): unknown => {
      const kind = next(depth > 2 ? 4 : 6);
      if (kind === 0) return next(1000) - 500;
      if (kind === 1) return ['x', 'é\u2028', '', '"q"'][next(4)];
      if (kind === 2) return [null, true, false][next(3)];
      if (kind === 3) return 1.5e-7;
      if (kind === 4) return Array.from({ length: next(4) }, () => make(depth + 1));
      return Object.fromEntries(Array.from({ length: next(6) }, () => [KEYS[next(KEYS.length)], make(depth + 1)]));
    };
    for (let round = 0; round < 500; round++) {
      const value = JSON.parse(JSON.stringify(make(0))) as unknown;
      expect(canonical(value)).toBe(before(value));
    }
    expect(canonical({ b: 1, a: { d: 2, c: 3 } })).toBe(canonical({ a: { c: 3, d: 2 }, b: 1 }));
  });

  it('idempotency: runs the operation once, then replays its stored answer; another body or endpoint is refused', async () => {
    const main = mainTenant();
    const claim = idempotency(86_400_000);
    let runs = 0;
    const operation = () => {
      runs++;
      return { status: 201, data: { run: runs } };
    };
    const context = (body: Record<string, unknown>, name = 'createSession') =>
      ({ environment: 'test', idempotencyKey: 'key-1', route: { name }, tenant: main, body }) as unknown as Parameters<typeof claim>[0];
    const first = main.store.transaction(() => claim(context({ a: 1, b: 2 }), operation));
    // The same body in another key order is the same request.
    const again = main.store.transaction(() => claim(context({ b: 2, a: 1 }), operation));
    if (!('response' in first) || !('response' in again)) throw new Error('expected answers');
    expect(runs).toBe(1);
    expect(await again.response.json()).toEqual(await first.response.json());
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');

    const otherBody = await failureOf(async () => main.store.transaction(() => claim(context({ a: 2 }), operation)) as never);
    const otherEndpoint = await failureOf(
      async () => main.store.transaction(() => claim(context({ a: 1, b: 2 }, 'refund'), operation)) as never,
    );
    expect([otherBody.code, otherEndpoint.code, runs]).toEqual([19409, 19410, 1]);
  });
});
