/** The dashboard's form actions: each runs one control and sends the browser back with what happened. */
import type { Environment } from '../../../core/options.js';
import { parseDuration } from '../../control/control.js';
import { returnPath } from '../../http/access.js';
import { readText } from '../../http/body.js';
import { ServiceFailure } from '../../responses.js';
import { lastAnswer } from './lists.js';
import { type DashboardContext, duration, time } from './parts.js';

function environmentOf(form: URLSearchParams): Environment {
  const value = form.get('environment');
  if (value !== 'test' && value !== 'live') throw new ServiceFailure(400, 12001, 'environment must be test or live');
  return value;
}

/** Runs a form action and sends the browser back with what happened (303, so a reload does not repeat it). */
export async function act(context: DashboardContext, request: Request, url: URL, action: string): Promise<Response> {
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
