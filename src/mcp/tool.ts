/**
 * What every tool of the MCP server is, whatever declared it: its name, words, JSON Schemas and
 * annotations as `tools/list` shows them, whether it moves money, and the function that runs it.
 * The service's tools are made from the endpoint table (service-tools.ts), the sandbox's from its
 * control routes (sandbox-tools.ts); the server (server.ts) lists and calls them all the same way.
 */
import type { JsonObject } from '../openapi/json-schema.js';

/** The MCP tool annotations this server sets (hints to the client; the safety checks do not rely on them). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** What a money move is about, for the confirmation and `maxAmount`: read from the tool's arguments. */
export interface MoneyMove {
  /** The amount in minor units, when the operation carries one (cancel and extend do not). */
  value?: number | undefined;
  currency?: string | undefined;
  /** The payment (or terminal) the move is about. */
  reference?: string | undefined;
}

/** What a tool's run gets besides its arguments. */
export interface ToolCall {
  /** The `Idempotency-Key` of a write: the caller's, or the one derived from the tool and its arguments. */
  idempotencyKey?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** One tool. */
export interface McpTool {
  name: string;
  /** `service`: an operation of the payment service; `sandbox`: a control action of the sandbox. */
  kind: 'service' | 'sandbox';
  description: string;
  inputSchema: JsonObject;
  outputSchema: JsonObject;
  annotations: ToolAnnotations;
  /** A write that may be sent with an `Idempotency-Key` (it takes the optional `idempotencyKey` argument). */
  keyed: boolean;
  /** Moves money (refund, capture, cancel, extend, the POS charge): confirmed in Live, bounded by `maxAmount`. */
  movesMoney: boolean;
  /** The amount and reference of a money move, from the arguments. */
  move?: ((args: Record<string, unknown>) => MoneyMove) | undefined;
  /** Runs the tool; resolves with its `structuredContent` (an object that its `outputSchema` describes). */
  run(args: Record<string, unknown>, call: ToolCall): Promise<Record<string, unknown>>;
}
