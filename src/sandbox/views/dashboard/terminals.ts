/**
 * The overview's Terminals section: each simulated terminal of one environment with its processing
 * time, and a form that sets it (the control API's `PUT /_sandbox/{environment}/terminals/{poiId}`),
 * and the form action that reads it.
 */
import type { Environment } from '../../../core/options.js';
import type { TerminalSettings } from '../../api/terminals.js';
import { type Html, html } from '../html.js';
import { actionForm, type DashboardContext, table } from './parts.js';

/** The processing time as the page shows it. */
function processing(terminal: TerminalSettings): Html {
  return terminal.processingMs === null ? html`<span class="muted">default (posDelayMs)</span>` : html`${terminal.processingMs} ms`;
}

/** The row's form: a field per terminal, labelled with its poiId for a screen reader, which a table row has no other way to say. */
function setForm(context: DashboardContext, environment: Environment, terminal: TerminalSettings): Html {
  const id = `processing-${environment}-${terminal.poiId}`;
  return actionForm(
    context,
    'set-terminal',
    environment === 'test' ? '/' : '/live',
    {
      hidden: { environment, id: terminal.poiId },
      fields: [
        html`<label class="visually-hidden" for="${id}">Processing time of ${terminal.poiId}, in ms</label><input id="${id}" name="processingMs" inputmode="numeric" pattern="[0-9]*" size="8" value="${terminal.processingMs === null ? '' : String(terminal.processingMs)}" placeholder="default" aria-describedby="terminals-help">`,
      ],
    },
    'Set',
    'secondary',
  );
}

/** The row's connectivity button: takes an online terminal offline, brings an offline one online. */
function onlineForm(context: DashboardContext, environment: Environment, terminal: TerminalSettings): Html {
  return actionForm(
    context,
    'set-terminal-online',
    environment === 'test' ? '/' : '/live',
    { hidden: { environment, id: terminal.poiId, online: terminal.online ? 'false' : 'true' } },
    html`${terminal.online ? 'Take offline' : 'Bring online'}<span class="visually-hidden"> ${terminal.poiId}</span>`,
    'secondary',
  );
}

/** The Terminals section of an environment's overview. */
export function terminalsSection(context: DashboardContext, environment: Environment): Html {
  const terminals = context.control.terminals(environment);
  const rows = terminals.map((terminal) => [
    terminal.poiId,
    terminal.name,
    terminal.online ? 'online' : 'offline',
    processing(terminal),
    setForm(context, environment, terminal),
    onlineForm(context, environment, terminal),
  ]);
  return html`<h2>Terminals</h2>
<p id="terminals-help" class="muted">How long each terminal takes to answer a POS payment, in ms of the sandbox clock (0 to 600000; empty: the sandbox's posDelayMs). Meanwhile the payment is listed pending, a resend with its Idempotency-Key waits, and a new payment on the terminal is refused as busy. An offline terminal answers every POS payment 502 / 13004, charging nothing.</p>
${table(`Terminals, ${environment === 'test' ? 'Test' : 'Live'}`, [['Terminal', 'id'], 'Name', ['State', 'extra'], ['Processing time', 'nowrap'], 'Set processing time', 'Connectivity'], rows, 'No terminal.')}`;
}

/** What the form posted: a processing time in ms, `null` for the default (empty or `default`), `undefined` for anything else. */
export function processingFromForm(form: URLSearchParams): number | null | undefined {
  const text = form.get('processingMs')?.trim() ?? '';
  if (text === '' || text === 'default') return null;
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}
