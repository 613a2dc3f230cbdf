/** The dashboard's list pages (filters, paging) and the overview of an environment. */
import type { Environment } from '../../../core/options.js';
import type { ControlListParams, ControlPage } from '../../control/control.js';
import type { ModificationRecord, PosRecord, SessionRecord, WebhookDelivery } from '../../records.js';
import { deliveryStatus } from '../../store.js';
import { type Html, html } from '../html.js';
import { clientSecretSection } from './client-secret.js';
import {
  actionForm,
  base,
  type Cell,
  type Column,
  type DashboardContext,
  href,
  KINDS,
  type Kind,
  link,
  money,
  type PageParts,
  pager,
  status,
  TENANT_PARAM,
  table,
  time,
} from './parts.js';
import { terminalsSection } from './terminals.js';

function options(values: readonly string[], selected: string | undefined): Html[] {
  return values.map(
    (value) => html`<option value="${value}"${selected === value && html` selected`}>${value === '' ? 'any' : value}</option>`,
  );
}

function filterForm(
  context: DashboardContext,
  kind: Kind,
  environment: Environment,
  params: ControlListParams & { type?: string | undefined },
): Html {
  const typeSelect =
    kind === 'modifications' &&
    html`<div><label for="filter-type">Type</label><select id="filter-type" name="type">${options(['', 'refund', 'capture', 'cancel', 'extend'], params.type)}</select></div>`;
  return html`<form class="inline" method="get" action="${base(environment)}/${kind}" aria-label="Filter">${context.tenant !== undefined && html`<input type="hidden" name="${TENANT_PARAM}" value="${context.tenant}">`}
<div><label for="filter-status">Status</label><select id="filter-status" name="status">${options(['', ...KINDS[kind].statuses], params.status)}</select></div>
${typeSelect}<div><label for="filter-order">Order</label><select id="filter-order" name="order"><option value="desc"${params.order !== 'asc' && html` selected`}>newest first</option><option value="asc"${params.order === 'asc' && html` selected`}>oldest first</option></select></div>
<button type="submit" class="secondary">Apply</button>
</form>`;
}

function sessionRows(context: DashboardContext, environment: Environment, sessions: SessionRecord[]): Cell[][] {
  return sessions.map((session) => [
    link(href(context, `${base(environment)}/sessions/${encodeURIComponent(session.sessionId)}`), session.sessionId),
    status(session.status),
    money(session.amount),
    session.customReference ?? '',
    session.paymentReference ?? '',
    time(session.createdAt),
  ]);
}

function posRows(context: DashboardContext, environment: Environment, payments: PosRecord[]): Cell[][] {
  return payments.map((payment) => [
    link(href(context, `${base(environment)}/pos-payments/${encodeURIComponent(payment.posPaymentId)}`), payment.posPaymentId),
    status(payment.status),
    money(payment.amount),
    payment.poiId,
    payment.customReference ?? '',
    time(payment.createdAt),
  ]);
}

export function modificationRows(context: DashboardContext, environment: Environment, records: ModificationRecord[]): Cell[][] {
  return records.map((record) => [
    link(href(context, `${base(environment)}/modifications/${encodeURIComponent(record.operationReference)}`), record.operationReference),
    record.operationType,
    status(record.status),
    money(record.amount),
    record.paymentReference,
    time(record.createdAt),
  ]);
}

export function lastAnswer(delivery: WebhookDelivery): string {
  const last = delivery.attempts.at(-1);
  if (!last) return 'not attempted yet';
  return last.status === null ? `no answer: ${last.error ?? ''}` : `HTTP ${last.status}`;
}

export function deliveryRows(context: DashboardContext, environment: Environment, deliveries: WebhookDelivery[]): Cell[][] {
  return deliveries.map((delivery) => [
    link(href(context, `${base(environment)}/deliveries/${delivery.id}`), `#${delivery.id}`),
    delivery.event.event_code,
    String(delivery.event.data.paymentReference ?? ''),
    status(deliveryStatus(delivery)),
    delivery.fault ?? '',
    `${delivery.attempts.length} (${lastAnswer(delivery)})`,
    delivery.url,
    time(delivery.createdAt),
  ]);
}

/** The columns of each list: on a narrow screen, the record's id, its status and its amount or event. */
export const HEADINGS: Record<Kind, Column[]> = {
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
    ['Fault rule', 'nowrap extra'],
    ['Attempts (last answer)', 'extra'],
    ['URL', 'extra'],
    ['Created', 'extra'],
  ],
};

export function listPage(context: DashboardContext, kind: Kind, environment: Environment, query: URLSearchParams): PageParts {
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
    [page, rows] = [found, sessionRows(context, environment, found.items)];
  } else if (kind === 'pos-payments') {
    const found = control.listPosPayments(environment, params);
    [page, rows] = [found, posRows(context, environment, found.items)];
  } else if (kind === 'modifications') {
    const found = control.listModifications(environment, params);
    [page, rows] = [found, modificationRows(context, environment, found.items)];
  } else {
    const found = control.listDeliveries(environment, params);
    [page, rows] = [found, deliveryRows(context, environment, found.items)];
  }
  const title = KINDS[kind].title;
  return {
    title,
    environment,
    current: kind,
    body: html`<h1>${title}</h1>
${filterForm(context, kind, environment, params)}
${table(`${title}, ${environment === 'test' ? 'Test' : 'Live'}`, HEADINGS[kind], rows, `No ${title.toLowerCase()} match.`)}
${pager(page, `${base(environment)}/${kind}`, query)}`,
  };
}

export function overview(context: DashboardContext, environment: Environment): PageParts {
  const { control } = context;
  const counts = control.counts(environment);
  const recent = { take: 5, order: 'desc' as const };
  const card = (kind: Kind, count: number) =>
    html`<div class="panel"><h2>${link(href(context, `${base(environment)}/${kind}`), KINDS[kind].title)}</h2><p>${count} in all</p></div>`;
  const urls =
    control.webhookUrls.length === 0
      ? html`<p class="muted">None: webhooks are recorded but not sent. Add one with <code>--webhook-url</code>, or below.</p>`
      : html`<ul>${control.webhookUrls.map(
          (url) =>
            html`<li>${url} ${actionForm(context, 'remove-webhook-url', environment === 'test' ? '/' : '/live', { hidden: { url } }, 'Remove', 'secondary')}</li>`,
        )}</ul>`;
  return {
    title: 'Overview',
    environment,
    current: 'overview',
    body: html`<h1>${environment === 'test' ? 'Test' : 'Live'} overview</h1>
<div class="grid">${card('sessions', counts.sessions)}${card('pos-payments', counts.posPayments)}${card('modifications', counts.modifications)}${card('deliveries', counts.deliveries)}</div>
<h2>Latest sessions</h2>
${table('Latest sessions', HEADINGS.sessions, sessionRows(context, environment, control.listSessions(environment, recent).items), 'No session yet: create one with the SDK or the API.')}
<h2>Latest POS payments</h2>
${table('Latest POS payments', HEADINGS['pos-payments'], posRows(context, environment, control.listPosPayments(environment, recent).items), 'No POS payment yet.')}
${terminalsSection(context, environment)}
${clientSecretSection(context, environment)}
<h2>Latest webhook deliveries</h2>
${table('Latest webhook deliveries', HEADINGS.deliveries, deliveryRows(context, environment, control.listDeliveries(environment, recent).items), 'No webhook delivery yet.')}
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
${actionForm(context, 'reset', '/', { fields: [html`<p class="muted">Deletes every record of both environments of webcode ${context.webcode} and sets its clock back.</p>`] }, 'Reset all data', 'danger')}`,
  };
}
