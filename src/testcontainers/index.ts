/**
 * `payment-service-sdk/testcontainers`: the sandbox's container image as a
 * [testcontainers](https://node.testcontainers.org) module. `testcontainers` (11 or 12) is an
 * optional peer dependency: install it next to the SDK to use this entry point; no other entry
 * point loads it. Build the image it runs once, from the installed package:
 * `npx payment-service-sdk sandbox image`. The sandbox is published on the host's `127.0.0.1` only
 * unless `withHostIp` says otherwise.
 *
 * ```ts
 * import { PaymentClient } from 'payment-service-sdk';
 * import { PaymentSandboxContainer } from 'payment-service-sdk/testcontainers';
 *
 * const sandbox = await new PaymentSandboxContainer().withPosDelayMs(0).start();
 * const client = new PaymentClient(sandbox.getClientOptions());
 * ```
 *
 * @module
 */
export { PAYMENT_SANDBOX_IMAGE, PaymentSandboxContainer } from './container.js';
export { DATA_DIR, SANDBOX_PORT } from './settings.js';
export { type SandboxClientOptions, type SandboxContainerTenantOptions, StartedPaymentSandboxContainer } from './started.js';
export type { SandboxCredentials } from './startup.js';
