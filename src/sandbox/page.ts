import type { Environment } from '../core/options.js';
import { TEST_CARDHOLDER_NAMES } from '../testing/index.js';
import { readText } from './body.js';
import type { SandboxClock } from './clock.js';
import type { SessionRecord } from './records.js';
import { htmlResponse } from './responses.js';
import { PAYMENT_PAGE_SECONDS, type SandboxService } from './service.js';
import type { SandboxStore } from './store.js';
import { checkCardForm } from './validation.js';

/** What the payment page needs from the sandbox. */
export interface PageContext {
  service: SandboxService;
  store: SandboxStore;
  clientSecrets: Record<Environment, string>;
  clock: SandboxClock;
  webcode: string;
  maxBodyBytes: number;
}

const PAGE_PATH = /^\/(pay-external-test|pay-external)\/([^/]+)$/;
/** Seconds the "redirecting" message shows before the browser moves on. */
const REDIRECT_SECONDS = 1;

interface FormValues {
  cardNumber: string;
  expiryMonth: string;
  expiryYear: string;
  cvc: string;
  holderName: string;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function money(session: SessionRecord): string {
  return `${(session.amount.value / 100).toFixed(2)} ${session.amount.currency}`;
}

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;color:#1b1d21}
main{max-width:28rem;margin:2rem auto;background:#fff;padding:1.5rem 2rem;border-radius:.75rem;box-shadow:0 1px 4px #0002}
.banner{background:#fff4ce;border:1px solid #e0c060;padding:.5rem .75rem;border-radius:.4rem;font-size:.9rem}
label{display:block;margin-top:1rem;font-weight:600}input{width:100%;box-sizing:border-box;padding:.55rem;font-size:1rem;border:1px solid #8a8f98;border-radius:.35rem}
fieldset{border:0;padding:0;margin:1rem 0 0}button,input{font:inherit}legend{font-weight:600;margin-top:1rem}.row{display:flex;gap:1rem}.row>div{flex:1}
.error{color:#b00020;font-size:.9rem;margin:.25rem 0 0}[aria-invalid=true]{border-color:#b00020}
.actions{display:flex;gap:1rem;margin-top:1.5rem}button{padding:.7rem 1.2rem;font-size:1rem;border-radius:.4rem;border:0;cursor:pointer}
button.pay{background:#1a56db;color:#fff;flex:1}button.cancel{background:#e4e6eb;color:#1b1d21}#summary{border:2px solid #b00020;padding:.5rem .75rem;border-radius:.4rem}`;

function layout(title: string, body: string, extraHead = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
${extraHead}<style>${STYLE}</style>
</head>
<body>
<main>
<p class="banner" role="note">Sandbox payment page: a simulation, no real card is charged.</p>
${body}
</main>
</body>
</html>`;
}

function field(
  name: keyof FormValues,
  label: string,
  autocomplete: string,
  values: FormValues,
  errors: Record<string, string>,
  extra = '',
): string {
  const errorKey = name === 'expiryMonth' || name === 'expiryYear' ? 'expiry' : name;
  const error = errors[errorKey];
  const describedBy = error ? ` aria-describedby="${errorKey}-error"` : '';
  const value = name === 'cvc' ? '' : values[name];
  return `<label for="${name}">${label}</label>
<input id="${name}" name="${name}" autocomplete="${autocomplete}" value="${escapeHtml(value)}" required${error ? ' aria-invalid="true"' : ''}${describedBy}${extra}>`;
}

function errorText(key: string, errors: Record<string, string>): string {
  const error = errors[key];
  return error ? `<p class="error" id="${key}-error">${escapeHtml(error)}</p>` : '';
}

function formPage(session: SessionRecord, remainingSeconds: number, values: FormValues, errors: Record<string, string>): string {
  const count = Object.keys(errors).length;
  const summary =
    count === 0
      ? ''
      : `<div id="summary" role="alert" tabindex="-1"><p><strong>Please correct ${count === 1 ? 'this field' : `these ${count} fields`}:</strong></p><ul>${Object.entries(
          errors,
        )
          .map(([key, message]) => `<li><a href="#${key === 'expiry' ? 'expiryMonth' : key}">${escapeHtml(message)}</a></li>`)
          .join('')}</ul></div>`;
  const minutes = Math.floor(remainingSeconds / 60);
  const seconds = String(remainingSeconds % 60).padStart(2, '0');
  return layout(
    `Pay ${money(session)}`,
    `<h1>Pay ${escapeHtml(money(session))}</h1>
${session.description ? `<p>${escapeHtml(session.description)}</p>` : ''}
<p>Time left to pay: <span id="countdown" role="timer" aria-live="off" data-seconds="${remainingSeconds}">${minutes}:${seconds}</span></p>
${summary}
<form method="post" novalidate>
${field('cardNumber', 'Card number', 'cc-number', values, errors, ' inputmode="numeric"')}
${errorText('cardNumber', errors)}
<fieldset>
<legend>Expiry date</legend>
<div class="row">
<div>${field('expiryMonth', 'Month (MM)', 'cc-exp-month', values, errors, ' inputmode="numeric" maxlength="2"')}</div>
<div>${field('expiryYear', 'Year (YY)', 'cc-exp-year', values, errors, ' inputmode="numeric" maxlength="2"')}</div>
</div>
${errorText('expiry', errors)}
</fieldset>
${field('cvc', 'Security code (CVC)', 'cc-csc', values, errors, ' inputmode="numeric" maxlength="4"')}
${errorText('cvc', errors)}
${field('holderName', 'Cardholder name', 'cc-name', values, errors)}
${errorText('holderName', errors)}
<div class="actions">
<button class="pay" type="submit" name="action" value="pay">Pay ${escapeHtml(money(session))}</button>
<button class="cancel" type="submit" name="action" value="cancel" formnovalidate>Cancel payment</button>
</div>
</form>
<script>
(() => {
  const node = document.getElementById('countdown');
  let left = Number(node.dataset.seconds);
  const summary = document.getElementById('summary');
  if (summary) summary.focus();
  const tick = () => {
    left = Math.max(0, left - 1);
    node.textContent = Math.floor(left / 60) + ':' + String(left % 60).padStart(2, '0');
    if (left === 0) { clearInterval(timer); location.reload(); }
  };
  const timer = setInterval(tick, 1000);
})();
</script>`,
  );
}

function redirectPage(title: string, message: string, target: string, status = 200): Response {
  const html = layout(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p role="status">${escapeHtml(message)} Redirecting you to the shop&hellip;</p>
<p><a id="continue" href="${escapeHtml(target)}">Continue to the shop</a></p>`,
    `<meta http-equiv="refresh" content="${REDIRECT_SECONDS};url=${escapeHtml(target)}">\n`,
  );
  return htmlResponse(status, html, { refresh: `${REDIRECT_SECONDS}; url=${target}` });
}

function withQuery(url: string, name: string, value: string): string {
  const target = new URL(url);
  target.searchParams.set(name, value);
  return target.toString();
}

async function redirectData(session: SessionRecord, context: PageContext): Promise<string> {
  const { SignJWT } = await import('jose');
  return new SignJWT({
    paymentReference: session.paymentReference,
    sessionId: session.sessionId,
    amount: session.amount.value,
    currency: session.amount.currency,
    status: 'AUTHORISED',
    paymentStatus: session.paymentStatus,
    customReference: session.customReference,
    description: session.description,
    webcode: context.webcode,
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt(Math.floor(context.clock.now() / 1000))
    .sign(new TextEncoder().encode(context.clientSecrets[session.environment]));
}

async function finished(session: SessionRecord, context: PageContext): Promise<Response> {
  if (session.status === 'completed') {
    const target = withQuery(session.urlOk, 'data', await redirectData(session, context));
    return redirectPage('Payment completed', `Payment ${session.paymentReference} is authorised.`, target);
  }
  const messages: Record<string, [string, string]> = {
    cancelled: ['Payment cancelled', 'You cancelled the payment.'],
    expired: ['Time is up', `The ${PAYMENT_PAGE_SECONDS / 60} minutes to pay have passed.`],
    failed: ['Payment failed', 'The payment could not be completed.'],
  };
  const [title, message] = messages[session.status] ?? ['Payment not completed', ''];
  return redirectPage(title, message, session.urlKo);
}

function readForm(text: string): FormValues & { action: string } {
  const form = new URLSearchParams(text);
  const get = (name: string) => form.get(name) ?? '';
  return {
    action: get('action') || 'pay',
    cardNumber: get('cardNumber'),
    expiryMonth: get('expiryMonth'),
    expiryYear: get('expiryYear'),
    cvc: get('cvc'),
    holderName: get('holderName'),
  };
}

/** Serves `/pay-external-test/<token>` and `/pay-external/<token>`; `undefined` for any other path. */
export async function handlePage(request: Request, url: URL, context: PageContext): Promise<Response | undefined> {
  const match = PAGE_PATH.exec(url.pathname);
  if (!match) return undefined;
  const environment: Environment = match[1] === 'pay-external-test' ? 'test' : 'live';
  // Read before the session: from here on nothing awaits until the session's change is committed.
  const form = request.method === 'POST' ? readForm(await readText(request, context.maxBodyBytes)) : undefined;
  const session = context.service.sessionByToken(environment, match[2] ?? '');
  if (!session) return htmlResponse(404, layout('Payment not found', '<h1>Payment not found</h1><p>This payment link is not valid.</p>'));

  if (request.method === 'GET' || request.method === 'HEAD') {
    if (session.status !== 'pending') return finished(session, context);
    context.store.transaction(() => context.service.opened(session));
    const remaining = PAYMENT_PAGE_SECONDS - Math.floor((context.clock.now() - (session.openedAt ?? 0)) / 1000);
    const empty = { cardNumber: '', expiryMonth: '', expiryYear: '', cvc: '', holderName: '' };
    return htmlResponse(200, formPage(session, remaining, empty, {}));
  }
  if (!form) return htmlResponse(405, layout('Not allowed', '<h1>Method not allowed</h1>'), { allow: 'GET, POST' });

  if (session.status !== 'pending') return finished(session, context);
  context.store.transaction(() => context.service.opened(session));
  if (form.action === 'cancel') {
    context.store.transaction(() => context.service.cancel(session));
    return finished(session, context);
  }
  const errors = checkCardForm(form, new Date(context.clock.now()));
  if (Object.keys(errors).length > 0) {
    const remaining = PAYMENT_PAGE_SECONDS - Math.floor((context.clock.now() - (session.openedAt ?? 0)) / 1000);
    return htmlResponse(422, formPage(session, remaining, form, errors));
  }
  const scripted = TEST_CARDHOLDER_NAMES[form.holderName.trim().toUpperCase() as keyof typeof TEST_CARDHOLDER_NAMES];
  if (scripted) {
    context.store.transaction(() =>
      context.service.decline(session, scripted.result === 'error' ? 'error' : 'refused', scripted.description),
    );
    return redirectPage('Payment declined', `The payment was declined (${scripted.description}).`, session.urlKo);
  }
  context.store.transaction(() => context.service.authorise(session));
  return finished(session, context);
}
