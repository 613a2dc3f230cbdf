/**
 * The control API under `/_sandbox/`: its routes, and the two steps around the caller's check:
 * which route a request names (404, 405), then its parameters and body, and the control it runs.
 * The answers are JSON in the service's envelopes.
 */
import type { Environment } from '../../core/options.js';
import { notFound } from '../api/context.js';
import { FaultRuleError, type FaultRules } from '../faults.js';
import { readOptionalJsonText } from '../http/body.js';
import type { RequestLog } from '../request-log/store.js';
import { invalid, jsonResponse, SANDBOX_CODES, ServiceFailure, successBody } from '../responses.js';
import type { Next, Step } from '../steps/chain.js';
import { CONTROL_PREFIX, type Located } from '../steps/request.js';
import { jsonObject } from '../validation.js';
import { type ControlListParams, parseDuration, type SandboxControl } from './control.js';
import { REQUEST_ROUTES } from './requests.js';

export type ControlRoute = {
  method: 'GET' | 'POST' | 'DELETE';
  pattern: RegExp;
  run: (
    control: SandboxControl,
    context: {
      environment: Environment;
      params: string[];
      query: URLSearchParams;
      body: Record<string, unknown>;
      faults: FaultRules;
      requests: RequestLog;
    },
  ) => unknown | Promise<unknown>;
};

const listParams = (query: URLSearchParams): ControlListParams & { type?: string | undefined } => ({
  status: query.get('status') ?? undefined,
  type: query.get('type') ?? undefined,
  take: query.has('take') ? Number(query.get('take')) : undefined,
  cursor: query.get('cursor') ?? undefined,
  order: (query.get('order') ?? undefined) as 'asc' | 'desc' | undefined,
});

function deliveryId(param: string): number {
  if (!/^\d{1,15}$/.test(param)) throw notFound('Webhook delivery');
  return Number(param);
}

/** Routes under `/_sandbox/{test|live}/`: the records of one environment, with its key. */
export const ENVIRONMENT_ROUTES: readonly ControlRoute[] = [
  { method: 'GET', pattern: /^sessions$/, run: (c, x) => c.listSessions(x.environment, listParams(x.query)) },
  { method: 'GET', pattern: /^sessions\/([^/]+)$/, run: (c, x) => c.session(x.environment, x.params[0] ?? '') },
  {
    method: 'POST',
    pattern: /^sessions\/([^/]+)\/pay$/,
    run: (c, x) => c.paySession(x.environment, x.params[0] ?? '', { holderName: x.body.holderName as string | undefined }),
  },
  { method: 'POST', pattern: /^sessions\/([^/]+)\/expire$/, run: (c, x) => c.expireSession(x.environment, x.params[0] ?? '') },
  { method: 'GET', pattern: /^pos-payments$/, run: (c, x) => c.listPosPayments(x.environment, listParams(x.query)) },
  { method: 'GET', pattern: /^pos-payments\/([^/]+)$/, run: (c, x) => c.posPayment(x.environment, x.params[0] ?? '') },
  {
    method: 'POST',
    pattern: /^pos-payments\/([^/]+)\/resolve$/,
    run: (c, x) => c.resolvePosPayment(x.environment, x.params[0] ?? '', x.body.outcome as 'success' | 'failed'),
  },
  { method: 'GET', pattern: /^modifications$/, run: (c, x) => c.listModifications(x.environment, listParams(x.query)) },
  { method: 'GET', pattern: /^modifications\/([^/]+)$/, run: (c, x) => c.modification(x.environment, x.params[0] ?? '') },
  { method: 'GET', pattern: /^deliveries$/, run: (c, x) => c.listDeliveries(x.environment, listParams(x.query)) },
  { method: 'GET', pattern: /^deliveries\/([^/]+)$/, run: (c, x) => c.delivery(x.environment, deliveryId(x.params[0] ?? '')) },
  {
    method: 'POST',
    pattern: /^deliveries\/([^/]+)\/resend$/,
    run: (c, x) => c.resendDelivery(x.environment, deliveryId(x.params[0] ?? '')),
  },
  {
    method: 'POST',
    pattern: /^events$/,
    run: (c, x) => c.emitEvent(x.environment, String(x.body.eventCode ?? ''), String(x.body.reference ?? '')),
  },
  ...REQUEST_ROUTES.map((route): ControlRoute => ({ ...route, run: (_c, x) => route.run(x) })),
];

/** A rule added, or 400 with what is wrong with it. */
function addFault(faults: FaultRules, body: Record<string, unknown>): unknown {
  try {
    return faults.add(body);
  } catch (error) {
    throw error instanceof FaultRuleError ? invalid(error.message) : error;
  }
}

/** Routes under `/_sandbox/` of no environment: the clock, the webhook URLs, the fault rules, reset. */
export const GLOBAL_ROUTES: readonly ControlRoute[] = [
  { method: 'GET', pattern: /^clock$/, run: (c) => c.clock() },
  {
    method: 'POST',
    pattern: /^clock\/advance$/,
    run: (c, x) => {
      const ms = parseDuration(x.body.ms ?? x.body.duration);
      if (ms === undefined) throw invalid('Give ms (an integer) or duration ("90s", "5m", "1h30m", "PT5M")');
      return c.advanceClock(ms);
    },
  },
  {
    method: 'POST',
    pattern: /^reset$/,
    run: async (c) => {
      await c.reset();
      return c.clock();
    },
  },
  { method: 'GET', pattern: /^faults$/, run: (_c, x) => x.faults.list() },
  { method: 'POST', pattern: /^faults$/, run: (_c, x) => addFault(x.faults, x.body) },
  {
    method: 'DELETE',
    pattern: /^faults$/,
    run: (_c, x) => {
      x.faults.clear();
      return x.faults.list();
    },
  },
  { method: 'DELETE', pattern: /^faults\/([^/]+)$/, run: (_c, x) => x.faults.remove(x.params[0] ?? '') ?? notFoundRule(x.params[0]) },
  { method: 'GET', pattern: /^webhook-urls$/, run: (c) => ({ urls: c.webhookUrls }) },
  { method: 'POST', pattern: /^webhook-urls$/, run: (c, x) => ({ urls: c.addWebhookUrl(String(x.body.url ?? '')) }) },
  { method: 'DELETE', pattern: /^webhook-urls$/, run: (c, x) => ({ urls: c.removeWebhookUrl(x.query.get('url') ?? '') }) },
];

function notFoundRule(id: string | undefined): never {
  throw notFound(`Fault rule ${id}`);
}

/** A control request with its route; `environment` is `undefined` for the routes of no environment (any key). */
export interface ControlRequest extends Located {
  environment: Environment | undefined;
  route: ControlRoute;
  /** The path after `/_sandbox/` and the environment. */
  path: string;
}

/**
 * Which control route a request names: under `/_sandbox/{test|live}/` the records of that
 * environment (its key only), under `/_sandbox/` the clock, the webhook URLs and reset (any key).
 */
export function controlEndpoint(): Step<Located, ControlRequest> {
  return (context, next) => {
    const { request, url } = context;
    const rest = url.pathname.slice(CONTROL_PREFIX.length);
    const scoped = /^(test|live)\/(.*)$/.exec(rest);
    const path = scoped ? (scoped[2] ?? '') : rest;
    const matching = (scoped ? ENVIRONMENT_ROUTES : GLOBAL_ROUTES).filter((candidate) => candidate.pattern.test(path));
    if (matching.length === 0) throw notFound(`Control endpoint ${url.pathname}`);
    const route = matching.find((candidate) => candidate.method === request.method);
    if (!route) throw new ServiceFailure(405, SANDBOX_CODES.methodNotAllowed, `Method ${request.method} not allowed on ${url.pathname}`);
    return next({ ...context, environment: scoped?.[1] as Environment | undefined, route, path });
  };
}

/** Runs the route on the caller's tenant's controls: a POST's body is empty or a JSON object, within the size limit. */
/** `origin` gives the origin of the links an answer carries (a session's `paymentUrl`), from the request's URL. */
export function runControl(
  maxBodyBytes: number,
  origin: (url: URL) => string,
): Next<ControlRequest & { tenant: { control: SandboxControl; faults: FaultRules; requests: RequestLog } }> {
  return async (context) => {
    const { request, route, path, tenant } = context;
    const params = (route.pattern.exec(path) ?? []).slice(1).map((param) => {
      try {
        return decodeURIComponent(param);
      } catch {
        throw notFound(`Record ${param}`);
      }
    });
    const text = request.method === 'POST' ? await readOptionalJsonText(request, maxBodyBytes) : '';
    const body = text.trim() === '' ? {} : jsonObject(text);
    const environment = context.environment ?? 'test';
    const data = await route.run(tenant.control.forOrigin(origin(context.url)), {
      environment,
      params,
      query: context.url.searchParams,
      body,
      faults: tenant.faults,
      requests: tenant.requests,
    });
    return jsonResponse(200, successBody(data));
  };
}
