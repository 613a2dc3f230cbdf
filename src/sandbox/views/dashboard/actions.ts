/** The dashboard's form actions: each runs one control of the tenant the form names and sends the browser back with what happened. */
import type { Environment } from '../../../core/options.js';
import { parseDuration } from '../../control/control.js';
import { FaultRuleError } from '../../faults.js';
import { returnPath } from '../../http/access.js';
import { readText } from '../../http/body.js';
import { ServiceFailure } from '../../responses.js';
import { maskedSecret } from './client-secret.js';
import { faultsPage, ruleFromForm } from './faults.js';
import { render, unknownTenant } from './layout.js';
import { lastAnswer } from './lists.js';
import { type DashboardContext, type DashboardSettings, duration, href, TENANT_PARAM, tenantContext, time } from './parts.js';
import { processingFromForm } from './terminals.js';

function environmentOf(form: URLSearchParams): Environment {
  const value = form.get('environment');
  if (value !== 'test' && value !== 'live') throw new ServiceFailure(400, 12001, 'environment must be test or live');
  return value;
}

/** Runs a form action and sends the browser back with what happened (303, so a reload does not repeat it). */
export async function act(settings: DashboardSettings, request: Request, url: URL, action: string): Promise<Response> {
  const form = new URLSearchParams(await readText(request, settings.maxBodyBytes));
  // A page of another site cannot know the token: it cannot make a developer's browser act here.
  if (form.get('token') !== settings.formToken)
    return new Response('Stale or foreign form: reload the dashboard and try again', {
      status: 403,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
  const context = tenantContext(settings, form.get(TENANT_PARAM));
  if (!context) return unknownTenant(settings, form.get(TENANT_PARAM) ?? '');
  const returnTo = returnPath(form.get('returnTo'), url.origin);
  const back = (kind: 'notice' | 'problem', message: string) => {
    const target = new URL(returnTo);
    target.searchParams.delete('notice');
    target.searchParams.delete('problem');
    // Back on the tenant acted on, whatever returnTo said.
    target.searchParams.delete(TENANT_PARAM);
    if (context.tenant !== undefined) target.searchParams.set(TENANT_PARAM, context.tenant);
    target.searchParams.set(kind, message);
    return new Response(null, { status: 303, headers: { location: `${target.pathname}${target.search}` } });
  };
  let answer: Response;
  try {
    answer = await perform(context, action, form, back);
  } catch (error) {
    if (context.removed.aborted) answer = unknownTenant(settings, context.webcode);
    else if (error instanceof ServiceFailure) answer = back('problem', error.message);
    else throw error;
  }
  // The tenant was removed while the action ran: what it did went with the tenant's records.
  return context.removed.aborted ? unknownTenant(settings, context.webcode) : answer;
}

/** Runs one action on the tenant of `context`; a refused one throws its {@link ServiceFailure}. */
async function perform(
  context: DashboardContext,
  action: string,
  form: URLSearchParams,
  back: (kind: 'notice' | 'problem', message: string) => Response,
): Promise<Response> {
  const { control } = context;
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
    case 'set-terminal':
      return setTerminal(context, environmentOf(form), id, processingFromForm(form), back);
    case 'set-terminal-online': {
      const terminal = context.control.setTerminal(environmentOf(form), id, { online: form.get('online') === 'true' });
      return back('notice', `Terminal ${terminal.poiId} is now ${terminal.online ? 'online' : 'offline'}.`);
    }
    case 'rotate-client-secret': {
      const environment = environmentOf(form);
      const secret = context.rotateClientSecret(environment);
      return back(
        'notice',
        `The ${environment === 'test' ? 'Test' : 'Live'} client secret is now ${maskedSecret(secret)}: new tokens are signed with it.`,
      );
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
    case 'add-fault': {
      const added = addFault(context, form);
      // Refused: the page again, 400, with why and with what was posted, to be corrected.
      if ('refused' in added)
        return render(context, { ...faultsPage(context, form), problem: added.refused, here: href(context, '/faults') }, 400);
      return back('notice', `Rule ${added.id} added.`);
    }
    case 'remove-fault': {
      const removed = context.faults.remove(id);
      return removed
        ? back('notice', `Rule ${id} removed; it struck ${removed.injected} ${removed.injected === 1 ? 'time' : 'times'}.`)
        : back('problem', `No fault rule ${id}: it was removed already.`);
    }
    case 'clear-faults':
      context.faults.clear();
      return back('notice', 'Every fault rule was removed.');
    default:
      return new Response('Unknown action', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  }
}

/** Sets a terminal's processing time (the control API's action), or says what the field must hold. */
function setTerminal(
  context: DashboardContext,
  environment: Environment,
  poiId: string,
  processingMs: number | null | undefined,
  back: (kind: 'notice' | 'problem', message: string) => Response,
): Response {
  if (processingMs === undefined) return back('problem', 'Give the processing time in ms, 0 to 600000, or leave it empty for the default.');
  const terminal = context.control.setTerminal(environment, poiId, { processingMs });
  return back(
    'notice',
    terminal.processingMs === null
      ? `Terminal ${terminal.poiId} takes the sandbox's default time again.`
      : `Terminal ${terminal.poiId} now takes ${terminal.processingMs} ms per payment.`,
  );
}

/** Adds the rule the form describes: its id, or why it was refused (the control API's 400 message). */
function addFault(context: DashboardContext, form: URLSearchParams): { id: string } | { refused: string } {
  try {
    return { id: context.faults.add(ruleFromForm(form)).id };
  } catch (error) {
    if (error instanceof FaultRuleError) return { refused: error.message };
    throw error;
  }
}
