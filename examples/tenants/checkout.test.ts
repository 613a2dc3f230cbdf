/**
 * A test file with its own tenant of the run's sandbox: its records, webhook URLs and clock are
 * its own, so files running in parallel workers never see each other's sessions.
 */
import { payTestSession, type SandboxTenant, sandboxTenant, TEST_CARDS } from 'payment-service-sdk/testing';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';

let tenant: SandboxTenant;

beforeAll(async () => {
  tenant = await sandboxTenant({ baseUrl: inject('sandboxUrl'), controlKey: inject('sandboxKey') });
});
afterAll(() => tenant.remove());

it('pays a session and lists only this worker’s payments', async () => {
  const session = await tenant.client.sessions.create({
    amount: { value: 2599, currency: 'EUR' },
    urlOk: 'https://shop.example/ok',
    urlKo: 'https://shop.example/ko',
  });
  const { redirectUrl } = await payTestSession(session.paymentUrl, { card: TEST_CARDS.visa });
  expect(redirectUrl?.startsWith('https://shop.example/ok')).toBe(true);
  const page = await tenant.client.sessions.list().firstPage();
  expect(page.total).toBe(1);
});
