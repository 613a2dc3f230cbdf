// TypeScript consumer of the packed package, compiled by scripts/check-package.mjs under several
// module settings (see the ts-* folders next to this one: node10, node16 and nodenext, CJS and ESM,
// and bundler, each with strict and exactOptionalPropertyTypes), then run. It imports the root and
// every subpath (one line each), and must compile as ESM and as CommonJS, so it has no top-level await.
import {
  type ClientOptions,
  decodeRedirectData,
  PaymentClient,
  type PosPayment,
  RedirectDataError,
  type RedirectDataErrorReason,
  type Terminal,
  VERSION,
  type WebhookClaim,
  type WebhookStore,
} from 'payment-service-sdk';
// Types only for BullMQ's queue: the module loads `bullmq` (an optional peer); pg-boss's loads no peer.
import type { BullMqConnection, bullMqFollowUpQueue } from 'payment-service-sdk/queues/bullmq';
import { type PgBossLike, pgBossFollowUpQueue } from 'payment-service-sdk/queues/pg-boss';
import { createSandbox, type Sandbox, type SandboxOptions } from 'payment-service-sdk/sandbox';
import { type PostgresQueryable, postgresWebhookStore } from 'payment-service-sdk/stores/postgres';
import { type RedisEvaluator, redisWebhookStore } from 'payment-service-sdk/stores/redis';
import { type SqliteWebhookStore, sqliteWebhookStore } from 'payment-service-sdk/stores/sqlite';
// Types only: the module loads `testcontainers` (an optional peer), which check-package installs
// for these consumers after the JS consumers have checked the subpath without it.
import type { PaymentSandboxContainer, StartedPaymentSandboxContainer } from 'payment-service-sdk/testcontainers';
import {
  type PosTestOutcome,
  posTestAmount,
  type SandboxTenant,
  sandboxTenant,
  TEST_CARDS,
  TEST_TERMINALS,
  type TestCard,
} from 'payment-service-sdk/testing';

/** A JWS with a well-formed HS256 header and a wrong signature: decoding loads jose, then refuses it. */
const FORGED_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJwYXltZW50UmVmZXJlbmNlIjoiUEFZLTEifQ.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

// Compile-time checks: an unused @ts-expect-error fails the build, so these prove the types are
// real (not `any`) in every module mode.
export function typeChecks(client: PaymentClient): void {
  // @ts-expect-error the amount is `{ value, currency }`, not a number
  void client.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: 1_500 });
  // @ts-expect-error not a POS test outcome
  posTestAmount('maybe');
  // @ts-expect-error posDelayMs is a number or [min, max]
  const bad: SandboxOptions = { posDelayMs: 'fast' };
  void bad;
  // @ts-expect-error the SQLite store needs a path
  sqliteWebhookStore({});
  // @ts-expect-error a tenant is made with the sandbox owner's key
  void sandboxTenant({ baseUrl: 'http://127.0.0.1:4010' });
}

/** The Testcontainers module's builder and started container, typed in every module mode. */
export async function container(sandbox: PaymentSandboxContainer): Promise<ClientOptions> {
  // @ts-expect-error the seed is a number
  sandbox.withSeed('7');
  const started: StartedPaymentSandboxContainer = await sandbox.withSeed(7).withWebhookUrl('http://127.0.0.1:9/hooks').start();
  const secret: string = started.getClientSecret('live');
  void secret;
  return started.getClientOptions('test');
}

/** Every store is a WebhookStore, whatever the module mode. */
export function stores(pool: PostgresQueryable, redis: RedisEvaluator): WebhookStore[] {
  return [postgresWebhookStore(pool, { createTable: true }), redisWebhookStore(redis, { prefix: 'shop:' })];
}

/** Both follow-up queues, typed in every module mode, on the app's engine objects. */
export function queues(boss: PgBossLike, redis: BullMqConnection, bullMq: typeof bullMqFollowUpQueue) {
  // @ts-expect-error the queue name is a string
  pgBossFollowUpQueue(boss, { queue: 7 });
  return [pgBossFollowUpQueue(boss, { queue: 'shop-follow-ups' }), bullMq(redis, { prefix: 'shop' })];
}

async function main(): Promise<string> {
  const options: SandboxOptions = { posDelayMs: 0 };
  const sandbox: Sandbox = createSandbox(options);
  const { baseUrl } = await sandbox.listen({ port: 0, host: '127.0.0.1' });
  try {
    const clientOptions: ClientOptions = { apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, environment: 'test' };
    const client = new PaymentClient(clientOptions);
    const terminals = await client.terminals.list({ syncFromProvider: true });
    const first: Terminal | undefined = terminals[0];
    const poiId: string = first?.poiId ?? TEST_TERMINALS[0].poiId;
    const outcome: PosTestOutcome = 'success';
    const payment: PosPayment = await client.pos.createPayment({
      poiId,
      amount: { value: posTestAmount(outcome, 1_500), currency: 'EUR' },
    });
    if (payment.status !== 'success') throw new Error(`POS charge: ${payment.status}`);

    let reason: RedirectDataErrorReason | undefined;
    try {
      await decodeRedirectData(FORGED_TOKEN, sandbox.clientSecrets.test);
    } catch (error) {
      if (!(error instanceof RedirectDataError)) throw error;
      reason = error.reason;
    }
    if (reason !== 'signature') throw new Error(`forged redirect data: ${String(reason)}`);

    const store: SqliteWebhookStore = sqliteWebhookStore({ path: ':memory:' });
    const claim: WebhookClaim = await store.claim('AUTHORISATION:PAY-1:AUTHORISED', 60_000);
    store.close();
    if (claim.status !== 'claimed') throw new Error(`SQLite store claim: ${claim.status}`);

    const jobIds: string[] = [];
    const boss: PgBossLike = {
      createQueue: async () => {},
      send: async (_name, _data, { id }) => {
        jobIds.push(id);
        return id;
      },
      work: async () => 'work',
      offWork: async () => {},
    };
    await pgBossFollowUpQueue(boss).schedule({ id: 'session:S-1#0', target: { sessionId: 'S-1' }, check: 0, trackedAt: 0 }, 0);
    if (!/^[0-9a-f-]{36}$/.test(jobIds[0] ?? '')) throw new Error(`pg-boss job id: ${String(jobIds[0])}`);

    const tenant: SandboxTenant = await sandboxTenant({ baseUrl, controlKey: sandbox.keys.test, name: 'consumer' });
    const tenantTerminals = await tenant.client.terminals.list();
    await tenant.remove();

    const card: TestCard = TEST_CARDS.visa;
    return JSON.stringify({
      version: VERSION,
      terminals: terminals.length,
      pos: payment.status,
      card: card.brand,
      tenantTerminals: tenantTerminals.length,
    });
  } finally {
    await sandbox.close();
  }
}

main().then(
  (line) => console.log(line),
  (error: unknown) => {
    console.error(error);
    throw error;
  },
);
