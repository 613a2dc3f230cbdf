import type { APIPromise } from '../core/api-promise.js';
import type { Endpoint, RequestOptions } from '../core/transport.js';
import { type ListTerminalsParams, ListTerminalsParamsSchema, type Terminal, TerminalListSchema } from '../schemas/terminals.js';
import { APIResource } from './resource.js';

const list = {
  method: 'GET',
  path: '/pos/terminals',
  params: ListTerminalsParamsSchema,
  response: TerminalListSchema,
} satisfies Endpoint<ListTerminalsParams, Terminal[]>;

/** The merchant's boarded POS terminals. */
export class Terminals extends APIResource {
  /** Lists boarded terminals; with `syncFromProvider: true`, only those online now. */
  list(params?: ListTerminalsParams, options?: RequestOptions): APIPromise<Terminal[]> {
    return this.core.request(list, { params }, options);
  }
}
