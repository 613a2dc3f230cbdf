/**
 * `sandboxTenant` from `payment-service-sdk/testing` against a sandbox started by the example's
 * vitest global setup, over real HTTP on 127.0.0.1: one tenant per worker, isolated, removable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import setup from '../../examples/tenants/global-setup.ts';
import { sandboxTenant } from '../../src/testing/index.js';
import { sessionParams } from './support.js';

const provided: Record<string, string> = {};
let teardown: () => Promise<void>;

beforeAll(async () => {
  const project = {
    provide: (name: string, value: string) => {
      provided[name] = value;
    },
  };
  teardown = await setup(project as unknown as Parameters<typeof setup>[0]);
});
afterAll(() => teardown());

describe('sandboxTenant', () => {
  it('gives each worker a tenant whose client sees only its own records, and removes it', async () => {
    const baseUrl = provided.sandboxUrl ?? '';
    const controlKey = provided.sandboxKey ?? '';
    const [one, two] = await Promise.all([
      sandboxTenant({ baseUrl, controlKey }),
      sandboxTenant({ baseUrl: `${baseUrl}/`, controlKey, name: 'two' }),
    ]);
    expect(one.webcode).not.toBe(two.webcode);
    expect(two).toMatchObject({ name: 'two', baseUrl, keys: { test: expect.stringMatching(/^sk_test_/) } });
    const created = await one.client.sessions.create(sessionParams);
    expect(created.sessionId.startsWith(`${one.webcode}-`)).toBe(true);
    expect((await one.client.sessions.list().firstPage()).total).toBe(1);
    expect((await two.client.sessions.list().firstPage()).total).toBe(0);

    const live = await sandboxTenant({ baseUrl, controlKey, environment: 'live' });
    expect((await live.client.sessions.create(sessionParams)).sessionId).toMatch(new RegExp(`^${live.webcode}-EXT-`));

    await one.remove();
    await expect(one.client.sessions.list().firstPage()).rejects.toMatchObject({ name: 'PermissionDeniedError' });
    await Promise.all([two.remove(), live.remove()]);
  });

  it('throws what the sandbox refused, without the key', async () => {
    const baseUrl = provided.sandboxUrl ?? '';
    const controlKey = provided.sandboxKey ?? '';
    const made = await sandboxTenant({ baseUrl, controlKey, webcode: 'SAME' });
    await expect(sandboxTenant({ baseUrl, controlKey, webcode: 'SAME' })).rejects.toThrow(
      `The sandbox at ${baseUrl} refused POST /_sandbox/tenants: 409 A tenant with webcode SAME exists already`,
    );
    const refused = await sandboxTenant({ baseUrl, controlKey: made.keys.test }).catch((error: unknown) => error);
    expect(String(refused)).toContain("403 Only the sandbox's own keys may manage tenants");
    expect(JSON.stringify(refused) + String(refused)).not.toContain(made.keys.test);
    await made.remove();
    await expect(made.remove()).rejects.toThrow('404 No tenant with webcode SAME');
  });
});
