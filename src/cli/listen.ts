/**
 * `payment-service-sdk listen`: a local webhook receiver. Each delivery is read with
 * `parseWebhook`, passed on as it came (raw body, original headers) to `--forward-to`, answered
 * with the app's status, confirmed through the API as `client.webhooks.confirm` does, and printed:
 * one line (or one JSON object) per event on stdout, everything else on stderr. Against the sandbox
 * the receiver adds itself to the sandbox's webhook URLs, so new events and the dashboard's resends
 * reach it, and takes itself off again on Ctrl-C.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import {
  AuthenticationError,
  type PaymentClient,
  PermissionDeniedError,
  parseWebhook,
  type WebhookEvent,
  WebhookNotConfirmedError,
  type WebhookOutcome,
  WebhookParseError,
} from '../index.js';
import { refuseBody } from '../sandbox/http/refuse.js';
import type { Profile } from './config.js';
import { findSandbox, KeyRefusedError, type SandboxLink } from './control.js';
import {
  BROKEN_PIPE,
  csvLine,
  EXIT,
  ExitError,
  type Format,
  httpUrl,
  paint,
  safeJson,
  say,
  type Terminal,
  terminalSafe,
  UsageError,
  useColor,
} from './io.js';
import type { CommandContext } from './program.js';
import { integer } from './sandbox.js';

/** Headers of one hop, which a proxy must not pass on (RFC 9110, 7.6.1); `host` and `content-length` are the new hop's. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);
/** What is shown of the app's answer. */
const ANSWER_CHARS = 200;
/** The sandbox waits 10 s for an answer to a webhook; the app gets as long. */
const FORWARD_TIMEOUT_MS = 10_000;
/** Larger deliveries are refused (413): a webhook is a small JSON object. */
const MAX_BODY_BYTES = 1_048_576;

/** How an event fared against the API: `confirmed`, a `WebhookNotConfirmedError` reason, `error`, or `skipped`. */
type Confirmation = 'confirmed' | 'not-found' | 'mismatch' | 'unsupported' | 'error' | 'skipped';

/** One printed event. */
interface ListenedEvent {
  receivedAt: string;
  eventCode: string;
  /** The refund's reference for a REFUND, otherwise the payment's. */
  reference: string | null;
  paymentReference: string | null;
  amount: number | null;
  currency: string | null;
  /** `paymentStatus` of an AUTHORISATION, `status` of a REFUND. */
  status: string | null;
  confirmation: Confirmation;
  /** What the confirmed event says happened (`authorised`, `refused`, `refunded`, `failed`); `null` when not confirmed. */
  outcome: WebhookOutcome | null;
  /** Why it was not confirmed. */
  confirmationDetail: string | null;
  /** The app's answer under `--forward-to`: its status (`null` when it did not answer) and the start of its body. */
  forwarded: { status: number | null; body: string } | null;
  event: WebhookEvent;
}

const CSV_COLUMNS = [
  'receivedAt',
  'eventCode',
  'reference',
  'paymentReference',
  'amount',
  'currency',
  'status',
  'confirmation',
  'outcome',
  'confirmationDetail',
  'forwardedStatus',
  'forwardedBody',
] as const;

interface ListenFlags {
  port: string;
  host: string;
  forwardTo?: string;
  confirm: boolean;
}

interface AppAnswer {
  status: number | null;
  /** The whole answer, passed back to the sender. */
  body: Buffer;
  contentType: string | null;
  error?: string;
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function oneLine(value: string): string {
  return value.replaceAll(/\s+/g, ' ').trim().slice(0, ANSWER_CHARS);
}

/** The address a sender on this machine reaches a server bound to `host`, `port` at. */
function localUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}/`;
}

/**
 * The delivery's body, or `undefined` past {@link MAX_BODY_BYTES} (declared in `content-length`, or
 * counted as the chunks arrive). Read from `data` events rather than with `for await`: leaving that
 * loop early destroys the socket, and the client met a reset instead of the 413. Past the limit
 * nothing more is kept; the rest flows on to be dropped by `refuseBody`.
 */
function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return Promise.resolve(undefined);
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const keep = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk);
      request.off('data', keep);
      done(undefined);
    };
    request.on('data', keep);
    request.once('end', () => done(Buffer.concat(chunks)));
    request.once('error', fail);
  });
}

/** The `--forward-to` URL: http(s), with a host and a port something can listen on. */
function forwardTarget(value: string): URL {
  const url = new URL(httpUrl('forward-to', value));
  if (url.hostname === '' || url.hostname === '0.0.0.0' || url.hostname === '[::]')
    throw new UsageError(`--forward-to must name the host of your app, for example http://127.0.0.1:3000/webhooks, got ${value}`);
  if (url.port === '0') throw new UsageError(`--forward-to must name the port your app listens on (not 0), got ${value}`);
  return url;
}

/**
 * POSTs the delivery to the app as it came: the same bytes, the same headers but those of one hop.
 * `node:http` adds only `host`, `connection` and `content-length` (fetch would add `accept`,
 * `accept-encoding`, `accept-language`, `sec-fetch-mode` and `user-agent`), and follows no redirect.
 */
function forward(target: URL, request: IncomingMessage, body: Buffer): Promise<AppAnswer> {
  const headers: OutgoingHttpHeaders = { 'content-length': body.length };
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((done) => {
    const failed = (error: Error) => done({ status: null, body: Buffer.alloc(0), contentType: null, error: error.message });
    const outgoing = send(target, { method: 'POST', headers, signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS) }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', failed);
      response.on('end', () =>
        done({ status: response.statusCode ?? null, body: Buffer.concat(chunks), contentType: response.headers['content-type'] ?? null }),
      );
    });
    outgoing.on('error', failed);
    outgoing.end(body);
  });
}

async function confirmation(
  client: PaymentClient | undefined,
  event: WebhookEvent,
): Promise<Pick<ListenedEvent, 'confirmation' | 'outcome' | 'confirmationDetail'>> {
  if (!client) return { confirmation: 'skipped', outcome: null, confirmationDetail: null };
  try {
    const { outcome } = await client.webhooks.confirm(event);
    return { confirmation: 'confirmed', outcome, confirmationDetail: null };
  } catch (error) {
    if (error instanceof WebhookNotConfirmedError) return { confirmation: error.reason, outcome: null, confirmationDetail: error.message };
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { confirmation: 'error', outcome: null, confirmationDetail: detail };
  }
}

/** The table's last column: a confirmed refusal reads as what it is, in yellow, apart from both success and doubt. */
function verdict(event: ListenedEvent): [word: string, color: number] {
  if (event.confirmation === 'skipped') return ['skipped', 2];
  if (event.confirmation !== 'confirmed') return [event.confirmation, 31];
  if (event.outcome === 'refused' || event.outcome === 'failed') return [event.outcome, 33];
  return ['confirmed', 32];
}

function describe(
  event: WebhookEvent,
): Pick<ListenedEvent, 'eventCode' | 'reference' | 'paymentReference' | 'amount' | 'currency' | 'status'> {
  const data = event.data as Record<string, unknown>;
  const paymentReference = text(data.paymentReference);
  const refund = event.event_code === 'REFUND';
  return {
    eventCode: event.event_code,
    reference: refund ? (text(data.refundReference) ?? paymentReference) : paymentReference,
    paymentReference,
    amount: typeof data.amount === 'number' ? data.amount : null,
    currency: text(data.currency),
    status: text(refund ? data.status : data.paymentStatus),
  };
}

/** Writes one event as its format wants it: a line of text, a CSV line, or one JSON object per line. */
function printer(terminal: Terminal, format: Format): (event: ListenedEvent) => void {
  const out = terminal.stdout;
  if (format === 'json' || format === 'ndjson') return (event) => out.write(`${safeJson(event)}\n`);
  if (format === 'csv') {
    const tty = Boolean(out.isTTY);
    out.write(csvLine([...CSV_COLUMNS], tty));
    return (event) =>
      out.write(
        csvLine(
          CSV_COLUMNS.map((column) => {
            if (column === 'forwardedStatus') return event.forwarded?.status;
            if (column === 'forwardedBody') return event.forwarded?.body;
            return event[column];
          }),
          tty,
        ),
      );
  }
  const color = useColor(terminal, out);
  return (event) => {
    const [word, code] = verdict(event);
    // Every field but the time comes from the delivery: escaped, so a webhook cannot drive the terminal.
    const field = (value: string) => terminalSafe(value);
    const parts = [
      event.receivedAt.slice(11, 19),
      field(event.eventCode).padEnd(13),
      field(event.reference ?? '-').padEnd(28),
      field(event.amount === null ? '-' : `${event.amount} ${event.currency ?? ''}`.trim()).padEnd(10),
      field(event.status ?? '-').padEnd(10),
      paint(color, code, word.padEnd(11)),
    ];
    if (event.forwarded) parts.push(`-> ${event.forwarded.status ?? 'no answer'} ${field(event.forwarded.body)}`);
    out.write(`${parts.join('  ').trimEnd()}\n`);
  };
}

/** How long the start-up check of the key may take: one read, not retried. */
const KEY_CHECK_TIMEOUT_MS = 10_000;

/**
 * Stops before listening when the API refuses the key (401, 403): no event could be confirmed. Any
 * other failure is left to each event's confirmation, which reports it.
 */
async function checkKey(client: PaymentClient, baseUrl: string): Promise<void> {
  try {
    await client.terminals.list(undefined, { maxRetries: 0, timeout: KEY_CHECK_TIMEOUT_MS });
  } catch (error) {
    if (!(error instanceof AuthenticationError || error instanceof PermissionDeniedError)) return;
    const code = error.code === undefined ? '' : `, ${error.code}`;
    throw new ExitError(
      `the API at ${baseUrl} refused the API key (${error.status}${code}): no event could be confirmed; check --api-key, ` +
        '--webcode and --env (or PAYMENT_SERVICE_API_KEY, PAYMENT_SERVICE_WEBCODE; config show says which is used), or pass --no-confirm',
      EXIT.failure,
    );
  }
}

/** Why the receiver could not listen, in one line (exit 1). */
function listenError(error: NodeJS.ErrnoException, port: number, host: string): Error {
  if (error.code === 'EADDRINUSE')
    return new ExitError(`port ${port} is in use: pick another with --port (0 picks a free one)`, EXIT.failure);
  if (error.code === 'EACCES')
    return new ExitError(`port ${port} needs privileges this user lacks: pick another with --port`, EXIT.failure);
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
    return new ExitError(`cannot listen on ${host}: not an address of this machine (--host)`, EXIT.failure);
  return error;
}

function reply(response: ServerResponse, status: number, body: Buffer | string, contentType = 'application/json'): void {
  response.writeHead(status, { 'content-type': contentType });
  response.end(body);
}

/** How `listen` answers each request: a POSTed webhook checked, forwarded (`--forward-to`), answered, then printed with its confirmation. */
function deliveries(
  terminal: Terminal,
  target: URL | undefined,
  client: PaymentClient | undefined,
  print: (event: ListenedEvent) => void,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  return async (request, response) => {
    if (request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      reply(response, 405, JSON.stringify({ error: 'webhooks are POSTed' }));
      return;
    }
    const receivedAt = new Date().toISOString();
    const body = await readBody(request);
    if (!body) {
      // The answer first, then the rest of the body read and dropped before the connection closes.
      refuseBody(request, JSON.stringify({ error: `a webhook is at most ${MAX_BODY_BYTES} bytes` }));
      say(terminal, `listen: refused a delivery of more than ${MAX_BODY_BYTES} bytes`);
      return;
    }
    let event: WebhookEvent | undefined;
    try {
      event = parseWebhook(body);
    } catch (error) {
      if (!(error instanceof WebhookParseError)) throw error;
      say(terminal, `listen: a delivery that is not a webhook: ${error.message}`);
    }
    const answer = target ? await forward(target, request, body) : undefined;
    if (answer?.status != null) reply(response, answer.status, answer.body, answer.contentType ?? 'text/plain');
    else if (answer) reply(response, 502, JSON.stringify({ error: `the app did not answer: ${answer.error}` }));
    else if (event) reply(response, 200, JSON.stringify({ received: true }));
    else reply(response, 400, JSON.stringify({ error: 'not a webhook: a JSON object { event_code, data }' }));
    if (answer?.error) say(terminal, `listen: ${target} did not answer: ${answer.error}`);
    if (!event) return;
    print({
      receivedAt,
      ...describe(event),
      ...(await confirmation(client, event)),
      forwarded: answer ? { status: answer.status, body: oneLine(answer.body.toString('utf8')) } : null,
      event,
    });
  };
}

/**
 * Stops the receiver on Ctrl-C, SIGTERM or a closed stdout (`| head`): the server closed, its URL
 * taken off the sandbox it registered with (once that registration has settled), then the exit.
 * `registered` is set once the registration starts: a signal during it still takes the URL off.
 */
function stopOnSignals(terminal: Terminal, server: Server, url: string): { registered: Promise<SandboxLink | undefined> } {
  const state = { registered: Promise.resolve<SandboxLink | undefined>(undefined) };
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    server.close();
    void state.registered
      .catch(() => undefined)
      .then(async (sandbox) => {
        if (!sandbox) return;
        try {
          await sandbox.request('DELETE', `webhook-urls?url=${encodeURIComponent(url)}`);
          say(terminal, `Removed ${url} from the sandbox's webhook URLs.`);
        } catch (error) {
          say(terminal, `listen: could not remove ${url} from the sandbox: ${(error as Error).message}`);
        }
      })
      .then(() => process.exit(code));
  };
  process.once('SIGINT', () => stop(EXIT.ok));
  process.once('SIGTERM', () => stop(EXIT.ok));
  // The reader of stdout went away (`| head`): leave the sandbox as on Ctrl-C.
  terminal.stdout.on('error', () => stop(BROKEN_PIPE));
  return state;
}

/** Adds `url` to the webhook URLs of the sandbox the settings point at, if they point at one; a refused key closes the server and throws. */
function registerWithSandbox(terminal: Terminal, settings: Profile, server: Server, url: string): Promise<SandboxLink | undefined> {
  return findSandbox(settings).then(
    async (found) => {
      if (found) await found.request('POST', 'webhook-urls', { url });
      return found;
    },
    (error: unknown) => {
      // A refused key: the sandbox would send nothing here, so listening is pointless.
      if (error instanceof KeyRefusedError) {
        server.close();
        throw error;
      }
      say(terminal, `listen: ${(error as Error).message}; not registered anywhere`);
      return undefined;
    },
  );
}

/** What the receiver does, on stderr once it listens. */
function announce(terminal: Terminal, url: string, sandbox: SandboxLink | undefined, target: URL | undefined, confirming: boolean): void {
  say(terminal, `Listening for webhooks on ${url}`);
  say(
    terminal,
    sandbox
      ? `  registered as a webhook URL of the sandbox at ${sandbox.baseUrl}: its events and the dashboard's resends come here`
      : '  not a sandbox: set this address (reachable from the service, for example through a tunnel) as the webhook URL in the merchant dashboard',
  );
  say(terminal, target ? `  forwarding each delivery to ${target}` : '  not forwarding (add --forward-to URL)');
  say(terminal, confirming ? '  confirming each event through the API' : '  not confirming events (--no-confirm)');
  say(terminal, 'Press Ctrl+C to stop.');
}

export function registerListen(program: Command, context: CommandContext): void {
  program
    .command('listen')
    .description('receive webhooks on this machine: print each event, confirm it through the API, pass it on with --forward-to')
    .option('--port <n>', 'port to listen on (0 picks a free one)', '0')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--forward-to <url>', "POST each delivery, raw body and headers, to your app; the sender gets the app's answer")
    .option('--no-confirm', 'print events without confirming them through the API (no key needed)')
    .addHelpText(
      'after',
      [
        '',
        'Each event is printed on stdout as it arrives: time, event code, reference, amount, status, whether the',
        "API confirms it, and under --forward-to the app's status and the start of its answer. --format json",
        'and ndjson print one JSON object per line; csv a header, then a line per event.',
        '',
        "Against the sandbox the receiver adds itself to its webhook URLs (the dashboard's resends reach it too)",
        'and takes itself off on Ctrl-C. Against the service, set the webhook URL in the merchant dashboard.',
        '',
        'Example: payment-service-sdk listen --port 4242 --forward-to http://localhost:3000/webhooks',
      ].join('\n'),
    )
    .action(async (flags: ListenFlags, command: Command) => {
      const { terminal } = context;
      const port = integer('port', flags.port, 0, 65_535);
      const target = flags.forwardTo === undefined ? undefined : forwardTarget(flags.forwardTo);
      const client = flags.confirm ? context.client(command) : undefined;
      const settings = context.settings(command);
      const handle = deliveries(terminal, target, client, printer(terminal, context.format(command)));
      if (client) await checkKey(client, settings.baseUrl ?? '');

      const server = createServer((request, response) => {
        void handle(request, response).catch((error: unknown) => {
          say(terminal, `listen: ${(error as Error).message}`);
          if (!response.headersSent) reply(response, 500, JSON.stringify({ error: 'listen failed' }));
        });
      });
      await new Promise<void>((ready, fail) => {
        server.once('error', (error: NodeJS.ErrnoException) => fail(listenError(error, port, flags.host)));
        server.listen(port, flags.host, () => ready());
      });
      const url = localUrl(flags.host, (server.address() as AddressInfo).port);
      // Ready to stop before registering: a signal during registration still takes the URL off.
      const stops = stopOnSignals(terminal, server, url);
      stops.registered = registerWithSandbox(terminal, settings, server, url);
      announce(terminal, url, await stops.registered, target, client !== undefined);
      // Runs until a signal stops it.
      await new Promise<never>(() => {});
    });
}
