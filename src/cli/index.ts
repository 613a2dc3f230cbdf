#!/usr/bin/env node
/**
 * `npx payment-service-sdk sandbox [options]`: runs the sandbox as a real HTTP server. Prints one
 * JSON line to stdout (`baseUrl`, `webcode`, `keys`, `clientSecrets`), a banner to stderr, and
 * stops cleanly on SIGINT or SIGTERM.
 */
import { parseArgs } from 'node:util';
import { createSandbox, type Sandbox, type WebhookAttemptReport } from '../sandbox/index.js';

const USAGE = `Usage: payment-service-sdk sandbox [options]

Runs a local emulator of the payment service (Test and Live paths, hosted payment page, webhooks).

Options:
  --port N              port to listen on (default 4010; 0 picks a free one)
  --host HOST           address to listen on (default 127.0.0.1)
  --webcode CODE        business identifier bound to the keys (default SANDBOX)
  --test-key KEY        Test API key (default sk_test_sandbox)
  --live-key KEY        Live API key (default sk_live_sandbox)
  --test-secret S       Test client secret, signs the redirect data (default cs_test_sandbox)
  --live-secret S       Live client secret (default cs_live_sandbox)
  --webhook-url URL     POST every webhook to URL (repeatable)
  --pos-delay-ms N      simulated terminal time, N or MIN-MAX (default 2000-3000)
  --data-dir DIR        keep the state in DIR/sandbox.db (SQLite) across restarts and
                        crashes (default: memory only)
  --max-body-bytes N    largest request body accepted, larger ones get 413 (default 1048576)
  --idempotency-ttl-ms N
                        how long stored idempotent responses are kept (default 86400000, 24 h)
  --help                show this help
`;

class UsageError extends Error {}

function integer(name: string, value: string, min: number, max: number): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < min || number > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return number;
}

function delay(value: string): number | [number, number] {
  const range = /^(\d+)-(\d+)$/.exec(value);
  if (range) {
    const [min, max] = [Number(range[1]), Number(range[2])];
    if (min > max) throw new UsageError('--pos-delay-ms MIN-MAX needs MIN <= MAX');
    return [min, max];
  }
  return integer('pos-delay-ms', value, 0, 600_000);
}

function webhookUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // reported below
  }
  throw new UsageError(`--webhook-url must be an http(s) URL: ${value}`);
}

async function sandbox(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      port: { type: 'string', default: '4010' },
      host: { type: 'string', default: '127.0.0.1' },
      webcode: { type: 'string' },
      'test-key': { type: 'string' },
      'live-key': { type: 'string' },
      'test-secret': { type: 'string' },
      'live-secret': { type: 'string' },
      'webhook-url': { type: 'string', multiple: true },
      'pos-delay-ms': { type: 'string' },
      'data-dir': { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'idempotency-ttl-ms': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const instance: Sandbox = createSandbox({
    onWebhookAttempt: (report) => {
      const line = failedAttemptLine(report, instance.clock.now());
      if (line) process.stderr.write(`${line}\n`);
    },
    webcode: values.webcode,
    keys: { test: values['test-key'], live: values['live-key'] },
    clientSecrets: { test: values['test-secret'], live: values['live-secret'] },
    webhookUrls: (values['webhook-url'] ?? []).map(webhookUrl),
    posDelayMs: values['pos-delay-ms'] === undefined ? undefined : delay(values['pos-delay-ms']),
    dataDir: values['data-dir'],
    maxBodyBytes: values['max-body-bytes'] === undefined ? undefined : integer('max-body-bytes', values['max-body-bytes'], 1, 2 ** 31),
    idempotencyTtlMs:
      values['idempotency-ttl-ms'] === undefined ? undefined : integer('idempotency-ttl-ms', values['idempotency-ttl-ms'], 1, 2 ** 45),
  });
  // Ready to stop before the JSON line announces the server: a caller may signal as soon as it reads it.
  const stop = () => {
    void instance.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const { baseUrl } = await instance.listen({ port: integer('port', values.port, 0, 65_535), host: values.host });
  process.stdout.write(
    `${JSON.stringify({ baseUrl, webcode: instance.webcode, keys: instance.keys, clientSecrets: instance.clientSecrets })}\n`,
  );
  process.stderr.write(
    [
      `Payment service sandbox listening on ${baseUrl}`,
      `  dashboard ${baseUrl}/ (control API under ${baseUrl}/_sandbox/)`,
      `  webcode ${instance.webcode}`,
      `  Test: key ${instance.keys.test}, client secret ${instance.clientSecrets.test}`,
      `  Live: key ${instance.keys.live}, client secret ${instance.clientSecrets.live}`,
      `  webhooks: ${instance.webhookUrls.length > 0 ? instance.webhookUrls.join(', ') : 'none (add --webhook-url)'}`,
      values['data-dir'] ? `  state kept in ${instance.location}` : '  state in memory (add --data-dir DIR to keep it)',
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  );
}

/** One stderr line for a webhook attempt that failed: where, why, and what happens next. */
export function failedAttemptLine({ delivery, attempt, nextAttemptAt }: WebhookAttemptReport, now: number): string | undefined {
  if (delivery.delivered) return undefined;
  const about = [delivery.event.event_code, delivery.event.data.paymentReference].filter((part) => typeof part === 'string').join(' ');
  const why = attempt.status === null ? (attempt.error ?? 'no answer') : `HTTP ${attempt.status}`;
  const next =
    nextAttemptAt === null ? 'no retries left, abandoned' : `next retry in ${Math.max(0, Math.round((nextAttemptAt - now) / 1000))} s`;
  return `webhook ${delivery.id} (${about}) to ${delivery.url} failed: ${why}, attempt ${delivery.attempts.length}; ${next}`;
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'sandbox') return sandbox(rest);
  if (command === undefined || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  throw new UsageError(`Unknown command: ${command}`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`payment-service-sdk: ${error instanceof Error ? error.message : String(error)}\n${usage ? `\n${USAGE}` : ''}`);
  process.exit(usage ? 2 : 1);
});
