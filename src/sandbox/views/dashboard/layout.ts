/** The frame of every dashboard page (header, tenant choice, environment bar, clock, live region), its style sheet and scripts, and the answer that carries it. */
import { type Html, html, raw } from '../html.js';
import { cspNonce, htmlResponse } from '../response.js';
import {
  actionForm,
  base,
  DASHBOARD_EVENTS_PATH,
  type DashboardContext,
  type DashboardSettings,
  duration,
  href,
  LIVE_HEADER,
  link,
  type PageParts,
  TENANT_PARAM,
  tenantContext,
  time,
} from './parts.js';

const STYLE = `:root{--ink:#1b1d21;--muted:#555b66;--line:#d5d8de;--accent:#1a56db;--test:#fff4ce;--test-line:#b38600;--live:#fde2e1;--live-line:#b42318}
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,sans-serif;color:var(--ink);background:#f6f7f9}
a{color:var(--accent)}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
header{background:#fff;border-bottom:1px solid var(--line);padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}
header .brand{font-weight:700;color:var(--ink);text-decoration:none}nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem .9rem}
nav a[aria-current=page]{font-weight:700;color:var(--ink)}
.env{padding:.45rem 1rem;font-weight:600;border-bottom:2px solid}.env.test{background:var(--test);border-color:var(--test-line)}.env.live{background:var(--live);border-color:var(--live-line)}
.env a{margin-left:1rem}main{padding:1rem;max-width:72rem;margin:0 auto}h1{font-size:1.4rem;margin:.5rem 0 1rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid var(--line)}caption{text-align:left;font-weight:600;padding:.4rem 0}
th,td{text-align:left;padding:.4rem .55rem;border-bottom:1px solid var(--line);vertical-align:top}th{background:#eef0f3}
.scroll{overflow-x:auto;position:relative}form.inline{display:inline-flex;flex-wrap:wrap;gap:.4rem;align-items:end;margin:.25rem .75rem .25rem 0;max-width:100%}form.inline>div{max-width:100%}
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
header form.tenant{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;margin-left:auto}header form.tenant label{display:inline}
form.stacked{display:flex;flex-direction:column;align-items:flex-start;gap:.6rem}form.stacked>div{width:100%}
fieldset{border:1px solid var(--line);border-radius:.4rem;margin:0;padding:.5rem .75rem;min-width:0;background:#fff}legend{font-weight:600;padding:0 .3rem}
.fields{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:.5rem .9rem}.fields input,.fields select{width:100%}
.hint{margin:.15rem 0 0;font-size:.85rem;color:var(--muted)}td form.inline{margin:0}
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
  const tenant = new URLSearchParams(location.search).get('${TENANT_PARAM}');
  const stream = '${DASHBOARD_EVENTS_PATH}' + (tenant ? '?${TENANT_PARAM}=' + encodeURIComponent(tenant) : '');
  const source = new EventSource(stream);
  // Once on (re)connecting too: a change made between the page's render and the stream's opening has no event of its own.
  source.addEventListener('open', refresh);
  source.addEventListener('change', refresh);
})();`;

/**
 * The tenant chooser: the sandbox's own and the tenants made for test workers, by name and webcode.
 * It opens the chosen tenant's overview (or its fault rules, from there); none while there is one.
 */
function tenantChooser(context: DashboardContext, parts: PageParts): Html | false {
  const made = context.tenants.list();
  if (made.length === 0) return false;
  const main = context.tenants.main.webcode;
  const choices = [
    [main, `Sandbox's own (${main})`],
    ...made.map((view) => [view.webcode, view.name === view.webcode ? view.webcode : `${view.name} (${view.webcode})`]),
  ];
  const target = parts.current === 'faults' ? '/faults' : parts.environment === 'live' ? '/live' : '/';
  return html`<form class="tenant" method="get" action="${target}"><label for="tenant-choice">Tenant</label><select id="tenant-choice" name="${TENANT_PARAM}">${choices.map(
    ([webcode, label]) => html`<option value="${webcode}"${webcode === context.webcode && html` selected`}>${label}</option>`,
  )}</select><button type="submit" class="secondary">Show</button></form>`;
}

/** The chosen tenant as people know it: its name and webcode, or the webcode alone. */
function tenantLabel(context: DashboardContext): string {
  const name = context.tenant === undefined ? undefined : context.tenants.list().find((view) => view.webcode === context.tenant)?.name;
  return name === undefined || name === context.webcode ? `webcode ${context.webcode}` : `${name} (webcode ${context.webcode})`;
}

function layout(context: DashboardContext, parts: PageParts, nonce: string): Html {
  const environment = parts.environment ?? 'test';
  const clock = context.control.clock();
  const navItem = (path: string, label: string, key: PageParts['current']) =>
    html`<li><a href="${href(context, path)}"${parts.current === key && html` aria-current="page"`}>${label}</a></li>`;
  const other = environment === 'test' ? 'live' : 'test';
  const envBar =
    parts.environment !== undefined &&
    html`<div class="env ${environment}" role="region" aria-label="Environment">${environment === 'test' ? 'Test' : 'Live'} data of ${tenantLabel(context)}${link(
      href(context, other === 'test' ? '/' : '/live'),
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
<a class="brand" href="${href(context, '/')}">Payment sandbox</a>
<nav aria-label="Sections"><ul>
${navItem(environment === 'test' ? '/' : '/live', 'Overview', 'overview')}
${navItem(`${base(environment)}/sessions`, 'Sessions', 'sessions')}
${navItem(`${base(environment)}/pos-payments`, 'POS payments', 'pos-payments')}
${navItem(`${base(environment)}/modifications`, 'Modifications', 'modifications')}
${navItem(`${base(environment)}/deliveries`, 'Webhook deliveries', 'deliveries')}
${navItem(`${base(environment)}/requests`, 'Requests', 'requests')}
${navItem('/faults', 'Fault rules', 'faults')}
${navItem('/reference', 'Test-mode reference', 'reference')}
${navItem('/api-reference', 'API reference', 'api-reference')}
</ul></nav>
${tenantChooser(context, parts)}
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

export function render(context: DashboardContext, parts: PageParts, status = 200, liveOnly = false): Response {
  const nonce = cspNonce();
  return htmlResponse(status, liveOnly ? html`\n${parts.body}\n` : layout(context, parts, nonce), undefined, { nonce });
}

export function notFoundPage(context: DashboardContext, what: string): Response {
  return render(
    context,
    {
      title: 'Not found',
      environment: undefined,
      current: 'overview',
      body: html`<h1>Not found</h1><p>${what}</p><p>${link(href(context, '/'), 'Back to the overview')}</p>`,
    },
    404,
  );
}

/** 404 for a `?tenant=` (or a form's tenant) that names no tenant: removed, or never made. The page is the sandbox's own tenant's. */
export function unknownTenant(settings: DashboardSettings, webcode: string): Response {
  const main = tenantContext(settings, null) as DashboardContext;
  return notFoundPage(
    main,
    `No tenant with webcode ${webcode}: it was removed, or this sandbox never made it (tenants made for test workers go when the sandbox stops).`,
  );
}
