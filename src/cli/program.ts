/**
 * The command tree of `payment-service-sdk`, on commander (bundled into the bin, so importing the
 * SDK loads none of it). Every command has generated help (`-h`, `--help`); a usage mistake prints
 * one line and exits 2, a failure of the service or the network exits 1.
 */
import { Command, CommanderError, Option } from 'commander';
import {
  ConfigurationError,
  ConnectionError,
  decodeRedirectData,
  type Environment,
  type Paginator,
  PaymentClient,
  PaymentServiceError,
  type PosPayment,
  PosPaymentPendingError,
  RequestValidationError,
  TerminalCommunicationError,
  TimeoutError,
} from '../index.js';
import { VERSION } from '../version.js';
import { parseAmount } from './amount.js';
import { MODIFICATION_COLUMNS, POS_COLUMNS, SESSION_COLUMNS } from './columns.js';
import { completionScript } from './completion.js';
import { configPath, mask, PROFILE_KEYS, type Profile, profileKey, readConfig, resolveSettings, writeConfig } from './config.js';
import { sandboxOnly } from './control.js';
import { createdOptions, createdRange, inCreatedRange, posDates } from './created-range.js';
import {
  EXIT,
  EXIT_CODES_HELP,
  ExitError,
  type Format,
  formatOf,
  safeJson,
  say,
  type Terminal,
  terminalSafe,
  UsageError,
  writeRecord,
  writeRecords,
} from './io.js';
import { KeySource } from './key-source.js';
import { errorLine, missingSetting, settingMessage, validationMessage, wantsJsonErrors } from './messages.js';
import { ask, whyNotAsk } from './prompt.js';
import { integer, registerSandbox } from './sandbox.js';

/** The options every command takes, from the root. */
export interface GlobalOptions {
  /** A key, or `-` to read it from stdin. */
  apiKey?: string;
  apiKeyFile?: string;
  webcode?: string;
  baseUrl?: string;
  env?: string;
  profile?: string;
  format?: string;
  yes?: boolean;
  /** False under `--no-input`. */
  input?: boolean;
}

/** What a command needs of the root: the terminal, the client, the format, the Live-write guard. */
export interface CommandContext {
  terminal: Terminal;
  options(command: Command): GlobalOptions;
  /** The client settings in use: flags, then variables, then the profile. */
  settings(command: Command): Profile;
  /** The same, with where each setting came from (`config show`). */
  sourcedSettings(command: Command): ReturnType<typeof resolveSettings>;
  client(command: Command): PaymentClient;
  format(command: Command): Format;
  environment(command: Command): Environment;
  /** Asks before a Live write on a terminal; under --no-input or off a terminal a Live write needs --yes. */
  confirmLive(command: Command, what: string): Promise<void>;
  /** Reads what the global flags take from stdin (`--api-key -`), once, before a command runs. */
  readInput(command: Command): Promise<void>;
}

/** The client settings of the global flags (the key as {@link KeySource} finds it), then variables and the profile. */
function resolveGlobal(options: GlobalOptions, terminal: Terminal, keys: KeySource) {
  if (options.env !== undefined && options.env !== 'test' && options.env !== 'live') throw new UsageError('--env must be test or live');
  const key = keys.resolve(options);
  const flags: Profile = { apiKey: key?.key, webcode: options.webcode, baseUrl: options.baseUrl, environment: options.env };
  return resolveSettings(flags, terminal.env, options.profile, key ? { apiKey: key.source } : {});
}

/** A client of the resolved settings; a setting missing or refused is said in the CLI's words (exit 2). */
export function clientFor(settings: Profile): PaymentClient {
  for (const key of ['apiKey', 'webcode', 'baseUrl'] as const)
    if (settings[key] === undefined) throw new ExitError(missingSetting(key), EXIT.usage);
  try {
    return new PaymentClient({
      apiKey: settings.apiKey,
      webcode: settings.webcode,
      baseUrl: settings.baseUrl,
      environment: settings.environment as Environment | undefined,
    });
  } catch (error) {
    if (error instanceof ConfigurationError) throw new ExitError(settingMessage(error), EXIT.usage);
    throw error;
  }
}

export function createContext(terminal: Terminal): CommandContext {
  const keys = new KeySource(terminal);
  const context: CommandContext = {
    terminal,
    options: (command) => command.optsWithGlobals<GlobalOptions>(),
    sourcedSettings: (command) => resolveGlobal(context.options(command), terminal, keys),
    settings: (command) => context.sourcedSettings(command).settings,
    client: (command) => clientFor(context.settings(command)),
    format: (command) => formatOf(context.options(command).format, terminal),
    environment: (command) => (context.settings(command).environment as Environment | undefined) ?? 'test',
    async confirmLive(command, what) {
      const options = context.options(command);
      if (context.environment(command) !== 'live' || options.yes) return;
      const why = whyNotAsk(terminal, options.input === false);
      if (why) throw new ExitError(`${what} in Live needs --yes ${why}: nothing was sent`, EXIT.usage);
      const answer = await ask(terminal, `${what} in LIVE (real money). Continue? [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) throw new CancelledError('Nothing was sent.');
    },
    async readInput(command) {
      const options = context.options(command);
      await keys.readStdin(options, options.input === false);
    },
  };
  return context;
}

/** The person said no at a prompt: nothing was done (exit 1). */
export class CancelledError extends Error {
  override name = 'CancelledError';
}

function positive(name: string): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!/^\d+$/.test(value) || number < 1) throw new UsageError(`--${name} must be a whole number of at least 1`);
    return number;
  };
}

/** A page size: the service's range, checked before anything is sent (as `export --take` does). */
const pageSize = (value: string) => integer('take', value, 1, 100);

/** The params object of a command: given flags only (an absent flag is never sent as `undefined`). */
function params(entries: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined));
}

const amountOption = () => new Option('--amount <cents>', 'amount in cents, as plain digits: 2599 is 25.99');
const currencyOption = () => new Option('--currency <code>', 'EUR, GBP or USD').default('EUR');
const keyOption = () => new Option('--idempotency-key <key>', 'Idempotency-Key of the write (default: a new UUID)');

/** Listing commands stop here unless `--limit` or `--all` says otherwise. */
const DEFAULT_LIMIT = 100;

/**
 * Items of a listing, up to `--limit` (default 100) or all with `--all`; a cut list says so on stderr,
 * with the total. `keep` drops the items a filter of the CLI's own refuses (the total is then unknown).
 */
async function collect<T>(
  terminal: Terminal,
  paginator: Paginator<T>,
  flags: { limit?: number; all?: boolean },
  keep?: (item: T) => boolean,
): Promise<T[]> {
  const limit = flags.all ? Number.POSITIVE_INFINITY : (flags.limit ?? DEFAULT_LIMIT);
  const items: T[] = [];
  for await (const page of paginator.pages()) {
    items.push(...(keep ? page.items.filter(keep) : page.items));
    if (items.length < limit) continue;
    if (items.length > limit || page.hasMore) {
      const of = keep ? '' : ` of ${Math.max(page.total, items.length)}`;
      const limitFlag = flags.limit === undefined ? `--limit, default ${DEFAULT_LIMIT}` : '--limit';
      say(terminal, `showing ${limit}${of} (${limitFlag}); --all shows every one`);
    }
    return items.slice(0, limit);
  }
  return items;
}

/** The `--created-from/--created-to` range of a listing the CLI filters itself: the predicate, or none. */
function createdKeep(flags: { createdFrom?: string; createdTo?: string }): ((item: unknown) => boolean) | undefined {
  const range = createdRange(flags);
  return range ? inCreatedRange(range) : undefined;
}

function listingOptions(command: Command): Command {
  return command
    .option('--take <n>', 'page size, 1 to 100', pageSize)
    .option('--limit <n>', 'stop after this many items (default 100)', positive('limit'))
    .option('--all', 'every item, however many pages');
}

/**
 * Wraps an action with its output: the record(s) it returns are written in the chosen format, then
 * `verdict` may end the command with another exit code (a declined payment still prints its record).
 * `columns` orders tables and CSV; a record type's ({@link RECORD_COLUMNS}) are the whole CSV of a listing.
 */
function output<T>(
  context: CommandContext,
  columns: readonly string[],
  run: (command: Command, ...args: string[]) => Promise<T>,
  verdict?: (result: T) => void,
) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const positional = args.slice(0, -2).filter((arg): arg is string => typeof arg === 'string');
    const format = context.format(command);
    const result = await run(command, ...positional);
    // A record type's columns (a listing of one) are its CSV's, whole; other lists show the columns first.
    const declared = Object.values(RECORD_COLUMNS).includes(columns as never);
    if (Array.isArray(result)) writeRecords(context.terminal, format, result, columns, declared ? 'only' : 'seen');
    else writeRecord(context.terminal, format, result, declared ? columns : []);
    verdict?.(result);
  };
}

/** The exit code of a POS payment's final record: 0 success, 3 failed, 4 not known yet. */
function posVerdict(payment: PosPayment): void {
  if (payment.status === 'failed') {
    const reason = payment.errorMessage ? `: ${payment.errorMessage}` : '';
    throw new ExitError(`the payment ${payment.posPaymentId} failed${reason}`, EXIT.paymentFailed);
  }
  if (payment.status !== 'success') throw new ExitError(unknownOutcome(payment.posPaymentId, payment.status), EXIT.outcomeUnknown);
}

function unknownOutcome(posPaymentId: string | undefined, status: string): string {
  return (
    `the outcome of the payment ${posPaymentId ?? '(id unknown)'} is not known yet (${status}); nothing was charged twice: ` +
    `look it up later with payment-service-sdk pos list`
  );
}

const SESSIONS_PAY_HELP = [
  'The holder name picks the outcome, as on the hosted page (case-insensitive): any other name pays;',
  'DECLINED, CARD_EXPIRED, INVALID_CARD, NOT_ENOUGH_BALANCE, CVC_DECLINED and FRAUD decline; ERROR is a',
  'processor error. Through the control API of the sandbox; against the real service it exits 1.',
  '',
  'Example: payment-service-sdk sessions pay 4f1c... --holder DECLINED',
].join('\n');

const RECORD_COLUMNS = { SESSION_COLUMNS, POS_COLUMNS, MODIFICATION_COLUMNS };
/** A write's acknowledgement (not a modification record: no listing has it), its fields first where present. */
const ACKNOWLEDGEMENT_COLUMNS = [
  'refundReference',
  'captureReference',
  'cancelReference',
  'paymentReference',
  'status',
  'amount.value',
  'amount.currency',
  'createdAt',
];

/** A spinner on stderr while the terminal waits (a terminal only: a script's stderr gets no frames). */
export function spinner(terminal: Terminal, text: string): () => void {
  if (!terminal.stderr.isTTY) return () => {};
  const frames = ['|', '/', '-', '\\'];
  const started = Date.now();
  let index = 0;
  const draw = () => terminal.stderr.write(`\r${frames[index++ % frames.length]} ${text} ${Math.floor((Date.now() - started) / 1000)} s`);
  draw();
  const timer = setInterval(draw, 120);
  return () => {
    clearInterval(timer);
    terminal.stderr.write('\r\u001b[2K');
  };
}

/** A charge that ended without a final record, in the CLI's words; a payment still pending prints what is known of it. */
function posFailure(context: CommandContext, command: Command, error: unknown, poiId: string): unknown {
  if (error instanceof TerminalCommunicationError) {
    return new ExitError(
      `terminal ${poiId} is offline or unreachable (${error.status}, ${error.code ?? 'no code'}: ${error.message}): ` +
        'check that it is on and connected, or pick another (terminals list)',
      EXIT.failure,
      { cause: error },
    );
  }
  if (error instanceof PosPaymentPendingError) {
    if (error.lastKnown) writeRecord(context.terminal, context.format(command), error.lastKnown, POS_COLUMNS);
    return new ExitError(unknownOutcome(error.posPaymentId, error.lastKnown?.status ?? 'pending'), EXIT.outcomeUnknown);
  }
  return error;
}

function registerResources(program: Command, context: CommandContext): void {
  const sessions = program.command('sessions').description('online payment sessions (hosted payment page)');
  sessions
    .command('create')
    .description('create a payment session; prints it with its paymentUrl')
    .addOption(amountOption().makeOptionMandatory())
    .addOption(currencyOption())
    .requiredOption('--url-ok <url>', 'where the customer goes after paying')
    .requiredOption('--url-ko <url>', 'where the customer goes after a failure, a cancel or expiry')
    .option('--description <text>', 'up to 255 characters')
    .option('--custom-reference <ref>', 'your reference, up to 100 characters')
    .option('--country-code <code>', 'ISO 3166-1 alpha-2, for example ES')
    .option('--shopper-locale <tag>', 'BCP-47 tag of the page language, for example es-ES')
    .option('--deliver-at <datetime>', 'ISO 8601 date-time')
    .option('--pre-auth', 'a pre-authorisation (captured later)')
    .addOption(keyOption())
    .action(
      output(context, SESSION_COLUMNS, async (command) => {
        const flags = command.opts();
        const amount = parseAmount(flags.amount, '--amount', flags.currency);
        await context.confirmLive(command, `Creating a session of ${amount} cents`);
        return context.client(command).sessions.create(
          params({
            amount: { value: amount, currency: flags.currency },
            urlOk: flags.urlOk,
            urlKo: flags.urlKo,
            description: flags.description,
            customReference: flags.customReference,
            countryCode: flags.countryCode,
            shopperLocale: flags.shopperLocale,
            deliverAt: flags.deliverAt,
            isPreAuth: flags.preAuth,
          }) as never,
          { idempotencyKey: flags.idempotencyKey },
        );
      }),
    );
  sessions
    .command('get <sessionId>')
    .description('a session, with its payment once paid')
    .action(output(context, SESSION_COLUMNS, (command, sessionId) => context.client(command).sessions.retrieve(sessionId ?? '')));
  const sessionList = listingOptions(
    sessions
      .command('list')
      .description('sessions, oldest first')
      .option('--status <status>', 'pending, completed, failed, expired or cancelled'),
  );
  createdOptions(sessionList, 'cli').action(
    output(context, SESSION_COLUMNS, (command) => {
      const flags = command.opts();
      const keep = createdKeep(flags);
      return collect(
        context.terminal,
        context.client(command).sessions.list(params({ status: flags.status, take: flags.take }) as never),
        flags,
        keep,
      );
    }),
  );
  sessions
    .command('pay <sessionId>')
    .description('pay a pending session as the hosted page would (sandbox only); prints the session')
    .option('--holder <name>', 'cardholder name, which picks the outcome: DECLINED, FRAUD, ERROR... (default: a name that pays)')
    .addHelpText('after', `\n${SESSIONS_PAY_HELP}`)
    .action(
      output(context, SESSION_COLUMNS, async (command, sessionId = '') => {
        const holder: string | undefined = command.opts().holder;
        if (holder !== undefined && holder.trim().length < 3) throw new UsageError('--holder must have at least 3 characters');
        const client = context.client(command);
        const sandbox = await sandboxOnly(context.settings(command), 'sessions pay');
        await sandbox.request(
          'POST',
          `${sandbox.environment}/sessions/${encodeURIComponent(sessionId)}/pay`,
          params({ holderName: holder }),
        );
        return client.sessions.retrieve(sessionId);
      }),
    );
  sessions
    .command('modifications <sessionId>')
    .description("the refunds, captures and cancels of a session's payment")
    .action(output(context, MODIFICATION_COLUMNS, (command, id) => context.client(command).sessions.listModifications(id ?? '')));

  const pos = program.command('pos').description('payments on physical terminals');
  pos
    .command('pay')
    .description('charge on a terminal and wait for its answer (up to 240 s), recovering an uncertain outcome without charging twice')
    .requiredOption('--poi-id <id>', 'the terminal, as `terminals list` shows it')
    .addOption(amountOption().makeOptionMandatory())
    .addOption(currencyOption())
    .option('--description <text>', 'up to 255 characters')
    .option('--custom-reference <ref>', 'your reference, up to 100 characters')
    .option('--pre-auth', 'a pre-authorisation (captured later)')
    .option('--no-recover', 'return the first outcome as it is (a `timeout` included)')
    .addOption(keyOption())
    .addHelpText(
      'after',
      `\nExit 0 when the payment succeeded, ${EXIT.paymentFailed} when it ended failed (declined), ${EXIT.outcomeUnknown} when its outcome is not known yet\n` +
        '(timeout, or still pending after recovery); the record is printed on stdout in each case.',
    )
    .action(
      output(
        context,
        POS_COLUMNS,
        async (command): Promise<PosPayment> => {
          const flags = command.opts();
          const amount = parseAmount(flags.amount, '--amount', flags.currency);
          await context.confirmLive(command, `Charging ${amount} cents on ${flags.poiId}`);
          const stop = spinner(context.terminal, `Waiting for terminal ${flags.poiId}...`);
          try {
            return await context.client(command).pos.createPayment(
              params({
                poiId: flags.poiId,
                amount: { value: amount, currency: flags.currency },
                description: flags.description,
                customReference: flags.customReference,
                isPreAuth: flags.preAuth,
              }) as never,
              { idempotencyKey: flags.idempotencyKey, recover: flags.recover },
            );
          } catch (error) {
            throw posFailure(context, command, error, flags.poiId);
          } finally {
            stop();
          }
        },
        posVerdict,
      ),
    );
  const posList = listingOptions(
    pos
      .command('list')
      .description('POS payments')
      .option('--status <status>', 'pending, success, failed or timeout')
      .option('--order <order>', 'asc or desc')
      .option('--created-at-start <time>', 'from this time (YYYY-MM-DD HH:MM:SS, UTC), sent as it is')
      .option('--created-at-end <time>', 'up to this time, sent as it is'),
  );
  createdOptions(posList, 'service').action(
    output(context, POS_COLUMNS, (command) => {
      const flags = command.opts();
      const query = params({
        status: flags.status,
        order: flags.order,
        createdAtStart: flags.createdAtStart,
        createdAtEnd: flags.createdAtEnd,
        ...posDates(flags),
        take: flags.take,
      });
      return collect(context.terminal, context.client(command).pos.list(query as never), flags);
    }),
  );
  pos
    .command('modifications <posPaymentId>')
    .description('the refunds, captures and cancels of a POS payment')
    .action(output(context, MODIFICATION_COLUMNS, (command, id) => context.client(command).pos.listModifications(id ?? '')));

  const modify = (name: 'refund' | 'capture' | 'cancel' | 'extend', description: string, withAmount: boolean) => {
    const command = program
      .command(name)
      .description(description)
      .requiredOption('--payment-reference <ref>', 'the payment (a posPaymentId for a POS payment)');
    if (withAmount) command.addOption(amountOption()).option('--currency <code>', 'EUR, GBP or USD (with --amount)', 'EUR');
    if (name === 'refund') command.option('--reason <text>', 'why');
    command.addOption(keyOption()).action(
      output(context, ACKNOWLEDGEMENT_COLUMNS, async (self) => {
        const flags = self.opts();
        const amount = flags.amount === undefined ? undefined : parseAmount(flags.amount, '--amount', flags.currency);
        await context.confirmLive(self, `A ${name} of ${flags.paymentReference}`);
        const body = params({
          paymentReference: flags.paymentReference,
          amount: amount === undefined ? undefined : { value: amount, currency: flags.currency },
          reason: flags.reason,
        });
        return context.client(self).modifications[name](body as never, { idempotencyKey: flags.idempotencyKey });
      }),
    );
  };
  modify('refund', 'refund a payment, all of it or --amount', true);
  modify('capture', 'capture a pre-authorisation, all of it or --amount', true);
  modify('cancel', 'release a pre-authorisation without charging', false);
  modify('extend', 'keep a pre-authorisation reserved longer', false);

  const modifications = program.command('modifications').description('refunds, captures, cancels and extends of every payment');
  const modificationList = listingOptions(
    modifications
      .command('list')
      .description('modifications, oldest first')
      .option('--type <type>', 'refund, capture, cancel or extend')
      .option('--status <status>', 'for example pending or success'),
  );
  createdOptions(modificationList, 'cli').action(
    output(context, MODIFICATION_COLUMNS, (command) => {
      const flags = command.opts();
      const keep = createdKeep(flags);
      return collect(
        context.terminal,
        context.client(command).modifications.list(params({ type: flags.type, status: flags.status, take: flags.take }) as never),
        flags,
        keep,
      );
    }),
  );

  program
    .command('terminals')
    .description('POS terminals')
    .command('list')
    .description('the terminals of your business')
    .option('--sync', 'online terminals only, as the provider reports them now')
    .action(
      output(context, ['poiId', 'name', 'model', 'status'], (command) =>
        context.client(command).terminals.list(params({ syncFromProvider: command.opts().sync }) as never),
      ),
    );

  program
    .command('decode-redirect <urlOrToken>')
    .description('decode and verify the `data` token of a urlOk redirect (a whole URL or the token)')
    .option('--secret <secret>', 'client secret of the environment (default PAYMENT_SERVICE_CLIENT_SECRET, or the profile)')
    .action(
      output(context, [], async (command, input) => {
        const global = context.options(command);
        const settings = resolveSettings({ clientSecret: command.opts().secret }, context.terminal.env, global.profile).settings;
        if (!settings.clientSecret) throw new ExitError(missingSetting('clientSecret'), EXIT.usage);
        let token = input ?? '';
        if (/^https?:\/\//.test(token)) token = new URL(token).searchParams.get('data') ?? '';
        if (token === '') throw new UsageError('the URL has no data parameter');
        return decodeRedirectData(token, settings.clientSecret);
      }),
    );
}

function registerConfig(program: Command, context: CommandContext): void {
  const config = program.command('config').description(`profiles of client settings, in ${configPath(context.terminal.env)}`);
  config
    .command('set <setting> <value>')
    .description(`set one of ${PROFILE_KEYS.join(', ')} in a profile (--profile, default "default")`)
    .action((setting: string, value: string, _flags: unknown, command: Command) => {
      const key = profileKey(setting);
      if (key === 'environment' && value !== 'test' && value !== 'live') throw new UsageError('environment must be test or live');
      const path = configPath(context.terminal.env);
      const file = readConfig(path);
      const name = context.options(command).profile ?? 'default';
      file.profiles[name] = { ...file.profiles[name], [key]: value };
      writeConfig(path, file);
      say(context.terminal, `${key} of profile ${name} set to ${mask(key, value)} in ${path}`);
    });
  config
    .command('show')
    .description('the settings in use and where each comes from; keys and secrets masked')
    .action((_flags: unknown, command: Command) => {
      const { settings, sources } = context.sourcedSettings(command);
      const rows = PROFILE_KEYS.map((key) => ({
        setting: key,
        value: settings[key] === undefined ? '' : mask(key, settings[key] ?? ''),
        from: sources[key] ?? 'not set',
      }));
      writeRecords(context.terminal, context.format(command), rows, ['setting', 'value', 'from']);
    });
}

/** Builds the program; commands are added by the modules that own them. */
export function buildProgram(context: CommandContext, extensions: ((program: Command, context: CommandContext) => void)[] = []): Command {
  const program = new Command('payment-service-sdk')
    .description('The payment service from the shell: every endpoint, exports, webhook listening, a local sandbox.')
    .version(VERSION, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .option('--api-key <key>', 'API key, or - to read it from stdin (default PAYMENT_SERVICE_API_KEY, or the profile)')
    .option('--api-key-file <path>', 'read the API key from a file; one trailing newline is dropped (default PAYMENT_SERVICE_API_KEY_FILE)')
    .option('--webcode <code>', 'your business identifier (default PAYMENT_SERVICE_WEBCODE)')
    .option('--base-url <url>', "the service's address (default PAYMENT_SERVICE_BASE_URL)")
    .option('--env <env>', 'test or live (default PAYMENT_SERVICE_ENVIRONMENT, else test)')
    .option('--profile <name>', 'profile of the config file to use (default "default")')
    .option('--format <format>', 'table, json, ndjson or csv (default: table on a terminal, json otherwise)')
    .option('-y, --yes', 'do Live writes without asking')
    .option('--no-input', 'never ask anything (implied when stdin is not a terminal): a Live write then needs --yes')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => context.terminal.stdout.write(text),
      writeErr: (text) => context.terminal.stderr.write(text),
      // One line for a usage mistake, not the whole help.
      outputError: (text, write) => write(`payment-service-sdk: ${terminalSafe(text.replace(/^error: /, '').trim())} (see --help)\n`),
    })
    .addHelpText('after', `\n${EXIT_CODES_HELP}`)
    .hook('preAction', (_program, command) => context.readInput(command));
  registerSandbox(program, context);
  registerResources(program, context);
  registerConfig(program, context);
  for (const extend of extensions) extend(program, context);
  program
    .command('completion <shell>')
    .description('print a completion script for bash or zsh: eval "$(payment-service-sdk completion bash)"')
    .action((shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') throw new UsageError('completion is for bash or zsh');
      context.terminal.stdout.write(completionScript(program, shell));
    });
  return program;
}

/** The message and exit code of an error a command threw. */
export function failure(error: unknown): { message: string; code: number } {
  if (error instanceof ExitError) return { message: error.message, code: error.exitCode };
  if (error instanceof UsageError) return { message: `${error.message} (see --help)`, code: EXIT.usage };
  if (error instanceof RequestValidationError) return { message: `${validationMessage(error)} (see --help)`, code: EXIT.usage };
  if (error instanceof ConfigurationError) return { message: settingMessage(error), code: EXIT.usage };
  // No answer at all: the request may or may not have reached the service (a keyed write can be resent as it was).
  if (error instanceof ConnectionError || error instanceof TimeoutError)
    return { message: `${error.name}: ${error.message}`, code: EXIT.noAnswer };
  if (error instanceof PaymentServiceError) return { message: `${error.name}: ${error.message}`, code: EXIT.failure };
  if (error instanceof CancelledError) return { message: error.message, code: EXIT.failure };
  return { message: error instanceof Error ? error.message : String(error), code: EXIT.failure };
}

/**
 * Writes a failure on stderr: one line of prose, or under an explicit `--format json` / `ndjson`
 * one JSON line ({@link errorLine}: `name`, `message`, `status`, `code`, `traceId`, `exitCode`).
 */
function reportFailure(terminal: Terminal, json: boolean, error: unknown, message: string, code: number, name?: string): void {
  if (json) terminal.stderr.write(`${safeJson(errorLine(error, message, code, name))}\n`);
  else terminal.stderr.write(`payment-service-sdk: ${terminalSafe(message, true)}\n`);
}

/** Runs the CLI on `argv` (without node and the script); resolves with the exit code. */
export async function run(argv: string[], terminal: Terminal, extensions: Parameters<typeof buildProgram>[1] = []): Promise<number> {
  const program = buildProgram(createContext(terminal), extensions);
  const json = wantsJsonErrors(argv);
  if (json) {
    // A usage mistake commander finds (an unknown option or command, a missing argument): the same line, as JSON.
    const usage = (text: string) => {
      const message = `${text
        .replace(/^error: /, '')
        .trim()
        .replaceAll(/\s*\n\s*/g, ' ')} (see --help)`;
      reportFailure(terminal, true, undefined, message, EXIT.usage, 'UsageError');
    };
    const walk = (command: Command): void => {
      command.configureOutput({ outputError: usage });
      for (const sub of command.commands) walk(sub);
    };
    walk(program);
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help asked for (`--help`, `help`, `help <command>`, `<group> help <sub>`), or the version: done.
      // Help shown because a command was missing (commander's exit code 1 there): a usage mistake.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
      if (error.code === 'commander.help' && error.exitCode === 0) return EXIT.ok;
      return EXIT.usage;
    }
    const { message, code } = failure(error);
    reportFailure(terminal, json, error, message, code, error instanceof UsageError ? 'UsageError' : undefined);
    return code;
  }
}
