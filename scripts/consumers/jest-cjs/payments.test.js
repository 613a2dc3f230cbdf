// Plain CommonJS, Jest's default mode (no configuration, no flag): `require` of every entry point.
const sdk = require('payment-service-sdk');
const sandboxModule = require('payment-service-sdk/sandbox');
const { postgresWebhookStore } = require('payment-service-sdk/stores/postgres');
const { redisWebhookStore } = require('payment-service-sdk/stores/redis');
const { pgBossFollowUpQueue } = require('payment-service-sdk/queues/pg-boss');
const sqlite = require('payment-service-sdk/stores/sqlite');
const testing = require('payment-service-sdk/testing');
const { paymentsSuite } = require('./payments.suite.cjs');

test('every subpath loads (pg and redis, optional peers, are not installed)', () => {
  expect(typeof postgresWebhookStore).toBe('function');
  expect(typeof redisWebhookStore).toBe('function');
  expect(typeof pgBossFollowUpQueue).toBe('function');
  expect(sdk.VERSION).toMatch(/^\d+\.\d+\.\d+/);
});

paymentsSuite({ sdk, sandboxModule, testing, sqlite });
