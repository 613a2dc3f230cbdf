/**
 * The sandbox's dashboard, served at `/` on the sandbox's own address: server-rendered pages of
 * the records of each environment with filters and paging, a record page with its timeline, forms
 * for the control actions, the clock, and the test-mode tables. Every page reads and every action
 * works without JavaScript; a small nonce'd script refreshes the page's live region when the
 * state changes (Server-Sent Events at `/_dashboard/events`). No asset comes from anywhere else.
 * One tenant at a time: the sandbox's own, or one made for a test worker, named by `?tenant=`.
 * This module routes the dashboard's paths to its pages, actions and live stream.
 */
import type { Environment } from '../../../core/options.js';
import { dashboardGate } from '../../http/access.js';
import { OPENAPI_PATH, openApiText, serviceDocument } from '../../openapi.js';
import { ServiceFailure } from '../../responses.js';
import { act } from './actions.js';
import { API_REFERENCE_PATH, apiReferencePage } from './api-reference.js';
import { events } from './events.js';
import { faultsPage } from './faults.js';
import { notFoundPage, render, unknownTenant } from './layout.js';
import { listPage, overview } from './lists.js';
import {
  DASHBOARD_EVENTS_PATH,
  type DashboardContext,
  type DashboardSettings,
  type Kind,
  LIVE_HEADER,
  type PageParts,
  TENANT_PARAM,
  tenantContext,
} from './parts.js';
import { deliveryPage, modificationPage, posPage, sessionPage } from './records.js';
import { referencePage } from './reference.js';
import { REQUESTS_PATH, requestPage, requestsPage } from './requests.js';

export type { DashboardContext, DashboardSettings } from './parts.js';
export { DASHBOARD_EVENTS_PATH } from './parts.js';

const ACTION_PATH = /^\/_dashboard\/actions\/([a-z-]+)$/;

const RECORD_PATH = /^\/(test|live)\/(sessions|pos-payments|modifications|deliveries)(?:\/([^/]+))?$/;

function decoded(param: string): string | undefined {
  try {
    return decodeURIComponent(param);
  } catch {
    return undefined;
  }
}

/** Serves the dashboard's pages, its live stream and its form actions; `undefined` for any other path. */
export async function handleDashboard(request: Request, url: URL, settings: DashboardSettings): Promise<Response | undefined> {
  const path = url.pathname;
  const action = ACTION_PATH.exec(path);
  const isPage =
    path === '/' ||
    path === '/live' ||
    path === '/faults' ||
    path === '/reference' ||
    path === API_REFERENCE_PATH ||
    RECORD_PATH.test(path) ||
    REQUESTS_PATH.test(path);
  if (!isPage && !action && path !== DASHBOARD_EVENTS_PATH) return undefined;
  const denied = settings.accessToken === undefined ? undefined : dashboardGate(request, url, settings.accessToken);
  if (denied) return denied;
  // An action names its tenant in the form it posts.
  if (action) return request.method === 'POST' ? act(settings, request, url, action[1] ?? '') : methodNotAllowed('POST');
  const context = tenantContext(settings, url.searchParams.get(TENANT_PARAM));
  if (!context) return unknownTenant(settings, url.searchParams.get(TENANT_PARAM) ?? '');
  if (path === DASHBOARD_EVENTS_PATH) return request.method === 'GET' ? events(context, request) : methodNotAllowed('GET');
  if (request.method !== 'GET' && request.method !== 'HEAD') return methodNotAllowed('GET');
  const notice = url.searchParams.get('notice') ?? undefined;
  const problem = url.searchParams.get('problem') ?? undefined;
  const liveOnly = request.headers.get(LIVE_HEADER) === '1';
  const here = new URL(url);
  here.searchParams.delete('notice');
  here.searchParams.delete('problem');
  const show = (parts: PageParts, status = 200) =>
    render(context, { ...parts, notice, problem: parts.problem ?? problem, here: `${here.pathname}${here.search}` }, status, liveOnly);
  if (path === '/' || path === '/live') return show(overview(context, path === '/' ? 'test' : 'live'));
  if (path === '/reference') return show(referencePage());
  if (path === '/faults') return show(faultsPage(context));
  if (path === API_REFERENCE_PATH) {
    return show(apiReferencePage(JSON.parse(await openApiText(OPENAPI_PATH, settings.origin ?? url.origin, serviceDocument))));
  }
  const requests = REQUESTS_PATH.exec(path);
  if (requests) return requestLogPage(context, requests, url.searchParams, show);
  const [, environmentName, kindName, idParam] = RECORD_PATH.exec(path) ?? [];
  const environment = environmentName as Environment;
  const kind = kindName as Kind;
  if (idParam === undefined) {
    try {
      return show(listPage(context, kind, environment, url.searchParams));
    } catch (error) {
      if (error instanceof ServiceFailure)
        return render(
          context,
          { ...listPage(context, kind, environment, new URLSearchParams()), notice, problem: error.message, here: path },
          400,
          liveOnly,
        );
      throw error;
    }
  }
  const id = decoded(idParam);
  try {
    if (id === undefined) throw new ServiceFailure(404, 0, 'No such record');
    const { control } = context;
    if (kind === 'sessions') return show(sessionPage(context, environment, control.session(environment, id)));
    if (kind === 'pos-payments') return show(posPage(context, environment, control.posPayment(environment, id)));
    if (kind === 'modifications') return show(modificationPage(context, environment, control.modification(environment, id)));
    if (!/^\d{1,15}$/.test(id)) throw new ServiceFailure(404, 0, 'No such delivery');
    return show(deliveryPage(context, environment, control.delivery(environment, Number(id))));
  } catch (error) {
    if (error instanceof ServiceFailure && error.status === 404)
      return notFoundPage(context, `No ${kind.replace('-', ' ')} ${id ?? idParam} in ${environment === 'test' ? 'Test' : 'Live'}.`);
    throw error;
  }
}

/** The Requests page (400 with the page unfiltered for a filter of the wrong form), or one entry's (404 for none). */
function requestLogPage(
  context: DashboardContext,
  [, environmentName, idParam]: RegExpExecArray,
  query: URLSearchParams,
  show: (parts: PageParts, status?: number) => Response,
): Response {
  const environment = environmentName as Environment;
  if (idParam === undefined) {
    try {
      return show(requestsPage(context, environment, query));
    } catch (error) {
      if (!(error instanceof ServiceFailure)) throw error;
      return show({ ...requestsPage(context, environment, new URLSearchParams()), problem: error.message }, 400);
    }
  }
  const id = decoded(idParam);
  const entry = id === undefined ? undefined : context.requests.get(id);
  if (entry?.environment !== environment)
    return notFoundPage(context, `No request ${id ?? idParam} in the ${environment === 'test' ? 'Test' : 'Live'} request log.`);
  return show(requestPage(context, environment, entry));
}

function methodNotAllowed(allow: string): Response {
  return new Response('Method not allowed', { status: 405, headers: { allow, 'content-type': 'text/plain; charset=utf-8' } });
}
