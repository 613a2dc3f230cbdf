import type { Transport } from '../core/transport.js';

/** Base of the namespaces: each method declares its endpoint and hands the call to the shared core. */
export abstract class APIResource {
  /** @internal The shared request core. */
  protected readonly core: Transport;

  constructor(core: Transport) {
    this.core = core;
  }
}
