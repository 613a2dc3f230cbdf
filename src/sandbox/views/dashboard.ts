/**
 * The sandbox's dashboard, served at `/` on the sandbox's own address: server-rendered pages of
 * the records of each environment with filters and paging, a record page with its timeline, forms
 * for the control actions, the clock, and the test-mode tables. Every page reads and every action
 * works without JavaScript; a small nonce'd script refreshes the page's live region when the
 * state changes (Server-Sent Events at `/_dashboard/events`). No asset comes from anywhere else.
 */
import type { Environment } from '../../core/options.js';
import { POS_TEST_ENDINGS, TEST_CARDHOLDER_NAMES, TEST_CARDS, TEST_SUCCESS_CARDHOLDER, TEST_TERMINALS } from '../../testing/index.js';
import { type ControlListParams, type ControlPage, parseDuration, type RecordTimeline, type SandboxControl } from '../control/control.js';
import { dashboardGate, returnPath } from '../http/access.js';
import { readText } from '../http/body.js';
import type { DeliveryAttempt, ModificationRecord, PosRecord, SessionRecord, WebhookDelivery } from '../records.js';
import { ServiceFailure } from '../responses.js';
import { deliveryStatus } from '../store.js';
import { type Html, html, raw } from './html.js';
import { cspNonce, htmlResponse } from './response.js';

/** What the dashboard needs from the sandbox. */
export interface DashboardContext {
  control: SandboxControl;
  /** A secret of this process, put in every form: a page elsewhere cannot post actions here. */
  formToken: string;
  /** When set, every dashboard request needs it (`?token=` once, then the cookie). */
  accessToken?: string | undefined;
  maxBodyBytes: number;
  webcode: string;
}

const KINDS = {
  sessions: { title: 'Sessions', statuses: ['pending', 'completed', 'failed', 'expired', 'cancelled'] },
  'pos-payments': { title: 'POS payments', statuses: ['pending', 'success', 'failed', 'timeout'] },
  modifications: { title: 'Modifications', statuses: ['pending', 'received', 'success', 'failed'] },
  deliveries: { title: 'Webhook deliveries', statuses: ['pending', 'delivered', 'abandoned'] },
} as const;
type Kind = keyof typeof KINDS;

/** Asks for the live region's content alone: parsing a whole page would meet its other nonce. */
const LIVE_HEADER = 'x-dashboard-live';

/** Where the live view listens. */
export const DASHBOARD_EVENTS_PATH = '/_dashboard/events';
const ACTION_PATH = /^\/_dashboard\/actions\/([a-z-]+)$/;

const STYLE = `:root{--ink:#1b1d21;--muted:#555b66;--line:#d5d8de;--accent:#1a56db;--test:#fff4ce;--test-line:#b38600;--live:#fde2e1;--live-line:#b42318}
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,sans-serif;color:var(--ink);background:#f6f7f9}
a{color:var(--accent)}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
header{background:#fff;border-bottom:1px solid var(--line);padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}
header .brand{font-weight:700;color:var(--ink);text-decoration:none}nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem .9rem}
nav a[aria-current=page]{font-weight:700;color:var(--ink)}
.env{padding:.45rem 1rem;font-weight:600;border-bottom:2px solid}.env.test{background:var(--test);border-color:var(--test-line)}.env.live{background:var(--live);border-color:var(--live-line)}
.env a{margin-left:1rem}main{padding:1rem;max-width:72rem;margin:0 auto}h1{font-size:1.4rem;margin:.5rem 0 1rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid var(--line)}caption{text-align:left;font-weight:600;padding:.4rem 0}
th,td{text-align:left;padding:.4rem .55rem;border-bottom:1px solid var(--line);vertical-align:top}th{background:#eef0f3}
.scroll{overflow-x:auto}form.inline{display:inline-flex;flex-wrap:wrap;gap:.4rem;align-items:end;margin:.25rem .75rem .25rem 0;max-width:100%}form.inline>div{max-width:100%}
label{font-weight:600;display:block;font-size:.9rem}input,select{max-width:100%;font:inherit;padding:.35rem .45rem;border:1px solid #8a8f98;border-radius:.3rem;background:#fff}
button{font:inherit;padding:.4rem .85rem;border-radius:.3rem;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.secondary{background:#fff;color:var(--accent)}button.danger{background:#b42318;border-color:#b42318}
.panel{background:#fff;border:1px solid var(--line);border-radius:.4rem;padding:.75rem 1rem;margin:.75rem 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}dt{font-weight:600;color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
pre{background:#f0f2f5;padding:.5rem;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere;margin:.25rem 0;font-size:.85rem}
.notice{background:#e7f5ec;border:1px solid #1f7a45;padding:.5rem .75rem;border-radius:.3rem}.problem{background:#fdecea;border:1px solid #b42318;padding:.5rem .75rem;border-radius:.3rem}
.status{display:inline-block;padding:0 .4rem;border-radius:.25rem;border:1px solid #6b7280;background:#eef0f3;color:#3d434d;font-size:.85rem;font-weight:600;white-space:nowrap}
.status.ok{background:#dcf3e4;color:#14532d;border-color:#1f7a45}.status.bad{background:#fde2e1;color:#8f1d14;border-color:#b42318}
.status.wait{background:#dbeafe;color:#1e3a8a;border-color:#1a56db}.status.late{background:#ffe4c7;color:#7c2d12;border-color:#c2410c}
td.id,td.nowrap{white-space:nowrap}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.75rem}.muted{color:var(--muted)}
ol.timeline{padding-left:1.2rem}ol.timeline li{margin:.3rem 0}.pager{display:flex;gap:1rem;margin:.75rem 0}
.clock summary{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:baseline;cursor:pointer;list-style:none}.clock summary::-webkit-details-marker{display:none}
.clock summary::before{content:'▸';color:var(--muted)}.clock[open] summary::before{content:'▾'}.clock h2{margin:0;font-size:1rem}
.clock .advance{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;align-items:end;margin-top:.5rem}.clock p{margin:0}.clock form.inline{margin:0}
@media (max-width:40rem){.extra{display:none}table{font-size:.875rem}th,td{padding:.35rem .4rem}.clock{padding:.5rem .75rem}}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}`;

/**
 * Folds the clock away on a narrow screen, where it would take a quarter of the first view: it runs
 * as the page is read, before it is shown. Without JavaScript the clock stays open.
 */
const CLOCK_SCRIPT = `if (matchMedia('(max-width: 40rem)').matches) document.getElementById('clock').open = false;`;

/**
 * Refreshes the live region from the server when the state changes, unless the reader is in a form
 * (a refresh must not take away what they are typing or where their focus is).
 */
const LIVE_SCRIPT = `(() => {
  const region = document.getElementById('live');
  const announce = document.getElementById('live-status');
  if (!region || !window.EventSource) return;
  let busy = false;
  const refresh = async () => {
    if (busy || region.contains(document.activeElement) && document.activeElement.closest('form')) return;
    busy = true;
    try {
      const response = await fetch(location.href, { headers: { '${LIVE_HEADER}': '1' } });
      const html = await response.text();
      if (response.ok && html !== region.innerHTML) { region.innerHTML = html; announce.textContent = 'Updated ' + new Date().toLocaleTimeString(); }
    } finally { busy = false; }
  };
  new EventSource('${DASHBOARD_EVENTS_PATH}').addEventListener('change', refresh);
})();`;

function money(amount: { value: number; currency: string } | null | undefined): string {
  return amount ? `${(amount.value / 100).toFixed(2)} ${amount.currency}` : '';
}

function time(epochMs: number | null | undefined): string {
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

function status(value: string): Html {
  const tone = TONES[value];
  return html`<span class="status${tone && ` ${tone}`}">${value}</span>`;
}

function link(href: string, text: string): Html {
  return html`<a href="${href}">${text}</a>`;
}

const base = (environment: Environment) => `/${environment}`;

interface PageParts {
  title: string;
  environment: Environment | undefined;
  /** The nav entry of this page. */
  current: Kind | 'overview' | 'reference';
  body: Html;
  notice?: string | undefined;
  problem?: string | undefined;
  /** This page's path and query, where the clock's Advance comes back to (default `/`). */
  here?: string | undefined;
}

function layout(context: DashboardContext, parts: PageParts, nonce: string): Html {
  const environment = parts.environment ?? 'test';
  const clock = context.control.clock();
  const navItem = (href: string, label: string, key: PageParts['current']) =>
    html`<li><a href="${href}"${parts.current === key && html` aria-current="page"`}>${label}</a></li>`;
  const other = environment === 'test' ? 'live' : 'test';
  const envBar =
    parts.environment !== undefined &&
    html`<div class="env ${environment}" role="region" aria-label="Environment">${environment === 'test' ? 'Test' : 'Live'} data of webcode ${context.webcode}${link(
      other === 'test' ? '/' : '/live',
      `Switch to ${other === 'test' ? 'Test' : 'Live'}`,
    )}</div>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${parts.title} · ${parts.environment === 'live' ? 'Live' : parts.environment === 'test' ? 'Test' : 'Sandbox'} · payment sandbox</title>
<style nonce="${nonce}">${raw(STYLE)}</style>
</head>
<body>
<header>
<a class="brand" href="/">Payment sandbox</a>
<nav aria-label="Sections"><ul>
${navItem(environment === 'test' ? '/' : '/live', 'Overview', 'overview')}
${navItem(`${base(environment)}/sessions`, 'Sessions', 'sessions')}
${navItem(`${base(environment)}/pos-payments`, 'POS payments', 'pos-payments')}
${navItem(`${base(environment)}/modifications`, 'Modifications', 'modifications')}
${navItem(`${base(environment)}/deliveries`, 'Webhook deliveries', 'deliveries')}
${navItem('/reference', 'Test-mode reference', 'reference')}
</ul></nav>
</header>
${envBar}
<main>
<details class="panel clock" id="clock" open>
<summary><h2 id="clock-title">Sandbox clock</h2><span>${time(clock.epochMs)}${clock.offsetMs > 0 && html` <span class="muted">(${duration(clock.offsetMs)} ahead of real time)</span>`}</span></summary>
<div class="advance">
${actionForm(context, 'advance', parts.here ?? '/', {
  fields: [
    html`<label for="advance-by">Advance by</label><input id="advance-by" name="duration" value="5m" size="8" aria-describedby="advance-help">`,
  ],
})}
<p id="advance-help" class="muted">90s, 5m, 1h30m or PT5M: expiry, POS answers, refunds and webhook retries happen as if that time had passed.</p>
</div>
</details>
<script nonce="${nonce}">${raw(CLOCK_SCRIPT)}</script>
${parts.notice && html`<p class="notice" role="status">${parts.notice}</p>`}
${parts.problem && html`<p class="problem" role="alert">${parts.problem}</p>`}
<p id="live-status" class="visually-hidden" aria-live="polite"></p>
<div id="live">
${parts.body}
</div>
</main>
<script nonce="${nonce}">${raw(LIVE_SCRIPT)}</script>
</body>
</html>`;
}

function duration(ms: number): string {
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
}

/** A form posting one control action; `returnTo` is where the browser goes back to. */
function actionForm(
  context: DashboardContext,
  action: string,
  returnTo: string,
  parts: FormParts,
  button = action === 'advance' ? 'Advance' : action,
  style = '',
): Html {
  const inputs = [
    ...Object.entries(parts.hidden ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`),
    ...(parts.fields ?? []).map((field) => html`<div>${field}</div>`),
  ];
  return html`<form class="inline" method="post" action="/_dashboard/actions/${action}">
<input type="hidden" name="token" value="${context.formToken}">${returnTo && html`<input type="hidden" name="returnTo" value="${returnTo}">`}
${inputs.map((input, index) => (index === 0 ? input : html`\n${input}`))}
<button type="submit"${style && html` class="${style}"`}>${button}</button>
</form>`;
}

// Lists

function options(values: readonly string[], selected: string | undefined): Html[] {
  return values.map(
    (value) => html`<option value="${value}"${selected === value && html` selected`}>${value === '' ? 'any' : value}</option>`,
  );
}

function filterForm(kind: Kind, environment: Environment, params: ControlListParams & { type?: string | undefined }): Html {
  const typeSelect =
    kind === 'modifications' &&
    html`<div><label for="filter-type">Type</label><select id="filter-type" name="type">${options(['', 'refund', 'capture', 'cancel', 'extend'], params.type)}</select></div>`;
  return html`<form class="inline" method="get" action="${base(environment)}/${kind}" aria-label="Filter">
<div><label for="filter-status">Status</label><select id="filter-status" name="status">${options(['', ...KINDS[kind].statuses], params.status)}</select></div>
${typeSelect}<div><label for="filter-order">Order</label><select id="filter-order" name="order"><option value="desc"${params.order !== 'asc' && html` selected`}>newest first</option><option value="asc"${params.order === 'asc' && html` selected`}>oldest first</option></select></div>
<button type="submit" class="secondary">Apply</button>
</form>`;
}

function pager<R>(page: ControlPage<R>, path: string, query: URLSearchParams): Html {
  const first = new URLSearchParams(query);
  first.delete('cursor');
  const next = new URLSearchParams(query);
  if (page.cursor) next.set('cursor', page.cursor);
  return html`<p class="pager">${query.has('cursor') && link(`${path}?${first}`, 'First page')}${
    page.hasMore && page.cursor && link(`${path}?${next}`, 'Next page')
  }<span class="muted">${page.total} in all</span></p>`;
}

/**
 * A table column: its heading, or its heading and classes: `id` and `nowrap` cells are never
 * broken across lines, `extra` columns are left out on narrow screens.
 */
type Column = string | [heading: string, classes: string];

/** A table cell: text (escaped) or HTML. */
type Cell = string | Html;

function table(caption: string, columns: Column[], rows: Cell[][], empty: string): Html {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  const headings = columns.map((column) => (typeof column === 'string' ? column : column[0]));
  const classes = columns.map((column) => typeof column !== 'string' && html` class="${column[1]}"`);
  // The section's heading names the table for the eye; the caption names it for a screen reader.
  return html`<div class="scroll" tabindex="0" role="region" aria-label="${caption}"><table><caption class="visually-hidden">${caption}</caption><thead><tr>${headings.map(
    (heading, index) => html`<th scope="col"${classes[index]}>${heading}</th>`,
  )}</tr></thead><tbody>${rows.map((cells) => html`<tr>${cells.map((cell, index) => html`<td${classes[index]}>${cell}</td>`)}</tr>`)}</tbody></table></div>`;
}

function sessionRows(environment: Environment, sessions: SessionRecord[]): Cell[][] {
  return sessions.map((session) => [
    link(`${base(environment)}/sessions/${encodeURIComponent(session.sessionId)}`, session.sessionId),
    status(session.status),
    money(session.amount),
    session.customReference ?? '',
    session.paymentReference ?? '',
    time(session.createdAt),
  ]);
}

function posRows(environment: Environment, payments: PosRecord[]): Cell[][] {
  return payments.map((payment) => [
    link(`${base(environment)}/pos-payments/${encodeURIComponent(payment.posPaymentId)}`, payment.posPaymentId),
    status(payment.status),
    money(payment.amount),
    payment.poiId,
    payment.customReference ?? '',
    time(payment.createdAt),
  ]);
}

function modificationRows(environment: Environment, records: ModificationRecord[]): Cell[][] {
  return records.map((record) => [
    link(`${base(environment)}/modifications/${encodeURIComponent(record.operationReference)}`, record.operationReference),
    record.operationType,
    status(record.status),
    money(record.amount),
    record.paymentReference,
    time(record.createdAt),
  ]);
}

function lastAnswer(delivery: WebhookDelivery): string {
  const last = delivery.attempts.at(-1);
  if (!last) return 'not attempted yet';
  return last.status === null ? `no answer: ${last.error ?? ''}` : `HTTP ${last.status}`;
}

function deliveryRows(environment: Environment, deliveries: WebhookDelivery[]): Cell[][] {
  return deliveries.map((delivery) => [
    link(`${base(environment)}/deliveries/${delivery.id}`, `#${delivery.id}`),
    delivery.event.event_code,
    String(delivery.event.data.paymentReference ?? ''),
    status(deliveryStatus(delivery)),
    `${delivery.attempts.length} (${lastAnswer(delivery)})`,
    delivery.url,
    time(delivery.createdAt),
  ]);
}

/** The columns of each list: on a narrow screen, the record's id, its status and its amount or event. */
const HEADINGS: Record<Kind, Column[]> = {
  sessions: [
    ['Session', 'id'],
    'Status',
    ['Amount', 'nowrap'],
    ['Custom reference', 'extra'],
    ['Payment reference', 'id extra'],
    ['Created', 'extra'],
  ],
  'pos-payments': [
    ['POS payment', 'id'],
    'Status',
    ['Amount', 'nowrap'],
    ['Terminal', 'extra'],
    ['Custom reference', 'extra'],
    ['Created', 'extra'],
  ],
  modifications: [['Reference', 'id'], 'Type', 'Status', ['Amount', 'nowrap'], ['Payment', 'id extra'], ['Created', 'extra']],
  deliveries: [
    ['Delivery', 'id'],
    'Event',
    ['Payment', 'id'],
    'Status',
    ['Attempts (last answer)', 'extra'],
    ['URL', 'extra'],
    ['Created', 'extra'],
  ],
};

function listPage(context: DashboardContext, kind: Kind, environment: Environment, query: URLSearchParams): PageParts {
  const params: ControlListParams & { type?: string | undefined } = {
    status: query.get('status') || undefined,
    type: query.get('type') || undefined,
    cursor: query.get('cursor') || undefined,
    order: query.get('order') === 'asc' ? 'asc' : 'desc',
    take: 25,
  };
  const { control } = context;
  let rows: Cell[][];
  let page: ControlPage<unknown>;
  if (kind === 'sessions') {
    const found = control.listSessions(environment, params);
    [page, rows] = [found, sessionRows(environment, found.items)];
  } else if (kind === 'pos-payments') {
    const found = control.listPosPayments(environment, params);
    [page, rows] = [found, posRows(environment, found.items)];
  } else if (kind === 'modifications') {
    const found = control.listModifications(environment, params);
    [page, rows] = [found, modificationRows(environment, found.items)];
  } else {
    const found = control.listDeliveries(environment, params);
    [page, rows] = [found, deliveryRows(environment, found.items)];
  }
  const title = KINDS[kind].title;
  return {
    title,
    environment,
    current: kind,
    body: html`<h1>${title}</h1>
${filterForm(kind, environment, params)}
${table(`${title}, ${environment === 'test' ? 'Test' : 'Live'}`, HEADINGS[kind], rows, `No ${title.toLowerCase()} match.`)}
${pager(page, `${base(environment)}/${kind}`, query)}`,
  };
}

function overview(context: DashboardContext, environment: Environment): PageParts {
  const { control } = context;
  const counts = control.counts(environment);
  const recent = { take: 5, order: 'desc' as const };
  const card = (kind: Kind, count: number) =>
    html`<div class="panel"><h2>${link(`${base(environment)}/${kind}`, KINDS[kind].title)}</h2><p>${count} in all</p></div>`;
  const urls =
    control.webhookUrls.length === 0
      ? html`<p class="muted">None: webhooks are recorded but not sent. Add one with <code>--webhook-url</code>, or below.</p>`
      : html`<ul>${control.webhookUrls.map(
          (url) => html`<li>${url} ${actionForm(context, 'remove-webhook-url', '/', { hidden: { url } }, 'Remove', 'secondary')}</li>`,
        )}</ul>`;
  return {
    title: 'Overview',
    environment,
    current: 'overview',
    body: html`<h1>${environment === 'test' ? 'Test' : 'Live'} overview</h1>
<div class="grid">${card('sessions', counts.sessions)}${card('pos-payments', counts.posPayments)}${card('modifications', counts.modifications)}${card('deliveries', counts.deliveries)}</div>
<h2>Latest sessions</h2>
${table('Latest sessions', HEADINGS.sessions, sessionRows(environment, control.listSessions(environment, recent).items), 'No session yet: create one with the SDK or the API.')}
<h2>Latest POS payments</h2>
${table('Latest POS payments', HEADINGS['pos-payments'], posRows(environment, control.listPosPayments(environment, recent).items), 'No POS payment yet.')}
<h2>Latest webhook deliveries</h2>
${table('Latest webhook deliveries', HEADINGS.deliveries, deliveryRows(environment, control.listDeliveries(environment, recent).items), 'No webhook delivery yet.')}
<h2>Webhook URLs</h2>
${urls}
${actionForm(
  context,
  'add-webhook-url',
  environment === 'test' ? '/' : '/live',
  {
    fields: [
      html`<label for="webhook-url">Webhook URL</label><input id="webhook-url" name="url" type="url" placeholder="http://127.0.0.1:3000/webhooks" size="36" required>`,
    ],
  },
  'Add webhook URL',
  'secondary',
)}
<h2>Start over</h2>
${actionForm(context, 'reset', '/', { fields: [html`<p class="muted">Deletes every record of both environments and sets the clock back.</p>`] }, 'Reset all data', 'danger')}`,
  };
}

// Record pages

function fields(entries: [string, Cell][]): Html {
  return html`<dl>${entries.map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}</dl>`;
}

function attemptLine(attempt: DeliveryAttempt): string {
  const answer = attempt.status === null ? `no answer (${attempt.error ?? 'unknown error'})` : `HTTP ${attempt.status}`;
  return `${answer} in ${attempt.durationMs} ms`;
}

function deliveriesSection(environment: Environment, deliveries: WebhookDelivery[]): Html {
  return html`<h2>Webhooks sent</h2>${table('Webhooks about this record', HEADINGS.deliveries, deliveryRows(environment, deliveries), 'No webhook about this record.')}`;
}

/** A timeline entry: when (`null`: not recorded, listed last) and what. */
type TimelineEntry = [at: number | null, what: Cell];

function timelineList(items: TimelineEntry[]): Html {
  return html`<ol class="timeline">${items
    .sort((a, b) => (a[0] ?? Number.POSITIVE_INFINITY) - (b[0] ?? Number.POSITIVE_INFINITY))
    .map(
      ([at, text]) =>
        html`<li>${at === null ? html`<span class="muted">time not recorded</span>` : html`<time>${time(at)}</time>`}: ${text}</li>`,
    )}</ol>`;
}

function deliveryEvents(environment: Environment, deliveries: WebhookDelivery[]): TimelineEntry[] {
  return deliveries.flatMap((delivery) =>
    delivery.attempts.map(
      (attempt): TimelineEntry => [
        attempt.at,
        html`webhook ${link(`${base(environment)}/deliveries/${delivery.id}`, `#${delivery.id}`)} ${delivery.event.event_code} to ${delivery.url}: ${attemptLine(attempt)}`,
      ],
    ),
  );
}

function modificationEvents(environment: Environment, records: ModificationRecord[]): TimelineEntry[] {
  return records.flatMap((record): TimelineEntry[] => [
    [
      record.createdAt,
      html`${record.operationType} ${link(`${base(environment)}/modifications/${encodeURIComponent(record.operationReference)}`, record.operationReference)} requested`,
    ],
    ...(record.resolvedAt === null
      ? []
      : [[record.resolvedAt, `${record.operationReference} resolved: ${record.status}`] as TimelineEntry]),
  ]);
}

function sessionActions(context: DashboardContext, environment: Environment, session: SessionRecord, here: string): Html {
  const target = { environment, id: session.sessionId };
  if (session.status === 'completed')
    return actionForm(
      context,
      'emit',
      here,
      { hidden: { environment, eventCode: 'AUTHORISATION', reference: session.sessionId } },
      'Send AUTHORISATION again',
      'secondary',
    );
  if (session.status !== 'pending') return html`<p class="muted">No action: the session is finished.</p>`;
  const holders = [TEST_SUCCESS_CARDHOLDER, ...Object.keys(TEST_CARDHOLDER_NAMES)].map(
    (name) =>
      html`<option value="${name}">${name === TEST_SUCCESS_CARDHOLDER ? `${name} (pays)` : `${name} (${TEST_CARDHOLDER_NAMES[name as keyof typeof TEST_CARDHOLDER_NAMES].description})`}</option>`,
  );
  return html`${actionForm(
    context,
    'pay',
    here,
    {
      hidden: target,
      fields: [html`<label for="holder">Cardholder name</label><select id="holder" name="holderName">${holders}</select>`],
    },
    'Pay',
  )}${actionForm(context, 'expire', here, { hidden: target }, 'Expire now', 'secondary')}`;
}

function sessionEvents(environment: Environment, timeline: RecordTimeline<SessionRecord>): TimelineEntry[] {
  const session = timeline.record;
  const payer = session.controlPayment;
  return [
    [session.createdAt, 'created'],
    ...(session.openedAt === null ? [] : [[session.openedAt, 'payment page opened'] as TimelineEntry]),
    // A control payment ends the session as it is made.
    ...(payer === null
      ? []
      : [
          [
            session.endedAt,
            `paid ${payer.from === 'dashboard' ? 'from the dashboard' : 'through the control API'} as ${payer.holderName}`,
          ] as TimelineEntry,
        ]),
    ...session.attempts.map(
      (attempt): TimelineEntry => [
        attempt.createdAt,
        `payment attempt ${attempt.paymentReference}: ${attempt.status}${attempt.reason ? ` (${attempt.reason})` : ''}`,
      ],
    ),
    ...(session.status === 'expired' || session.status === 'cancelled' || session.status === 'failed'
      ? [[session.endedAt, session.status] as TimelineEntry]
      : []),
    ...modificationEvents(environment, timeline.modifications),
    ...deliveryEvents(environment, timeline.deliveries),
  ];
}

function sessionPage(
  context: DashboardContext,
  environment: Environment,
  timeline: RecordTimeline<SessionRecord & { paymentUrl: string }>,
): PageParts {
  const session = timeline.record;
  const here = `${base(environment)}/sessions/${encodeURIComponent(session.sessionId)}`;
  return {
    title: `Session ${session.sessionId}`,
    environment,
    current: 'sessions',
    body: html`<h1>Session ${session.sessionId}</h1>
${fields([
  ['Status', status(session.status)],
  ['Amount', money(session.amount)],
  ['Payment reference', session.paymentReference ?? ''],
  ['Custom reference', session.customReference ?? ''],
  ['Description', session.description ?? ''],
  ['Pre-authorisation', session.isPreAuth ? 'yes' : 'no'],
  ['Payment page', session.status === 'pending' ? link(session.paymentUrl, 'Open the payment page') : 'closed'],
  ['urlOk', session.urlOk],
  ['urlKo', session.urlKo],
  ['Locale, country', `${session.shopperLocale}, ${session.countryCode}`],
])}
<h2>Actions</h2>${sessionActions(context, environment, session, here)}
<h2>Timeline</h2>${timelineList(sessionEvents(environment, timeline))}
<h2>Modifications</h2>${table('Modifications of this session', HEADINGS.modifications, modificationRows(environment, timeline.modifications), 'No modification.')}
${deliveriesSection(environment, timeline.deliveries)}`,
  };
}

function posPage(context: DashboardContext, environment: Environment, timeline: RecordTimeline<PosRecord>): PageParts {
  const payment = timeline.record;
  const here = `${base(environment)}/pos-payments/${encodeURIComponent(payment.posPaymentId)}`;
  const target = { environment, id: payment.posPaymentId };
  const actions =
    payment.status === 'pending' || payment.status === 'timeout'
      ? html`${actionForm(context, 'resolve', here, { hidden: { ...target, outcome: 'success' } }, 'Resolve as success')}${actionForm(
          context,
          'resolve',
          here,
          { hidden: { ...target, outcome: 'failed' } },
          'Resolve as failed',
          'secondary',
        )}`
      : actionForm(
          context,
          'emit',
          here,
          { hidden: { environment, eventCode: 'AUTHORISATION', reference: payment.posPaymentId } },
          'Send AUTHORISATION again',
          'secondary',
        );
  return {
    title: `POS payment ${payment.posPaymentId}`,
    environment,
    current: 'pos-payments',
    body: html`<h1>POS payment ${payment.posPaymentId}</h1>
${fields([
  ['Status', status(payment.status)],
  ['Amount', money(payment.amount)],
  ['Terminal', payment.poiId],
  ['PSP reference', payment.pspReference ?? ''],
  ['Message', payment.errorMessage ?? ''],
  ['Custom reference', payment.customReference ?? ''],
])}
<h2>Actions</h2>${actions}
<h2>Timeline</h2>${timelineList([
      [payment.createdAt, 'sent to the terminal'],
      ...modificationEvents(environment, timeline.modifications),
      ...deliveryEvents(environment, timeline.deliveries),
    ])}
<h2>Modifications</h2>${table('Modifications of this payment', HEADINGS.modifications, modificationRows(environment, timeline.modifications), 'No modification.')}
${deliveriesSection(environment, timeline.deliveries)}`,
  };
}

function ownerLink(context: DashboardContext, environment: Environment, paymentReference: string): Cell {
  const owner = context.control.paymentOwner(environment, paymentReference);
  if (!owner) return paymentReference;
  return link(
    `${base(environment)}/${owner.kind === 'session' ? 'sessions' : 'pos-payments'}/${encodeURIComponent(owner.id)}`,
    paymentReference,
  );
}

function modificationPage(context: DashboardContext, environment: Environment, timeline: RecordTimeline<ModificationRecord>): PageParts {
  const record = timeline.record;
  const here = `${base(environment)}/modifications/${encodeURIComponent(record.operationReference)}`;
  const actions =
    record.operationType === 'refund' && record.status === 'success'
      ? actionForm(
          context,
          'emit',
          here,
          { hidden: { environment, eventCode: 'REFUND', reference: record.operationReference } },
          'Send REFUND again',
          'secondary',
        )
      : html`<p class="muted">No action.</p>`;
  return {
    title: `Modification ${record.operationReference}`,
    environment,
    current: 'modifications',
    body: html`<h1>${record.operationType} ${record.operationReference}</h1>
${fields([
  ['Status', status(record.status)],
  ['Payment', ownerLink(context, environment, record.paymentReference)],
  ['Amount', money(record.amount)],
  ['Reason', record.reason ?? ''],
])}
<h2>Actions</h2>${actions}
<h2>Timeline</h2>${timelineList([...modificationEvents(environment, [record]), ...deliveryEvents(environment, timeline.deliveries)])}
${deliveriesSection(environment, timeline.deliveries)}`,
  };
}

function deliveryPage(context: DashboardContext, environment: Environment, delivery: WebhookDelivery): PageParts {
  const here = `${base(environment)}/deliveries/${delivery.id}`;
  const reference = delivery.event.data.paymentReference;
  const rows = delivery.attempts.map((attempt, index): Cell[] => [
    String(index + 1),
    time(attempt.at),
    attempt.status === null ? 'no answer' : `HTTP ${attempt.status}`,
    `${attempt.durationMs} ms`,
    attempt.error
      ? attempt.error
      : attempt.responseBody
        ? html`<pre>${attempt.responseBody}</pre>`
        : html`<span class="muted">empty</span>`,
  ]);
  return {
    title: `Webhook delivery #${delivery.id}`,
    environment,
    current: 'deliveries',
    body: html`<h1>Webhook delivery #${delivery.id}</h1>
${fields([
  ['Status', status(deliveryStatus(delivery))],
  ['Event', delivery.event.event_code],
  ['Payment', typeof reference === 'string' ? ownerLink(context, environment, reference) : ''],
  ['URL', delivery.url],
  ['Created', time(delivery.createdAt)],
  ...(delivery.resendOf
    ? [['Resends', link(`${base(environment)}/deliveries/${delivery.resendOf}`, `#${delivery.resendOf}`)] as [string, Cell]]
    : []),
])}
<h2>Actions</h2>${actionForm(context, 'resend', here, { hidden: { environment, id: String(delivery.id) } }, 'Resend', 'secondary')}
<h2>Attempts</h2>${table('Attempts, with the first 2 KB of each answer', ['#', 'At', 'Answer', 'Took', 'Body or error'], rows, 'No attempt yet.')}
<h2>Body sent</h2><pre>${JSON.stringify(delivery.event, null, 2)}</pre>`,
  };
}

function referencePage(): PageParts {
  const holders: Cell[][] = Object.entries(TEST_CARDHOLDER_NAMES).map(([name, outcome]) => [
    html`<code>${name}</code>`,
    outcome.result === 'error' ? 'processor error' : 'declined',
    outcome.description,
  ]);
  holders.push([html`any other name, for example <code>${TEST_SUCCESS_CARDHOLDER}</code>`, 'paid', 'authorised']);
  const terminals = TEST_TERMINALS.map((terminal) => [
    html`<code>${terminal.poiId}</code>`,
    terminal.name,
    terminal.model,
    terminal.online ? 'online' : 'offline: 502 / 13004',
  ]);
  const endings = [
    ['any other ending', '200, status success'],
    [`…${POS_TEST_ENDINGS.failed}`, '200, status failed (declined)'],
    [`…${POS_TEST_ENDINGS.timeout}`, '200, status timeout; completes later with a webhook'],
    [`…${POS_TEST_ENDINGS.busy}`, '409 / 13005, terminal busy'],
  ];
  const cards = Object.values(TEST_CARDS).map((card) => [
    card.brand,
    html`<code>${card.number}</code>`,
    card.cvc,
    `${card.expiryMonth}/${card.expiryYear}`,
  ]);
  return {
    title: 'Test-mode reference',
    environment: undefined,
    current: 'reference',
    body: html`<h1>Test-mode reference</h1>
<h2>Cardholder names on the payment page</h2>${table('Cardholder names and their outcomes', ['Name', 'Outcome', 'Meaning'], holders, '')}
<h2>Terminals</h2>${table('Test terminals', ['poiId', 'Name', 'Model', 'State'], terminals, '')}
<h2>POS amount endings</h2>${table('POS outcomes by the last two digits of the amount in cents', ['Amount ends in', 'Answer'], endings, '')}
<h2>Test cards</h2>${table('Luhn-valid test cards', ['Brand', 'Number', 'CVC', 'Expiry'], cards, '')}`,
  };
}

// Serving

function render(context: DashboardContext, parts: PageParts, status = 200, liveOnly = false): Response {
  const nonce = cspNonce();
  return htmlResponse(status, liveOnly ? html`\n${parts.body}\n` : layout(context, parts, nonce), undefined, { nonce });
}

function notFoundPage(context: DashboardContext, what: string): Response {
  return render(
    context,
    {
      title: 'Not found',
      environment: undefined,
      current: 'overview',
      body: html`<h1>Not found</h1><p>${what}</p><p>${link('/', 'Back to the overview')}</p>`,
    },
    404,
  );
}

const RECORD_PATH = /^\/(test|live)\/(sessions|pos-payments|modifications|deliveries)(?:\/([^/]+))?$/;

function decoded(param: string): string | undefined {
  try {
    return decodeURIComponent(param);
  } catch {
    return undefined;
  }
}

/** Serves the dashboard's pages, its live stream and its form actions; `undefined` for any other path. */
export async function handleDashboard(request: Request, url: URL, context: DashboardContext): Promise<Response | undefined> {
  const path = url.pathname;
  const action = ACTION_PATH.exec(path);
  const isPage = path === '/' || path === '/live' || path === '/reference' || RECORD_PATH.test(path);
  if (!isPage && !action && path !== DASHBOARD_EVENTS_PATH) return undefined;
  const denied = context.accessToken === undefined ? undefined : dashboardGate(request, url, context.accessToken);
  if (denied) return denied;
  if (path === DASHBOARD_EVENTS_PATH) return request.method === 'GET' ? events(context, request) : methodNotAllowed('GET');
  if (action) return request.method === 'POST' ? act(context, request, url, action[1] ?? '') : methodNotAllowed('POST');
  if (request.method !== 'GET' && request.method !== 'HEAD') return methodNotAllowed('GET');
  const notice = url.searchParams.get('notice') ?? undefined;
  const problem = url.searchParams.get('problem') ?? undefined;
  const liveOnly = request.headers.get(LIVE_HEADER) === '1';
  const here = new URL(url);
  here.searchParams.delete('notice');
  here.searchParams.delete('problem');
  const show = (parts: PageParts, status = 200) =>
    render(context, { ...parts, notice, problem, here: `${here.pathname}${here.search}` }, status, liveOnly);
  if (path === '/' || path === '/live') return show(overview(context, path === '/' ? 'test' : 'live'));
  if (path === '/reference') return show(referencePage());
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

function methodNotAllowed(allow: string): Response {
  return new Response('Method not allowed', { status: 405, headers: { allow, 'content-type': 'text/plain; charset=utf-8' } });
}

function environmentOf(form: URLSearchParams): Environment {
  const value = form.get('environment');
  if (value !== 'test' && value !== 'live') throw new ServiceFailure(400, 12001, 'environment must be test or live');
  return value;
}

/** Runs a form action and sends the browser back with what happened (303, so a reload does not repeat it). */
async function act(context: DashboardContext, request: Request, url: URL, action: string): Promise<Response> {
  const form = new URLSearchParams(await readText(request, context.maxBodyBytes));
  // A page of another site cannot know the token: it cannot make a developer's browser act here.
  if (form.get('token') !== context.formToken)
    return new Response('Stale or foreign form: reload the dashboard and try again', {
      status: 403,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
  const returnTo = returnPath(form.get('returnTo'), url.origin);
  const back = (kind: 'notice' | 'problem', message: string) => {
    const target = new URL(returnTo);
    target.searchParams.delete('notice');
    target.searchParams.delete('problem');
    target.searchParams.set(kind, message);
    return new Response(null, { status: 303, headers: { location: `${target.pathname}${target.search}` } });
  };
  const { control } = context;
  try {
    const id = form.get('id') ?? '';
    switch (action) {
      case 'pay': {
        const session = await control.paySession(environmentOf(form), id, {
          holderName: form.get('holderName') ?? undefined,
          from: 'dashboard',
        });
        return back('notice', `Session ${session.sessionId} is now ${session.status}.`);
      }
      case 'expire':
        control.expireSession(environmentOf(form), id);
        return back('notice', `Session ${id} expired.`);
      case 'resolve': {
        const payment = await control.resolvePosPayment(environmentOf(form), id, form.get('outcome') as 'success' | 'failed');
        return back('notice', `POS payment ${payment.posPaymentId} is now ${payment.status}.`);
      }
      case 'resend': {
        const delivery = await control.resendDelivery(environmentOf(form), Number(id));
        return back('notice', `Resent as delivery #${delivery.id}: ${lastAnswer(delivery)}.`);
      }
      case 'emit': {
        const deliveries = await control.emitEvent(environmentOf(form), form.get('eventCode') ?? '', form.get('reference') ?? '');
        return back(
          'notice',
          deliveries.length === 0
            ? 'Event recorded, but no webhook URL is set: nothing was sent.'
            : `Sent: ${deliveries.map((delivery) => `#${delivery.id} ${lastAnswer(delivery)}`).join(', ')}.`,
        );
      }
      case 'advance': {
        const ms = parseDuration(form.get('duration')?.trim() ?? '');
        if (ms === undefined) return back('problem', 'Give a duration such as 90s, 5m, 1h30m or PT5M.');
        const clock = await control.advanceClock(ms);
        return back('notice', `The clock moved ahead by ${duration(ms)}; it is now ${time(clock.epochMs)}.`);
      }
      case 'reset':
        await control.reset();
        return back('notice', 'All data was deleted and the clock set back.');
      case 'add-webhook-url':
        control.addWebhookUrl(form.get('url') ?? '');
        return back('notice', `Webhooks now also go to ${form.get('url')}.`);
      case 'remove-webhook-url':
        control.removeWebhookUrl(form.get('url') ?? '');
        return back('notice', `Webhooks no longer go to ${form.get('url')}.`);
      default:
        return new Response('Unknown action', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });
    }
  } catch (error) {
    if (error instanceof ServiceFailure) return back('problem', error.message);
    throw error;
  }
}

/** Server-Sent Events: `change` after each change of the state (at most every 200 ms), a comment every 15 s. */
function events(context: DashboardContext, request: Request): Response {
  const encoder = new TextEncoder();
  let stop = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      const unwatch = context.control.watch(() => {
        timer ??= setTimeout(() => {
          timer = undefined;
          send(`event: change\ndata: ${Date.now()}\n\n`);
        }, 200);
      });
      const heartbeat = setInterval(() => send(': still here\n\n'), 15_000);
      (heartbeat as { unref?: () => void }).unref?.();
      stop = () => {
        unwatch();
        clearInterval(heartbeat);
        if (timer) clearTimeout(timer);
      };
      request.signal.addEventListener('abort', () => {
        stop();
        try {
          controller.close();
        } catch {
          // already closed
        }
      });
      send('retry: 2000\n\n');
    },
    cancel() {
      stop();
    },
  });
  return new Response(stream, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
}
