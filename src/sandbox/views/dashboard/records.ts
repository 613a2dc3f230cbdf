/** The dashboard's record pages: a session, POS payment, modification or webhook delivery, with its actions and timeline. */
import type { Environment } from '../../../core/options.js';
import { TEST_CARDHOLDER_NAMES, TEST_SUCCESS_CARDHOLDER } from '../../../testing/index.js';
import type { RecordTimeline } from '../../control/control.js';
import type { DeliveryAttempt, FaultEntry, ModificationRecord, PosRecord, SessionRecord, WebhookDelivery } from '../../records.js';
import { deliveryStatus } from '../../store.js';
import { type Html, html } from '../html.js';
import { describeEffect } from './faults.js';
import { deliveryRows, HEADINGS, modificationRows } from './lists.js';
import { actionForm, base, type Cell, type DashboardContext, href, link, money, type PageParts, status, table, time } from './parts.js';
import { requestsSection } from './requests.js';

function fields(entries: [string, Cell][]): Html {
  return html`<dl>${entries.map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}</dl>`;
}

function attemptLine(attempt: DeliveryAttempt): string {
  const answer = attempt.status === null ? `no answer (${attempt.error ?? 'unknown error'})` : `HTTP ${attempt.status}`;
  return `${answer} in ${attempt.durationMs} ms`;
}

function deliveriesSection(context: DashboardContext, environment: Environment, deliveries: WebhookDelivery[]): Html {
  return html`<h2>Webhooks sent</h2>${table('Webhooks about this record', HEADINGS.deliveries, deliveryRows(context, environment, deliveries), 'No webhook about this record.')}`;
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

function deliveryLink(context: DashboardContext, environment: Environment, id: number): Html {
  return link(href(context, `${base(environment)}/deliveries/${id}`), `#${id}`);
}

function deliveryEvents(context: DashboardContext, environment: Environment, deliveries: WebhookDelivery[]): TimelineEntry[] {
  return deliveries.flatMap((delivery) =>
    delivery.attempts.map(
      (attempt): TimelineEntry => [
        attempt.at,
        html`webhook ${deliveryLink(context, environment, delivery.id)} ${delivery.event.event_code} to ${delivery.url}: ${attemptLine(attempt)}`,
      ],
    ),
  );
}

/** Where fault rules struck: the call or the event, the rule and what it did, and the deliveries a webhook effect made. */
function faultEvents(context: DashboardContext, environment: Environment, entries: FaultEntry[]): TimelineEntry[] {
  return entries.map((entry): TimelineEntry => {
    const what = entry.route === null ? `the ${entry.event} webhook` : html`<code>${entry.route}</code>`;
    const deliveries =
      entry.deliveries.length > 0 &&
      html` (deliveries ${entry.deliveries.map((id, index) => html`${index > 0 && ', '}${deliveryLink(context, environment, id)}`)})`;
    return [
      entry.at,
      html`<span class="status bad">fault</span> rule ${entry.rule} struck ${what}: ${describeEffect(entry.effect)}${deliveries}`,
    ];
  });
}

function modificationEvents(context: DashboardContext, environment: Environment, records: ModificationRecord[]): TimelineEntry[] {
  return records.flatMap((record): TimelineEntry[] => [
    [
      record.createdAt,
      html`${record.operationType} ${link(href(context, `${base(environment)}/modifications/${encodeURIComponent(record.operationReference)}`), record.operationReference)} requested`,
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

function sessionEvents(context: DashboardContext, environment: Environment, timeline: RecordTimeline<SessionRecord>): TimelineEntry[] {
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
    ...modificationEvents(context, environment, timeline.modifications),
    ...deliveryEvents(context, environment, timeline.deliveries),
    ...faultEvents(context, environment, timeline.faults),
  ];
}

export function sessionPage(
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
<h2>Timeline</h2>${timelineList(sessionEvents(context, environment, timeline))}
<h2>Modifications</h2>${table('Modifications of this session', HEADINGS.modifications, modificationRows(context, environment, timeline.modifications), 'No modification.')}
${deliveriesSection(context, environment, timeline.deliveries)}
${requestsSection(context, environment, [session.sessionId, ...session.attempts.map((attempt) => attempt.paymentReference)])}`,
  };
}

export function posPage(context: DashboardContext, environment: Environment, timeline: RecordTimeline<PosRecord>): PageParts {
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
      ...modificationEvents(context, environment, timeline.modifications),
      ...deliveryEvents(context, environment, timeline.deliveries),
      ...faultEvents(context, environment, timeline.faults),
    ])}
<h2>Modifications</h2>${table('Modifications of this payment', HEADINGS.modifications, modificationRows(context, environment, timeline.modifications), 'No modification.')}
${deliveriesSection(context, environment, timeline.deliveries)}
${requestsSection(context, environment, [payment.posPaymentId])}`,
  };
}

function ownerLink(context: DashboardContext, environment: Environment, paymentReference: string): Cell {
  const owner = context.control.paymentOwner(environment, paymentReference);
  if (!owner) return paymentReference;
  return link(
    href(context, `${base(environment)}/${owner.kind === 'session' ? 'sessions' : 'pos-payments'}/${encodeURIComponent(owner.id)}`),
    paymentReference,
  );
}

export function modificationPage(
  context: DashboardContext,
  environment: Environment,
  timeline: RecordTimeline<ModificationRecord>,
): PageParts {
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
<h2>Timeline</h2>${timelineList([
      ...modificationEvents(context, environment, [record]),
      ...deliveryEvents(context, environment, timeline.deliveries),
      ...faultEvents(context, environment, timeline.faults),
    ])}
${deliveriesSection(context, environment, timeline.deliveries)}
${requestsSection(context, environment, [record.operationReference])}`,
  };
}

export function deliveryPage(context: DashboardContext, environment: Environment, delivery: WebhookDelivery): PageParts {
  const here = `${base(environment)}/deliveries/${delivery.id}`;
  const fault = context.control.deliveryFault(delivery);
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
  ...(delivery.resendOf ? [['Resends', deliveryLink(context, environment, delivery.resendOf)] as [string, Cell]] : []),
  ...(delivery.fault ? [['Fault', html`rule ${delivery.fault}${fault && html`: ${describeEffect(fault.effect)}`}`] as [string, Cell]] : []),
])}
<h2>Actions</h2>${actionForm(context, 'resend', here, { hidden: { environment, id: String(delivery.id) } }, 'Resend', 'secondary')}
<h2>Attempts</h2>${table('Attempts, with the first 2 KB of each answer', ['#', 'At', 'Answer', 'Took', 'Body or error'], rows, 'No attempt yet.')}
<h2>Body sent</h2><pre>${JSON.stringify(delivery.event, null, 2)}</pre>`,
  };
}
