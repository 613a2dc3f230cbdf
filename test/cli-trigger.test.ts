/**
 * `payment-service-sdk trigger`: the built bin against a sandbox on 127.0.0.1. Each scenario makes
 * what it says (checked in the sandbox's store and at a webhook receiver), prints it in each
 * format, and every `--param` is checked before anything is made.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox/index.js';
import { buildOnce, cliEnv, killAll, run, sandboxVariables } from './sandbox/cli-process.js';
import { type Receiver, useSandboxes } from './sandbox/support.js';

const sandboxes = useSandboxes();
let sandbox: Sandbox;
let receiver: Receiver;
const dir = mkdtempSync(join(tmpdir(), 'cli-trigger-'));

beforeAll(async () => {
  buildOnce();
  receiver = await sandboxes.receiver();
  // A timeout left to complete later stays a timeout for the whole file: its late webhook would land amid the
  // "nothing made" checks on a slow machine.
  ({ sandbox } = await sandboxes.start({
    posDelayMs: 0,
    posTimeoutResolveMs: 600_000,
    modificationResolveMs: 50,
    webhookUrls: [receiver.url],
  }));
}, 60_000);
afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

function envFor(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return cliEnv(join(dir, 'none.json'), { ...sandboxVariables(sandbox), ...extra });
}

async function cli(args: string[], extra: Record<string, string | undefined> = {}) {
  const started = run(args, { env: envFor(extra) });
  const { code } = await started.exit;
  return { code, stdout: started.stdout(), stderr: started.stderr() };
}

interface Triggered {
  type: string;
  id: string | null;
  status: string;
  reference: string | null;
  amount: { value: number; currency: string } | null;
  webhooks: { eventCode: string; url: string; delivered: boolean; lastStatus: number | null }[];
  record: Record<string, unknown>;
}

async function trigger(args: string[]): Promise<Triggered[]> {
  const result = await cli(['trigger', ...args, '--format', 'json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Triggered[];
}

function delivered(reference: string, eventCode: string) {
  return receiver.received.filter(
    (item) => item.json?.event_code === eventCode && JSON.stringify(item.json.data).includes(`"${reference}"`),
  );
}

describe('scenarios', () => {
  it('payment.authorised: a paid session with its params, and the AUTHORISATION delivered', async () => {
    const [made] = await trigger([
      'payment.authorised',
      '--param',
      'amount=2599',
      '--param',
      'currency=GBP',
      '--param',
      'customReference=order-42',
    ]);
    expect(made).toMatchObject({ type: 'session', status: 'completed', amount: { value: 2599, currency: 'GBP' } });
    const session = sandbox.records.session(made?.id ?? '');
    expect(session).toMatchObject({ status: 'completed', customReference: 'order-42', paymentReference: made?.reference });
    expect(made?.webhooks).toEqual([
      expect.objectContaining({ eventCode: 'AUTHORISATION', url: receiver.url, delivered: true, lastStatus: 200 }),
    ]);
    const [hook] = delivered(made?.reference ?? '', 'AUTHORISATION');
    expect(hook?.json.data).toMatchObject({ amount: 2599, currency: 'GBP', customReference: 'order-42', paymentStatus: 'AUTHORISED' });
  });

  it('payment.declined --holder: the session fails with that decline, no AUTHORISATION', async () => {
    const [made] = await trigger(['payment.declined', '--holder', 'card_expired']);
    expect(made).toMatchObject({ type: 'session', status: 'failed', webhooks: [] });
    const session = sandbox.records.session(made?.id ?? '');
    expect(session?.status).toBe('failed');
    expect(session?.attempts.at(-1)).toMatchObject({ paymentReference: made?.reference, status: 'refused' });
    expect(session?.attempts.at(-1)?.reason).toMatch(/expired/i);
    expect(delivered(made?.reference ?? '', 'AUTHORISATION')).toEqual([]);
  });

  it('payment.declined without --holder is a generic decline', async () => {
    const [made] = await trigger(['payment.declined']);
    expect(sandbox.records.session(made?.id ?? '')?.attempts.at(-1)?.reason).toMatch(/declined/i);
  });

  it('session.expired: an expired session', async () => {
    const [made] = await trigger(['session.expired', '--param', 'description=expiry test']);
    expect(made).toMatchObject({ type: 'session', status: 'expired', reference: null });
    expect(sandbox.records.session(made?.id ?? '')).toMatchObject({ status: 'expired', description: 'expiry test' });
  });

  it('pos.success: an approved POS payment on the terminal asked for', async () => {
    const [made] = await trigger(['pos.success', '--param', 'poiId=S1F2-TEST-000002', '--param', 'amount=4200']);
    expect(made).toMatchObject({ type: 'pos-payment', status: 'success', amount: { value: 4200, currency: 'EUR' } });
    expect(sandbox.records.posPayment(made?.id ?? '')).toMatchObject({ status: 'success', poiId: 'S1F2-TEST-000002' });
    expect(made?.webhooks).toEqual([expect.objectContaining({ eventCode: 'AUTHORISATION', delivered: true })]);
    expect(delivered(made?.id ?? '', 'AUTHORISATION')[0]?.json.data).toMatchObject({ amount: 4200, paymentStatus: 'AUTHORISED' });
  });

  it('pos.timeout: a timeout, left to complete later or resolved now with its webhook', async () => {
    const [left] = await trigger(['pos.timeout']);
    expect(left).toMatchObject({ type: 'pos-payment', status: 'timeout', amount: { value: 1099 } });
    expect(sandbox.records.posPayment(left?.id ?? '')?.status).toBe('timeout');

    const [resolved] = await trigger(['pos.timeout', '--param', 'resolve=failed', '--param', 'amount=2099']);
    expect(resolved).toMatchObject({ status: 'failed', amount: { value: 2099 } });
    expect(sandbox.records.posPayment(resolved?.id ?? '')?.status).toBe('failed');

    const [paid] = await trigger(['pos.timeout', '--param', 'resolve=success']);
    expect(paid?.status).toBe('success');
    expect(paid?.webhooks.map((hook) => hook.eventCode)).toEqual(['AUTHORISATION']);
    expect(delivered(paid?.id ?? '', 'AUTHORISATION')).toHaveLength(1);
  });

  it('pos.terminal-busy: the 409 refusal printed, exit 0, nothing recorded', async () => {
    const before = sandbox.records.counts().posPayments;
    const [made] = await trigger(['pos.terminal-busy']);
    expect(made).toMatchObject({ type: 'pos-payment', id: null, status: 'busy', amount: { value: 1055 } });
    expect(made?.record).toMatchObject({ httpStatus: 409, code: 13005 });
    expect(sandbox.records.counts().posPayments).toBe(before);
  });

  it('refund.success: a paid session and its resolved refund, with the REFUND delivered', async () => {
    const made = await trigger(['refund.success', '--param', 'amount=3000', '--param', 'refundAmount=1200', '--param', 'reason=damaged']);
    expect(made.map((record) => [record.type, record.status])).toEqual([
      ['session', 'completed'],
      ['refund', 'success'],
    ]);
    const refund = made[1];
    expect(refund?.amount).toEqual({ value: 1200, currency: 'EUR' });
    expect(sandbox.records.modifications({ paymentReference: made[0]?.reference ?? '' })).toEqual([
      expect.objectContaining({ operationReference: refund?.id, operationType: 'refund', status: 'success', reason: 'damaged' }),
    ]);
    expect(refund?.webhooks).toEqual([expect.objectContaining({ eventCode: 'REFUND', delivered: true })]);
    expect(delivered(refund?.id ?? '', 'REFUND')[0]?.json.data).toMatchObject({ amount: 1200, refundReason: 'damaged', status: 'success' });
  });
});

describe('a step that fails', () => {
  it('prints the records made before it, then the error, exit 1', async () => {
    // A proxy in front of the sandbox that refuses every refund, as the service does with a 400.
    const proxy = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      if (request.url?.includes('/payment/refund')) {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ success: false, error: { message: 'Refunds are closed', code: 12001, statusCode: 400, traceId: 't-1' } }),
        );
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(
          ([name, value]) => typeof value === 'string' && name !== 'host' && name !== 'content-length',
        ),
      ) as Record<string, string>;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const answer = await fetch(`${sandbox.baseUrl}${request.url}`, {
        method: request.method ?? 'GET',
        headers,
        ...(body ? { body } : {}),
      });
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      response.end(Buffer.from(await answer.arrayBuffer()));
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    try {
      const result = await cli(['trigger', 'refund.success', '--format', 'json'], {
        PAYMENT_SERVICE_BASE_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      });
      expect(result.code).toBe(1);
      const made = JSON.parse(result.stdout) as Triggered[];
      expect(made).toEqual([expect.objectContaining({ type: 'session', status: 'completed' })]);
      expect(sandbox.records.session(made[0]?.id ?? '')?.status).toBe('completed');
      // Under --format json, the failure is one JSON line on stderr (the records made went to stdout).
      expect(JSON.parse(result.stderr)).toMatchObject({
        name: 'InvalidRequestError',
        message: 'Refunds are closed',
        status: 400,
        exitCode: 1,
      });
    } finally {
      proxy.close();
    }
  });
});

describe('output', () => {
  it('ndjson is one record per line; csv has a header and the webhooks in one cell; table has the columns', async () => {
    const ndjson = await cli(['trigger', 'refund.success', '--format', 'ndjson']);
    expect(ndjson.code, ndjson.stderr).toBe(0);
    const lines = ndjson.stdout.trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).type)).toEqual(['session', 'refund']);

    const csv = await cli(['trigger', 'payment.authorised', '--format', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const [header, row] = csv.stdout.trim().split('\r\n');
    expect(header?.split(',').slice(0, 7)).toEqual(['type', 'id', 'status', 'reference', 'amount.value', 'amount.currency', 'webhooks']);
    expect(row).toMatch(/^session,[^,]+,completed,[^,]+,1000,EUR,AUTHORISATION delivered$/);

    const table = await cli(['trigger', 'session.expired', '--format', 'table']);
    expect(table.stdout.split('\n')[0]).toMatch(/^type\s+id\s+status\s+reference\s+amount\.value\s+amount\.currency/);
    expect(table.stdout).toMatch(/session\s+\S+\s+expired/);
  });

  it('help lists every scenario with its parameters and defaults', async () => {
    const help = await cli(['trigger', '--help']);
    expect(help.code).toBe(0);
    for (const scenario of [
      'payment.authorised',
      'payment.declined',
      'session.expired',
      'pos.success',
      'pos.timeout',
      'pos.terminal-busy',
      'refund.success',
    ]) {
      expect(help.stdout).toContain(`${scenario}: `);
    }
    expect(help.stdout).toMatch(/refundAmount\s+cents to refund/);
    expect(help.stdout).toMatch(/resolve\s+success or failed/);
    expect(help.stdout).toContain('--holder NAME (payment.declined only): DECLINED, CARD_EXPIRED');
  });
});

describe('parameters are checked before anything is made', () => {
  const cases: [string, string[], RegExp][] = [
    [
      'an unknown key',
      ['payment.authorised', '--param', 'colour=red'],
      /payment\.authorised has no parameter colour; it takes amount, currency/,
    ],
    ['a key of another scenario', ['pos.success', '--param', 'resolve=success'], /pos\.success has no parameter resolve/],
    ['refundAmount outside refund.success', ['payment.authorised', '--param', 'refundAmount=100'], /no parameter refundAmount/],
    ['no =', ['pos.success', '--param', 'amount'], /--param takes key=value, got amount/],
    ['a key given twice', ['pos.success', '--param', 'amount=1000', '--param', 'amount=2000'], /--param amount is given twice/],
    [
      'an amount that is not cents',
      ['payment.authorised', '--param', 'amount=12.50'],
      /--param amount is in cents: for 12.50 EUR pass --param amount=1250/,
    ],
    ['an unsupported currency', ['payment.authorised', '--param', 'currency=JPY'], /--param currency/],
    ['a bad urlOk', ['payment.authorised', '--param', 'urlOk=nope'], /--param urlOk/],
    ['a description too long', ['session.expired', '--param', `description=${'x'.repeat(256)}`], /--param description must be at most 255/],
    [
      'an offline terminal',
      ['pos.success', '--param', 'poiId=P400Plus-TEST-000003'],
      /--param poiId must be one of V400m-TEST-000001, S1F2-TEST-000002/,
    ],
    ['a success amount ending in 99', ['pos.success', '--param', 'amount=1099'], /--param amount must not end in 77, 99, 55/],
    ['a timeout amount not ending in 99', ['pos.timeout', '--param', 'amount=1000'], /--param amount must end in 99/],
    ['a busy amount not ending in 55', ['pos.terminal-busy', '--param', 'amount=1000'], /--param amount must end in 55/],
    ['a bad resolve', ['pos.timeout', '--param', 'resolve=maybe'], /--param resolve must be one of success, failed/],
    [
      'a refund above the payment',
      ['refund.success', '--param', 'amount=500', '--param', 'refundAmount=600'],
      /refundAmount must be at most the amount paid/,
    ],
    ['--holder outside payment.declined', ['payment.authorised', '--holder', 'FRAUD'], /--holder is for payment\.declined/],
    ['an unknown holder', ['payment.declined', '--holder', 'Jane Tester'], /--holder must be one of DECLINED/],
    ['an unknown scenario', ['payment.refunded'], /invalid for argument 'scenario'/],
    ['Live', ['payment.authorised', '--env', 'live'], /Test environment of the sandbox/],
  ];
  it.each(cases)('%s: exit 2, one line, nothing made', async (_name, args, message) => {
    const before = sandbox.records.counts();
    const hooks = receiver.received.length;
    const result = await cli(['trigger', ...args]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('(see --help)');
    expect(sandbox.records.counts()).toEqual(before);
    expect(receiver.received).toHaveLength(hooks);
  });
});

describe('sandbox only', () => {
  it('against a server that is not a sandbox: exit 2, nothing sent but the probe', async () => {
    const requests: string[] = [];
    const service = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success: false, error: { message: 'Not found', code: 10004, statusCode: 404, traceId: 't' } }));
    });
    await new Promise<void>((done) => service.listen(0, '127.0.0.1', done));
    try {
      const result = await cli(['trigger', 'payment.authorised'], {
        PAYMENT_SERVICE_BASE_URL: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/trigger works against the sandbox only/);
      expect(requests).toEqual(['GET /_sandbox/clock']);
    } finally {
      service.close();
    }
  });

  it('nothing listening at the base URL: exit 1, says so', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((done) => closed.close(() => done()));
    const result = await cli(['trigger', 'payment.authorised'], { PAYMENT_SERVICE_BASE_URL: `http://127.0.0.1:${port}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/did not answer GET \/_sandbox\/clock/);
    expect(result.stderr).not.toContain(sandbox.keys.test);
  });
});
