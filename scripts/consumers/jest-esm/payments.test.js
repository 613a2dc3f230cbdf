// Native ESM under Jest (`node --experimental-vm-modules`): `import` of every entry point.
import * as sdk from 'payment-service-sdk';
import { pgBossFollowUpQueue } from 'payment-service-sdk/queues/pg-boss';
import * as sandboxModule from 'payment-service-sdk/sandbox';
import { postgresWebhookStore } from 'payment-service-sdk/stores/postgres';
import { redisWebhookStore } from 'payment-service-sdk/stores/redis';
import * as sqlite from 'payment-service-sdk/stores/sqlite';
import * as testing from 'payment-service-sdk/testing';
import { paymentsSuite } from './payments.suite.cjs';

test('every subpath loads (pg and redis, optional peers, are not installed)', () => {
  expect(typeof postgresWebhookStore).toBe('function');
  expect(typeof redisWebhookStore).toBe('function');
  expect(typeof pgBossFollowUpQueue).toBe('function');
  expect(sdk.VERSION).toMatch(/^\d+\.\d+\.\d+/);
});

paymentsSuite({ sdk, sandboxModule, testing, sqlite });
