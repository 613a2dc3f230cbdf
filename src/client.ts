import { type ClientOptions, type Environment, resolveOptions } from './core/options.js';
import { Transport } from './core/transport.js';
import { Modifications } from './resources/modifications.js';
import { Pos } from './resources/pos.js';
import { Sessions } from './resources/sessions.js';
import { Terminals } from './resources/terminals.js';
import { Webhooks } from './resources/webhooks.js';

/**
 * The payment service client.
 *
 * ```ts
 * const client = new PaymentClient({ apiKey, webcode, environment: 'test', baseUrl });
 * const session = await client.sessions.create({ amount: { value: 1000, currency: 'EUR' }, urlOk, urlKo });
 * ```
 *
 * Throws {@link ConfigurationError} when an option is missing or malformed.
 */
export class PaymentClient {
  /** Online payment sessions. */
  readonly sessions: Sessions;
  /** Payments on physical terminals. */
  readonly pos: Pos;
  /** Refund, capture, cancel and extend. */
  readonly modifications: Modifications;
  /** Boarded POS terminals. */
  readonly terminals: Terminals;
  /** Confirms webhook deliveries against the API. */
  readonly webhooks: Webhooks;
  /** The environment this client talks to. */
  readonly environment: Environment;
  /** The webcode every request carries. */
  readonly webcode: string;
  /** The service's base address. */
  readonly baseUrl: string;

  constructor(options?: ClientOptions) {
    const resolved = resolveOptions(options);
    const core = new Transport(resolved);
    this.environment = resolved.environment;
    this.webcode = resolved.webcode;
    this.baseUrl = resolved.baseUrl;
    this.sessions = new Sessions(core);
    this.pos = new Pos(core);
    this.modifications = new Modifications(core);
    this.terminals = new Terminals(core);
    this.webhooks = new Webhooks({
      sessions: this.sessions,
      pos: this.pos,
      modifications: this.modifications,
      environment: resolved.environment,
      webcode: resolved.webcode,
    });
  }
}
