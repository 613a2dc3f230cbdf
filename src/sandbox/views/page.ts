/**
 * The hosted payment page at `/pay-external-test/<token>` and `/pay-external/<token>`: the card
 * form in the session's language, its checks, and the outcome pages and redirects back to the shop.
 */
import type { Environment } from '../../core/options.js';
import { TEST_CARDHOLDER_NAMES, type TestCardholderName } from '../../testing/index.js';
import { PAYMENT_PAGE_SECONDS, type SandboxApi } from '../api/index.js';
import type { SandboxClock } from '../clock.js';
import { readText } from '../http/body.js';
import type { SandboxRequest } from '../http/incoming.js';
import type { SessionRecord } from '../records.js';
import { SANDBOX_BANNER } from '../responses.js';
import type { SandboxStore } from '../store.js';
import { type CardFormErrors, type CardFormProblem, checkCardForm } from '../validation.js';
import { type Html, html, raw } from './html.js';
import { localeOf, type Outcome, type PageLocale, requestLocale, type Strings } from './page-text.js';
import { signerReady, signHs256 } from './redirect-data.js';
import { cspNonce, htmlResponse } from './response.js';

/** What the payment page needs from the sandbox. */
export interface PageContext {
  api: SandboxApi;
  store: SandboxStore;
  clientSecrets: Record<Environment, string>;
  clock: SandboxClock;
  webcode: string;
  maxBodyBytes: number;
  /** Aborted once the tenant's removal begins: a page of its sessions is then not found. */
  removed: AbortSignal;
}

const PAGE_PATH = /^\/(pay-external-test|pay-external)\/([^/]+)$/;
/** Seconds an outcome page waits before its script takes the customer back to the shop. */
const RETURN_SECONDS = 5;

interface FormValues {
  cardNumber: string;
  expiryMonth: string;
  expiryYear: string;
  cvc: string;
  holderName: string;
}

const NUMBER_FORMATS = new Map<string, Intl.NumberFormat>();

function money(session: SessionRecord, locale: PageLocale): string {
  const tag = locale.text.numberLocale;
  let format = NUMBER_FORMATS.get(tag);
  if (!format) {
    format = new Intl.NumberFormat(tag, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    NUMBER_FORMATS.set(tag, format);
  }
  return `${format.format(session.amount.value / 100)} ${session.amount.currency}`;
}

const STYLE = `*,*::before,*::after{box-sizing:border-box}[hidden]{display:none!important}
body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;padding:.75rem;color:#1b1d21;line-height:1.5}
main{max-width:28rem;margin:.75rem auto;background:#fff;padding:1.25rem 1rem;border-radius:.75rem;box-shadow:0 1px 4px #0002}
@media (min-width:36rem){main{margin:2rem auto;padding:1.5rem 2rem}}
h1{font-size:1.5rem;line-height:1.25;margin:1rem 0 .5rem}h2{font-size:1rem;margin:0 0 .25rem}
.banner{background:#fff4ce;border:1px solid #e0c060;padding:.5rem .75rem;border-radius:.4rem;font-size:.9rem;margin:0}
label{display:block;margin-top:1rem;font-weight:600}
input{width:100%;padding:.55rem;font:inherit;border:1px solid #8a8f98;border-radius:.35rem}
fieldset{border:0;padding:0;margin:1rem 0 0;min-width:0}legend{font-weight:600;padding:0}
.row{display:flex;gap:1rem}.row>div{flex:1;min-width:0}.row label{margin-top:.25rem;font-weight:400}
.error{color:#b00020;font-size:.9rem;margin:.25rem 0 0}[aria-invalid=true]{border-color:#b00020}
#summary{border:2px solid #b00020;padding:.5rem .75rem;border-radius:.4rem}#summary p{margin:0}#summary ul{margin:.25rem 0 0}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:1.5rem}.actions>*{flex:1 1 auto}
button,.button{display:inline-block;font:inherit;line-height:1.25;padding:.7rem 1.2rem;border-radius:.4rem;border:0;cursor:pointer;white-space:nowrap;text-align:center;text-decoration:none}
.primary{background:#1a56db;color:#fff}.secondary{background:#e4e6eb;color:#1b1d21}
button:disabled{background:#5f6570;color:#fff;cursor:progress}
:focus-visible{outline:3px solid #1a56db;outline-offset:2px}
.progress{margin:.75rem 0 0;font-weight:600}.progress:empty{display:none}
.hint{margin-top:1.5rem;border-top:1px solid #d5d8de;padding-top:1rem;font-size:.9rem}.hint p{margin:0}
.hint ul{margin:.25rem 0 0;padding-left:1.25rem}code{font-family:ui-monospace,monospace;font-weight:600}`;

function layout(locale: PageLocale, nonce: string, title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="${locale.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style nonce="${nonce}">${raw(STYLE)}</style>
</head>
<body>
<main>
<p class="banner" role="note">${locale.text.banner}</p>
${body}
</main>
</body>
</html>`;
}

/**
 * Where the form page's POST may lead: the page itself and, because Chromium applies `form-action`
 * to the redirects after a submission too, the origins of the shop's urlOk and urlKo (the 303s).
 */
function formTargets(session: SessionRecord): string[] {
  const origins: string[] = [];
  for (const url of [session.urlOk, session.urlKo]) {
    try {
      const { origin } = new URL(url);
      // Only what is safe inside a CSP source list (no spaces, semicolons or commas).
      if (/^https?:\/\/[a-z0-9.:[\]-]+$/i.test(origin)) origins.push(origin);
    } catch {
      // not a URL: nothing to allow
    }
  }
  return origins;
}

function field(
  name: keyof FormValues,
  label: string,
  autocomplete: string,
  values: FormValues,
  errors: CardFormErrors,
  extra: Html = html``,
): Html {
  const errorKey = name === 'expiryMonth' || name === 'expiryYear' ? 'expiry' : name;
  const error = errors[errorKey];
  const describedBy = error && html` aria-describedby="${errorKey}-error"`;
  const value = name === 'cvc' ? '' : values[name];
  return html`<label for="${name}">${label}</label>
<input id="${name}" name="${name}" autocomplete="${autocomplete}" value="${value}" required${error && html` aria-invalid="true"`}${describedBy}${extra}>`;
}

function errorText(key: keyof CardFormErrors, errors: CardFormErrors, text: Strings): Html | undefined {
  const error = errors[key];
  return error && html`<p class="error" id="${key}-error">${text.problems[error]}</p>`;
}

/**
 * The form page's script: the countdown, focus on the error summary, and the buttons disabled
 * while the form is being sent (after the browser has read the form, so the clicked button's value
 * is sent; a page restored from the history gets them back). The form works without it.
 */
const FORM_SCRIPT = `(() => {
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

  const form = document.getElementById('card-form');
  const buttons = [...form.querySelectorAll('button')];
  const progress = document.getElementById('progress');
  let sending = false;
  form.addEventListener('submit', (event) => {
    if (sending) { event.preventDefault(); return; }
    sending = true;
    setTimeout(() => {
      for (const button of buttons) button.disabled = true;
      form.setAttribute('aria-busy', 'true');
      progress.textContent = form.dataset.busy;
    }, 0);
  });
  window.addEventListener('pageshow', (event) => {
    if (!event.persisted) return;
    sending = false;
    for (const button of buttons) button.disabled = false;
    form.removeAttribute('aria-busy');
    progress.textContent = '';
  });
})();`;

function formPage(session: SessionRecord, remainingSeconds: number, values: FormValues, errors: CardFormErrors): Response {
  const locale = localeOf(session.shopperLocale);
  const { text } = locale;
  const nonce = cspNonce();
  const entries = Object.entries(errors) as [keyof CardFormErrors, CardFormProblem][];
  const summary =
    entries.length > 0 &&
    html`<div id="summary" role="alert" tabindex="-1"><p><strong>${text.summary(entries.length)}</strong></p><ul>${entries.map(
      ([key, problem]) => html`<li><a href="#${key === 'expiry' ? 'expiryMonth' : key}">${text.problems[problem]}</a></li>`,
    )}</ul></div>`;
  const minutes = Math.floor(remainingSeconds / 60);
  const seconds = String(remainingSeconds % 60).padStart(2, '0');
  const amount = money(session, locale);
  const names = (Object.keys(TEST_CARDHOLDER_NAMES) as TestCardholderName[]).map(
    (name) => html`<li><code>${name}</code>: ${text.hintNames[name]}</li>`,
  );
  const numeric = (maxLength?: number) => html` inputmode="numeric"${maxLength !== undefined && html` maxlength="${maxLength}"`}`;
  const page = layout(
    locale,
    nonce,
    text.payTitle(amount),
    html`<h1>${text.payTitle(amount)}</h1>
${session.description && html`<p>${session.description}</p>`}
<p>${text.timeLeft} <span id="countdown" role="timer" aria-live="off" data-seconds="${remainingSeconds}">${minutes}:${seconds}</span></p>
${summary}
<form id="card-form" method="post" novalidate data-busy="${text.paying}">
${field('cardNumber', text.cardNumber, 'cc-number', values, errors, numeric())}
${errorText('cardNumber', errors, text)}
<fieldset>
<legend>${text.expiryDate}</legend>
<div class="row">
<div>${field('expiryMonth', text.month, 'cc-exp-month', values, errors, numeric(2))}</div>
<div>${field('expiryYear', text.year, 'cc-exp-year', values, errors, numeric(2))}</div>
</div>
${errorText('expiry', errors, text)}
</fieldset>
${field('cvc', text.cvc, 'cc-csc', values, errors, numeric(4))}
${errorText('cvc', errors, text)}
${field('holderName', text.holderName, 'cc-name', values, errors)}
${errorText('holderName', errors, text)}
<div class="actions">
<button class="primary pay" type="submit" name="action" value="pay">${text.pay(amount)}</button>
<button class="secondary cancel" type="submit" name="action" value="cancel" formnovalidate>${text.cancel}</button>
</div>
<p id="progress" class="progress" role="status"></p>
</form>
<section class="hint" aria-labelledby="hint-title">
<h2 id="hint-title">${text.hintTitle}</h2>
<p>${text.hintIntro}</p>
<ul>${names}</ul>
</section>
<script nonce="${nonce}">${raw(FORM_SCRIPT)}</script>`,
  );
  return htmlResponse(Object.keys(errors).length > 0 ? 422 : 200, page, undefined, { nonce, formAction: formTargets(session) });
}

/**
 * The outcome page's script: focus on "Return to the shop" (also set by `autofocus`), the announced
 * return after a few seconds, a "Stay on this page" button that stops it, and Space on the link as
 * on a button. Without JavaScript the page stays, and the link takes the customer back.
 */
const OUTCOME_SCRIPT = `(() => {
  const link = document.getElementById('return');
  const notice = document.getElementById('return-notice');
  const stay = document.getElementById('stay');
  const seconds = Number(link.dataset.seconds);
  notice.textContent = link.dataset.notice;
  link.focus();
  link.addEventListener('keydown', (event) => {
    if (event.key === ' ') { event.preventDefault(); link.click(); }
  });
  const timer = setTimeout(() => location.replace(link.href), seconds * 1000);
  stay.hidden = false;
  stay.addEventListener('click', () => {
    clearTimeout(timer);
    notice.textContent = stay.dataset.stopped;
    stay.hidden = true;
    link.focus();
  });
})();`;

/** A page saying how the payment ended, with a focused "Return to the shop" and an announced return to urlKo. */
function outcomePage(session: SessionRecord, outcome: Outcome): Response {
  const locale = localeOf(session.shopperLocale);
  const { text } = locale;
  const nonce = cspNonce();
  const { title, message } = text.outcomes[outcome.kind];
  const reason = outcome.kind === 'declined' && outcome.name ? text.declineReasons[outcome.name] : message;
  const page = layout(
    locale,
    nonce,
    title,
    html`<h1>${title}</h1>
<p id="outcome-message">${reason} ${text.noMoney}</p>
<p id="return-notice" role="status">${text.returnManual}</p>
<div class="actions">
<a class="button primary" id="return" data-return href="${session.urlKo}" autofocus aria-describedby="outcome-message return-notice" data-seconds="${RETURN_SECONDS}" data-notice="${text.returnNotice(RETURN_SECONDS)}">${text.returnButton}</a>
<button class="secondary" id="stay" type="button" hidden data-stopped="${text.returnStopped}">${text.stay}</button>
</div>
<script nonce="${nonce}">${raw(OUTCOME_SCRIPT)}</script>`,
  );
  return htmlResponse(200, page, undefined, { nonce });
}

/** A page without a session or a form: the unknown link (404) and the wrong method (405). */
function messagePage(status: number, locale: PageLocale, title: string, message: string, extra?: Record<string, string>): Response {
  const nonce = cspNonce();
  return htmlResponse(status, layout(locale, nonce, title, html`<h1>${title}</h1>\n<p>${message}</p>`), extra, {
    nonce,
  });
}

/**
 * A 303 to the shop, where no message is needed: the payment completed, or the customer cancelled it.
 * `Location` carries the URL serialized by the URL parser (punycode host, percent-encoded path and
 * query): ASCII only, as a header must be, whatever the shop sent.
 */
function seeOther(target: string): Response {
  return new Response(null, {
    status: 303,
    headers: {
      location: new URL(target).href,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'x-payment-sandbox': SANDBOX_BANNER,
    },
  });
}

function withQuery(url: string, name: string, value: string): string {
  const target = new URL(url);
  target.searchParams.set(name, value);
  return target.toString();
}

function redirectData(session: SessionRecord, context: PageContext): Promise<string> {
  return signHs256(
    {
      paymentReference: session.paymentReference,
      sessionId: session.sessionId,
      amount: session.amount.value,
      currency: session.amount.currency,
      status: 'AUTHORISED',
      paymentStatus: session.paymentStatus,
      customReference: session.customReference,
      description: session.description,
      webcode: context.webcode,
      iat: Math.floor(context.clock.now() / 1000),
    },
    context.clientSecrets[session.environment],
  );
}

/** What ended a failed session: its last attempt, declined for a reason of the Test table or a processor error. */
function failureOf(session: SessionRecord): Outcome {
  const attempt = session.attempts.at(-1);
  if (attempt?.status === 'error') return { kind: 'error' };
  if (attempt?.status !== 'refused') return { kind: 'failed' };
  const name = (Object.keys(TEST_CARDHOLDER_NAMES) as TestCardholderName[]).find(
    (key) => TEST_CARDHOLDER_NAMES[key].description === attempt.reason,
  );
  return { kind: 'declined', name: name === 'ERROR' ? undefined : name };
}

/**
 * The answer for a session that is no longer pending: a 303 to urlOk with fresh `data` once it is
 * completed, a 303 to urlKo when the customer has just cancelled it; otherwise (declined, processor
 * error, expired, or a page opened again after a cancel) a page that says what happened.
 */
async function finished(session: SessionRecord, context: PageContext, cancelling = false): Promise<Response> {
  if (session.status === 'completed') return seeOther(withQuery(session.urlOk, 'data', await redirectData(session, context)));
  if (session.status === 'cancelled') return cancelling ? seeOther(session.urlKo) : outcomePage(session, { kind: 'cancelled' });
  if (session.status === 'expired') return outcomePage(session, { kind: 'expired' });
  return outcomePage(session, session.status === 'failed' ? failureOf(session) : { kind: 'failed' });
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

/** The environment and session token a payment page's path names; `undefined` for any other path. */
export function pageSessionToken(url: URL): { environment: Environment; token: string } | undefined {
  const match = PAGE_PATH.exec(url.pathname);
  return match ? { environment: match[1] === 'pay-external-test' ? 'test' : 'live', token: match[2] ?? '' } : undefined;
}

/**
 * Serves `/pay-external-test/<token>` and `/pay-external/<token>`; `undefined` for any other path.
 * A page whose tenant is removed while it is answered (the store closed under it) is not found,
 * 404, as a link to no session is: the session went with its tenant.
 */
export async function handlePage(request: SandboxRequest, url: URL, context: PageContext): Promise<Response | undefined> {
  const page = pageSessionToken(url);
  if (!page) return undefined;
  let answer: Response;
  try {
    answer = await servePage(request, page, context);
  } catch (error) {
    if (!context.removed.aborted) throw error;
    answer = notFound(request);
  }
  return context.removed.aborted ? notFound(request) : answer;
}

function notFound(request: SandboxRequest): Response {
  const locale = requestLocale(request);
  return messagePage(404, locale, locale.text.notFoundTitle, locale.text.notFoundMessage);
}

async function servePage(
  request: SandboxRequest,
  page: { environment: Environment; token: string },
  context: PageContext,
): Promise<Response> {
  const { environment } = page;
  // Read before the session: from here on nothing awaits until the session's change is committed.
  const form = request.method === 'POST' ? readForm(await readText(request, context.maxBodyBytes)) : undefined;
  // The signer of urlOk's data, ready before any change: the answer after a commit cannot fail on it.
  if (form) await signerReady();
  const session = context.api.sessions.byToken(environment, page.token);
  if (!session) return notFound(request);

  if (request.method === 'GET' || request.method === 'HEAD') {
    if (session.status !== 'pending') return finished(session, context);
    context.store.transaction(() => context.api.sessions.opened(session));
    const remaining = PAYMENT_PAGE_SECONDS - Math.floor((context.clock.now() - (session.openedAt ?? 0)) / 1000);
    const empty = { cardNumber: '', expiryMonth: '', expiryYear: '', cvc: '', holderName: '' };
    return formPage(session, remaining, empty, {});
  }
  if (!form) {
    const locale = localeOf(session.shopperLocale);
    return messagePage(405, locale, locale.text.methodTitle, locale.text.methodMessage, { allow: 'GET, POST' });
  }

  if (session.status !== 'pending') return finished(session, context, form.action === 'cancel' && session.status === 'cancelled');
  const { api, store } = context;
  if (form.action === 'cancel') {
    // Built before the commit: once the session is cancelled, answering cannot fail.
    const toShop = seeOther(session.urlKo);
    store.transaction(() => {
      api.sessions.opened(session);
      api.sessions.cancel(session);
    });
    return toShop;
  }
  const errors = checkCardForm(form, new Date(context.clock.now()));
  if (Object.keys(errors).length > 0) {
    store.transaction(() => api.sessions.opened(session));
    const remaining = PAYMENT_PAGE_SECONDS - Math.floor((context.clock.now() - (session.openedAt ?? 0)) / 1000);
    return formPage(session, remaining, form, errors);
  }
  const scripted = TEST_CARDHOLDER_NAMES[form.holderName.trim().toUpperCase() as keyof typeof TEST_CARDHOLDER_NAMES];
  // Opened and paid (or declined) in one transaction: one commit per form POST.
  store.transaction(() => {
    api.sessions.opened(session);
    if (scripted) api.sessions.decline(session, scripted.result === 'error' ? 'error' : 'refused', scripted.description);
    else api.sessions.authorise(session);
  });
  return finished(session, context);
}
