import type { Modifications } from './modifications.js';
import type { Pos } from './pos.js';
import type { Sessions } from './sessions.js';

/** The namespaces webhook confirmation reads through. */
export interface WebhookSources {
  sessions: Sessions;
  pos: Pos;
  modifications: Modifications;
}

/** Placeholder: replaced by the webhook module (confirm). */
export class Webhooks {
  readonly #sources: WebhookSources;

  constructor(sources: WebhookSources) {
    this.#sources = sources;
  }

  /** @internal */
  get sources(): WebhookSources {
    return this.#sources;
  }
}
