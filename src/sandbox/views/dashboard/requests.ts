/**
 * The dashboard's request log: the Requests page of an environment (filters, paging, live like the
 * other lists), an entry's page (both bodies pretty-printed, the records and the fault rule linked),
 * and the requests section of a record's page (those that made or touched it).
 */
import type { Environment } from '../../../core/options.js';
import { API_ROUTES } from '../../api/routes.js';
import type { RequestLogEntry, RequestLogQuery } from '../../request-log/schema.js';
import { type Html, html } from '../html.js';
import { base, type Cell, type Column, type DashboardContext, href, link, type PageParts, pager, TENANT_PARAM, table } from './parts.js';

/** `/{environment}/requests` and `/{environment}/requests/{id}`. */
export const REQUESTS_PATH = /^\/(test|live)\/requests(?:\/([^/]+))?$/;

const FILTER_FIELDS = ['operation', 'method', 'status', 'idempotencyKey', 'reference', 'traceId'] as const;

const COLUMNS: Column[] = [
  ['When', 'id'],
  ['Call', 'nowrap'],
  'Status',
  ['Took', 'nowrap extra'],
  ['Idempotency-Key', 'extra'],
  ['Fault rule', 'nowrap extra'],
];

/** A status with its tone: a success, a refusal or failure, or no answer at all (a reset). */
function statusBadge(code: number): Html {
  const tone = code >= 200 && code < 300 ? 'ok' : code >= 300 && code < 400 ? 'wait' : 'bad';
  return html`<span class="status ${tone}">${code === 0 ? 'no answer' : String(code)}</span>`;
}

function entryHref(context: DashboardContext, environment: Environment, entry: RequestLogEntry): string {
  return href(context, `${base(environment)}/requests/${encodeURIComponent(entry.id)}`);
}

function when(entry: RequestLogEntry): string {
  return `${entry.at.slice(0, 19).replace('T', ' ')} UTC`;
}

function rows(context: DashboardContext, environment: Environment, entries: RequestLogEntry[]): Cell[][] {
  return entries.map((entry) => [
    // The entry's number too: links of the same text to different pages cannot be told apart by ear.
    link(entryHref(context, environment, entry), `${when(entry)} #${entry.id.slice(entry.id.lastIndexOf('-') + 1)}`),
    html`<code>${entry.route ?? `${entry.method} ${entry.path}`}</code>${entry.replayed && html` <span class="muted">(replayed)</span>`}`,
    statusBadge(entry.status),
    `${Math.round(entry.durationMs)} ms`,
    entry.idempotencyKey ?? '',
    entry.faultRule ?? '',
  ]);
}

function select(id: string, name: string, label: string, values: readonly string[], chosen: string | null): Html {
  const options = ['', ...values].map(
    (value) => html`<option value="${value}"${chosen === value && html` selected`}>${value === '' ? 'any' : value}</option>`,
  );
  return html`<div><label for="${id}">${label}</label><select id="${id}" name="${name}">${options}</select></div>`;
}

function input(id: string, name: string, label: string, value: string | null, placeholder = ''): Html {
  return html`<div><label for="${id}">${label}</label><input id="${id}" name="${name}" value="${value ?? ''}" size="14"${placeholder && html` placeholder="${placeholder}"`}></div>`;
}

function filterForm(context: DashboardContext, environment: Environment, query: URLSearchParams): Html {
  const operations = API_ROUTES.map((route) => route.operationId);
  return html`<form class="inline" method="get" action="${base(environment)}/requests" aria-label="Filter">${context.tenant !== undefined && html`<input type="hidden" name="${TENANT_PARAM}" value="${context.tenant}">`}
${select('filter-operation', 'operation', 'Operation', operations, query.get('operation'))}
${select('filter-method', 'method', 'Method', ['GET', 'POST'], query.get('method'))}
${input('filter-status', 'status', 'Status', query.get('status'), '4xx')}
${input('filter-key', 'idempotencyKey', 'Idempotency-Key', query.get('idempotencyKey'))}
${input('filter-reference', 'reference', 'Record', query.get('reference'), 'session id, reference')}
${input('filter-trace', 'traceId', 'Trace id', query.get('traceId'))}
<button type="submit" class="secondary">Apply</button>
</form>`;
}

/** The listing's query from the page's: the filters given, 25 a page. */
function queryOf(query: URLSearchParams): RequestLogQuery {
  const wanted: RequestLogQuery = { take: 25 };
  for (const name of FILTER_FIELDS) {
    const value = query.get(name);
    if (value) wanted[name] = value;
  }
  const cursor = query.get('cursor');
  if (cursor) wanted.cursor = cursor;
  return wanted;
}

/** The Requests page; a filter of the wrong form throws the 400 failure naming it. */
export function requestsPage(context: DashboardContext, environment: Environment, query: URLSearchParams): PageParts {
  const page = context.requests.list(environment, queryOf(query));
  const name = environment === 'test' ? 'Test' : 'Live';
  const size = context.requests.size;
  return {
    title: 'Requests',
    environment,
    current: 'requests',
    body: html`<h1>Requests</h1>
<p>What each request to the ${name} API with ${context.webcode}'s keys sent and got back, newest first, refused ones too${
      size > 0
        ? html` (the last ${size.toLocaleString('en')})`
        : html`: <strong>the log is off</strong> (<code>--request-log-size 0</code>)`
    }.</p>
${filterForm(context, environment, query)}
${table(`Requests, ${name}`, COLUMNS, rows(context, environment, page.items), 'No request matches.')}
${pager(page, `${base(environment)}/requests`, query)}`,
  };
}

/** A body as JSON laid out with indents when it is JSON, as received otherwise. */
function pretty(text: string | null): Html {
  if (text === null) return html`<p class="muted">No body.</p>`;
  let shown = text;
  try {
    shown = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // not JSON (or cut): shown as received
  }
  return html`<pre>${shown}</pre>`;
}

function recordLinks(context: DashboardContext, environment: Environment, entry: RequestLogEntry): Cell {
  const { sessionIds, paymentReferences, posPaymentIds, modificationReferences } = entry.references;
  const to = (kind: string, id: string) => link(href(context, `${base(environment)}/${kind}/${encodeURIComponent(id)}`), id);
  const links = [
    ...sessionIds.map((id) => to('sessions', id)),
    ...paymentReferences.map((reference) => {
      const owner = context.control.paymentOwner(environment, reference);
      return owner ? to(owner.kind === 'session' ? 'sessions' : 'pos-payments', owner.id) : html`${reference}`;
    }),
    ...posPaymentIds.map((id) => to('pos-payments', id)),
    ...modificationReferences.map((reference) => to('modifications', reference)),
  ];
  if (links.length === 0) return html`<span class="muted">none</span>`;
  return html`<ul>${links.map((item) => html`<li>${item}</li>`)}</ul>`;
}

function fields(entries: [string, Cell][]): Html {
  return html`<dl>${entries.map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}</dl>`;
}

/** One entry: what was sent, what was answered, why it was refused. */
export function requestPage(context: DashboardContext, environment: Environment, entry: RequestLogEntry): PageParts {
  const headers = Object.entries(entry.requestHeaders).map(([name, value]): Cell[] => [name, value]);
  const query = Object.entries(entry.query).map(([name, value]): Cell[] => [name, Array.isArray(value) ? value.join(', ') : value]);
  const issues =
    entry.issues.length > 0 &&
    html`<h2>Why it was refused</h2><ul>${entry.issues.map(
      (issue) =>
        html`<li>${issue.path === '' ? html`<span class="muted">the request</span>` : html`<code>${issue.path}</code>`}: ${issue.message}</li>`,
    )}</ul>`;
  const cut = (truncated: boolean) => truncated && html`<p class="muted">Cut at 64 KB: the rest was not kept.</p>`;
  return {
    title: `Request ${entry.id}`,
    environment,
    current: 'requests',
    body: html`<h1>${entry.method} ${entry.path}</h1>
${fields([
  ['Entry', entry.id],
  ['When', when(entry)],
  ['Status', statusBadge(entry.status)],
  ['Route', entry.route ?? html`<span class="muted">no endpoint</span>`],
  ['Operation', entry.operation ?? ''],
  ['Tenant', entry.tenant ?? html`<span class="muted">none: the key and the webcode name no tenant</span>`],
  ['Took', `${entry.durationMs} ms`],
  ['Idempotency-Key', entry.idempotencyKey === null ? '' : `${entry.idempotencyKey}${entry.replayed ? ' (replayed)' : ''}`],
  ['Trace id', entry.traceId ?? ''],
  ['Fault rule', entry.faultRule === null ? '' : link(href(context, `/faults#rule-${entry.faultRule}`), entry.faultRule)],
  ['Records', recordLinks(context, environment, entry)],
])}
${issues}
<h2>Request</h2>
${query.length > 0 && table('Query parameters', ['Name', 'Value'], query, '')}
${table('Request headers', [['Header', 'nowrap'], 'Value'], headers, 'No header.')}
<h3>Body</h3>${pretty(entry.requestBody)}${cut(entry.requestBodyTruncated)}
<h2>Response</h2>
<h3>Body</h3>${pretty(entry.responseBody)}${cut(entry.responseBodyTruncated)}
<p>${link(href(context, `${base(environment)}/requests`), 'All requests')}</p>`,
  };
}

/** A record page's section: the requests that made or touched the record (by any of `references`). */
export function requestsSection(context: DashboardContext, environment: Environment, references: readonly string[]): Html {
  const entries = context.requests.touching(environment, references);
  return html`<h2>Requests</h2>${table('Requests that made or touched this record, newest first', COLUMNS, rows(context, environment, entries), 'No request in the log names this record.')}`;
}
