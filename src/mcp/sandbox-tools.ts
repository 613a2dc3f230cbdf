/**
 * The sandbox's control actions as MCP tools, made from its declared control routes (the same
 * values its router, typed methods and control document are made from: src/sandbox/control/):
 * pay or refuse a session with a test card, expire it, resolve a POS payment, set a terminal's
 * processing time, emit and resend webhooks, list deliveries, move the clock, fault rules, and the
 * request log with the filters of `logs`. Named `sandbox_<route>`; served only when the server's
 * target is a sandbox. Left out: the tenants, reset and the client secret's rotation
 * (its answer is the secret). The sandbox has no control that takes a terminal offline: its
 * `P400Plus-TEST-000003` is the offline one, always.
 */
import type * as z from 'zod/mini';
import { type JsonObject, jsonSchema } from '../openapi/json-schema.js';
import type { ControlRoute } from '../sandbox/control/route.js';
import { CONTROL_ROUTES } from '../sandbox/control/routes.js';
import type { SandboxLink } from './sandbox-link.js';
import type { McpTool } from './tool.js';

type RouteName = keyof typeof CONTROL_ROUTES;

/** The routes served as tools, with words the route's own do not say. */
export const SANDBOX_TOOL_ROUTES: Partial<Record<RouteName, string>> = {
  paySession:
    'Test cards: `holderName` DECLINED, CARD_EXPIRED, INVALID_CARD, NOT_ENOUGH_BALANCE, CVC_DECLINED, FRAUD or ERROR refuses the payment as the Test form does; any other name (default) pays it.',
  expireSession: '',
  getSession: '',
  resolvePosPayment: '',
  getPosPayment: '',
  getModification: '',
  listTerminals: '',
  setTerminal:
    'A slow terminal: `processingMs` 35000 makes its payments take 35 s of the sandbox clock. An offline one: `online` false (its payments answered 502 / 13004); `null` back to the simulated state.',
  listDeliveries: '',
  getDelivery: '',
  resendDelivery: '',
  emitEvent: '',
  getClock: '',
  advanceClock: '',
  listFaults: '',
  addFault: '',
  removeFault: '',
  clearFaults: '',
  listWebhookUrls: '',
  addWebhookUrl: "Where the sandbox POSTs its webhooks: add your app's receiver to see them arrive.",
  removeWebhookUrl: '',
  listRequests:
    'The request log: what your app (and this server) sent to the sandbox and what it answered, refused requests included: "what did my app send, and why was it refused?". The filters of `payment-service-sdk logs`.',
  getRequest: '',
};

function objectSchema(schema: z.core.$ZodType | undefined): { properties: Record<string, JsonObject>; required: string[] } {
  if (schema === undefined) return { properties: {}, required: [] };
  const converted = jsonSchema(schema, 'response') as { properties?: Record<string, JsonObject>; required?: string[] };
  return { properties: converted.properties ?? {}, required: converted.required ?? [] };
}

function inputSchema(route: ControlRoute): { schema: JsonObject; params: string[]; query: string[]; body: string[] } {
  const parts = { params: objectSchema(route.params), query: objectSchema(route.query), body: objectSchema(route.body) };
  const properties = { ...parts.body.properties, ...parts.query.properties, ...parts.params.properties };
  const required = [...new Set([...Object.keys(parts.params.properties), ...parts.query.required, ...parts.body.required])];
  return {
    schema: { type: 'object', properties, ...(required.length > 0 && { required }), additionalProperties: false },
    params: Object.keys(parts.params.properties),
    query: Object.keys(parts.query.properties),
    body: Object.keys(parts.body.properties),
  };
}

const pick = (args: Record<string, unknown>, names: readonly string[]) =>
  Object.fromEntries(names.filter((name) => args[name] !== undefined).map((name) => [name, args[name]]));

/** The sandbox's control actions as tools, over `link`. */
export function sandboxTools(link: SandboxLink): McpTool[] {
  return Object.entries(SANDBOX_TOOL_ROUTES).map(([name, extra]): McpTool => {
    const route = CONTROL_ROUTES[name as RouteName] as unknown as ControlRoute;
    const input = inputSchema(route);
    let output = jsonSchema(route.answer, 'response');
    const wrapped = output.type !== 'object';
    if (wrapped) output = { type: 'object', properties: { items: output }, required: ['items'] };
    const read = route.method === 'get';
    return {
      name: `sandbox_${name}`,
      kind: 'sandbox',
      description: [`Sandbox: ${route.summary}.`, route.description, extra].filter(Boolean).join(' '),
      inputSchema: input.schema,
      outputSchema: output,
      annotations: {
        title: `Sandbox: ${route.summary}`,
        readOnlyHint: read,
        destructiveHint: route.method === 'delete',
        idempotentHint: read || route.method === 'put' || route.method === 'delete',
        openWorldHint: false,
      },
      keyed: false,
      movesMoney: false,
      async run(args, call) {
        const path = (route.scoped ? `${link.environment}/` : '') + route.path.replace(/^\{environment\}\//, '');
        const filled = path.replace(/\{(\w+)\}/g, (_, param: string) => encodeURIComponent(String(args[param] ?? '')));
        const method = route.method.toUpperCase();
        const body = route.body === undefined ? undefined : pick(args, input.body);
        const data = await link.request(method, filled, pick(args, input.query), body, call.signal);
        return wrapped ? { items: data } : (data as Record<string, unknown>);
      },
    };
  });
}
