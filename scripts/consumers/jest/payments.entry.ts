// The TypeScript test file of the ts-jest (NestJS scaffold) and babel-jest projects, copied in as
// src/payments.spec.ts and payments.test.ts. ES imports, which both compile to `require`: ts-jest
// type-checks them first (under the project's tsconfig, `module: commonjs`, so node10 resolution).
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
  const version: string = sdk.VERSION;
  expect(version).toMatch(/^\d+\.\d+\.\d+/);
});

paymentsSuite({ sdk, sandboxModule, testing, sqlite });
