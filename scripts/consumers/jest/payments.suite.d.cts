// Types of payments.suite.cjs for the TypeScript projects: each module must be the package's own.
import type * as sdk from 'payment-service-sdk';
import type * as sandboxModule from 'payment-service-sdk/sandbox';
import type * as sqlite from 'payment-service-sdk/stores/sqlite';
import type * as testing from 'payment-service-sdk/testing';

export interface SuiteModules {
  sdk: typeof sdk;
  sandboxModule: typeof sandboxModule;
  testing: typeof testing;
  sqlite: typeof sqlite;
}

/** Defines the tests (Jest globals) against a sandbox started in `beforeAll`. */
export declare function paymentsSuite(modules: SuiteModules): void;
