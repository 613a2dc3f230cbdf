/** The dashboard's building blocks: what it needs from the sandbox, its sections, and the links, statuses, forms and tables every page uses. */
import type { Environment } from '../../../core/options.js';
import type { SandboxControl } from '../../control/control.js';
import type { FaultRules } from '../../faults.js';
import type { RequestLog } from '../../request-log/store.js';
import type { Tenants } from '../../tenants.js';
import { type Html, html } from '../html.js';

/** What the dashboard needs from the sandbox. */
export interface DashboardSettings {
  /** The sandbox's own tenant and those made for test workers: the dashboard shows one at a time. */
  tenants: Tenants;
  /** A secret of this process, put in every form: a page elsewhere cannot post actions here. */
  formToken: string;
  /** When set, every dashboard request needs it (`?token=` once, then the cookie). */
  accessToken?: string | undefined;
  maxBodyBytes: number;
  /** The origin of the links this request's pages give out (the payment page's): where the client reached the sandbox, or its public URL. */
  origin?: string | undefined;
}

/** One request's dashboard: the tenant it shows and acts on, and that tenant's controls and fault rules. */
export interface DashboardContext extends DashboardSettings {
  control: SandboxControl;
  faults: FaultRules;
  /** The tenant's request log. */
  requests: RequestLog;
  webcode: string;
  /** The chosen tenant's webcode as links carry it (`?tenant=`); `undefined` for the sandbox's own. */
  tenant: string | undefined;
  /** Aborted once the chosen tenant's removal begins: its live stream ends, its action answers as for an unknown tenant. */
  removed: AbortSignal;
  /** The tenant's client secret of an environment, as payment pages sign with it now. */
  clientSecret(environment: Environment): string;
  /** Rotates it (the control API's action); returns the new secret. */
  rotateClientSecret(environment: Environment): string;
}

/** Where the dashboard's pages and forms name the tenant they show. */
export const TENANT_PARAM = 'tenant';

/**
 * The dashboard of the tenant `webcode` names (`null` or empty: the sandbox's own);
 * `undefined` when no tenant has that webcode.
 */
export function tenantContext(settings: DashboardSettings, webcode: string | null): DashboardContext | undefined {
  const { main } = settings.tenants;
  const tenant = webcode === null || webcode === '' ? main : settings.tenants.all().find((candidate) => candidate.webcode === webcode);
  if (!tenant) return undefined;
  return {
    ...settings,
    control: settings.origin === undefined ? tenant.control : tenant.control.forOrigin(settings.origin),
    faults: tenant.faults,
    requests: tenant.requests,
    webcode: tenant.webcode,
    tenant: tenant === main ? undefined : tenant.webcode,
    removed: tenant.removed,
    clientSecret: (environment) => tenant.clientSecrets[environment],
    rotateClientSecret: (environment) => settings.tenants.rotateClientSecret(tenant, environment),
  };
}

/** A dashboard path (with or without a query) that keeps the chosen tenant. */
export function href(context: DashboardContext, path: string): string {
  if (context.tenant === undefined) return path;
  const split = path.indexOf('?');
  const query = new URLSearchParams(split < 0 ? '' : path.slice(split + 1));
  query.set(TENANT_PARAM, context.tenant);
  return `${split < 0 ? path : path.slice(0, split)}?${query}`;
}

export const KINDS = {
  sessions: { title: 'Sessions', statuses: ['pending', 'completed', 'failed', 'expired', 'cancelled'] },
  'pos-payments': { title: 'POS payments', statuses: ['pending', 'success', 'failed', 'timeout'] },
  modifications: { title: 'Modifications', statuses: ['pending', 'received', 'success', 'failed'] },
  deliveries: { title: 'Webhook deliveries', statuses: ['pending', 'delivered', 'abandoned'] },
} as const;
export type Kind = keyof typeof KINDS;

/** Asks for the live region's content alone: parsing a whole page would meet its other nonce. */
export const LIVE_HEADER = 'x-dashboard-live';

/** Where the live view listens. */
export const DASHBOARD_EVENTS_PATH = '/_dashboard/events';

export function money(amount: { value: number; currency: string } | null | undefined): string {
  return amount ? `${(amount.value / 100).toFixed(2)} ${amount.currency}` : '';
}

export function time(epochMs: number | null | undefined): string {
  return epochMs === null || epochMs === undefined ? '' : `${new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** The colour of each status, besides its word: done well, went wrong, under way, late, or over with no outcome. */
const TONES: Record<string, string> = {
  completed: 'ok',
  success: 'ok',
  delivered: 'ok',
  failed: 'bad',
  abandoned: 'bad',
  pending: 'wait',
  received: 'wait',
  timeout: 'late',
};

export function status(value: string): Html {
  const tone = TONES[value];
  return html`<span class="status${tone && ` ${tone}`}">${value}</span>`;
}

export function link(href: string, text: string): Html {
  return html`<a href="${href}">${text}</a>`;
}

export const base = (environment: Environment) => `/${environment}`;

export interface PageParts {
  title: string;
  environment: Environment | undefined;
  /** The nav entry of this page. */
  current: Kind | 'requests' | 'overview' | 'faults' | 'reference' | 'api-reference';
  body: Html;
  notice?: string | undefined;
  problem?: string | undefined;
  /** This page's path and query, where the clock's Advance comes back to (default `/`). */
  here?: string | undefined;
}

export function duration(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1_000, 's'],
  ];
  const parts: string[] = [];
  let left = ms;
  for (const [size, unit] of units) {
    if (left >= size) {
      parts.push(`${Math.floor(left / size)} ${unit}`);
      left %= size;
    }
  }
  return parts.length > 0 ? parts.join(' ') : `${ms} ms`;
}

/** What a control action's form carries: values it posts as they are, and fields the reader fills in. */
interface FormParts {
  hidden?: Record<string, string> | undefined;
  fields?: Html[] | undefined;
  /** Fields stacked the width of the page (a long form), instead of side by side on one line. */
  stacked?: boolean | undefined;
}

/** A form posting one control action on the chosen tenant; `returnTo` is where the browser goes back to (on the same tenant). */
export function actionForm(
  context: DashboardContext,
  action: string,
  returnTo: string,
  parts: FormParts,
  button: string | Html = action === 'advance' ? 'Advance' : action,
  style = '',
): Html {
  const hidden = { ...(context.tenant === undefined ? {} : { [TENANT_PARAM]: context.tenant }), ...parts.hidden };
  const inputs = [
    ...Object.entries(hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`),
    ...(parts.fields ?? []).map((field) => html`<div>${field}</div>`),
  ];
  return html`<form class="${parts.stacked ? 'stacked' : 'inline'}" method="post" action="/_dashboard/actions/${action}">
<input type="hidden" name="token" value="${context.formToken}">${returnTo && html`<input type="hidden" name="returnTo" value="${href(context, returnTo)}">`}
${inputs.map((input, index) => (index === 0 ? input : html`\n${input}`))}
<button type="submit"${style && html` class="${style}"`}>${button}</button>
</form>`;
}

/**
 * A table column: its heading, or its heading and classes: `id` and `nowrap` cells are never
 * broken across lines, `extra` columns are left out on narrow screens.
 */
export type Column = string | [heading: string, classes: string];

/** A table cell: text (escaped) or HTML. */
export type Cell = string | Html;

export function table(caption: string, columns: Column[], rows: Cell[][], empty: string): Html {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  const headings = columns.map((column) => (typeof column === 'string' ? column : column[0]));
  const classes = columns.map((column) => typeof column !== 'string' && html` class="${column[1]}"`);
  // The section's heading names the table for the eye; the caption names it for a screen reader.
  return html`<div class="scroll" tabindex="0" role="region" aria-label="${caption}"><table><caption class="visually-hidden">${caption}</caption><thead><tr>${headings.map(
    (heading, index) => html`<th scope="col"${classes[index]}>${heading}</th>`,
  )}</tr></thead><tbody>${rows.map((cells) => html`<tr>${cells.map((cell, index) => html`<td${classes[index]}>${cell}</td>`)}</tr>`)}</tbody></table></div>`;
}

/** A listing's paging links: back to its first page, on to the next, and how many in all. */
export function pager(page: { cursor: string | null; hasMore: boolean; total: number }, path: string, query: URLSearchParams): Html {
  const first = new URLSearchParams(query);
  first.delete('cursor');
  const next = new URLSearchParams(query);
  if (page.cursor) next.set('cursor', page.cursor);
  return html`<p class="pager">${query.has('cursor') && link(`${path}?${first}`, 'First page')}${
    page.hasMore && page.cursor && link(`${path}?${next}`, 'Next page')
  }<span class="muted">${page.total} in all</span></p>`;
}
