/**
 * Where the tenant's fault rules strike an API call: a latency (or a slow terminal) first, then
 * an error, a busy or offline terminal or a reset
 * before the operation runs (on the way in, before its body is read), then an error, a reset or a
 * cut body once it has committed (on the way out, changing the answer `next` gives). Every answer
 * a rule changed names it in `X-Sandbox-Fault`; a reset has no answer at all. A call that names or
 * made a record leaves a fault entry on that record's timeline.
 */

import { headersOf, JsonAnswer, type SandboxAnswer } from '../answer.js';
import { DECLARED_LENGTH, FAULT_HEADER, type FaultRuleState, referencesIn, STRUCK_RULE } from '../faults.js';
import { readText } from '../http/body.js';
import type { SandboxRequest } from '../http/incoming.js';
import { failureBody, jsonResponse, SANDBOX_CODES, ServiceFailure, unknownKey } from '../responses.js';
import type { Caller } from '../tenants.js';
import type { Step } from './chain.js';
import type { ApiCall } from './endpoint.js';

export function faults<C extends ApiCall & Caller>(traceId: () => string, maxBodyBytes: number): Step<C> {
  return async (context, next) => {
    const { environment, route, tenant } = context;
    const rules = tenant.faults;
    const struck: FaultRuleState[] = [];
    const slow = rules.strike(environment, route.template, 'latency');
    if (slow) {
      struck.push(slow);
      await sleep(rules.latencyMs(slow.effect), tenant.removed);
    }
    const before = rules.strike(environment, route.template, 'before');
    if (before) {
      struck.push(before);
      // The operation never runs: the records the call names are in its path and body.
      note(context, struck, [...context.params, ...referencesIn(await bodyOf(context.request, maxBodyBytes, context.received))]);
      return withFault(injected(before, traceId), before);
    }
    let answer: SandboxAnswer;
    try {
      answer = await next(context);
    } catch (error) {
      note(context, struck, context.params);
      throw error;
    }
    const after = rules.strike(environment, route.template, 'after-commit');
    if (after) struck.push(after);
    if (struck.length === 0) return answer;
    const data = await answerData(answer);
    // The request log names what the call made, though the client never sees it.
    if (after && context.notes) context.notes.made = data;
    note(context, struck, [...context.params, ...referencesIn(data)]);
    if (after) return withFault(after.effect.type === 'truncate' ? await truncated(answer) : injected(after, traceId), after);
    return slow ? withFault(answer, slow) : answer;
  };
}

/**
 * Files a fault entry per rule that struck under the records the call names or made; none for a
 * call that names no record (a listing, a create stopped before it ran). Recording never changes
 * the answer the rule gave: a failure to record is reported as the tenant's own.
 */
function note(context: ApiCall & Caller, struck: readonly FaultRuleState[], references: readonly string[]): void {
  const { tenant, environment, route } = context;
  if (struck.length === 0 || references.length === 0) return;
  try {
    tenant.store.transaction(() => {
      for (const rule of struck)
        tenant.store.faultEntries.add({
          at: tenant.clock.now(),
          environment,
          rule: rule.id,
          effect: structuredClone(rule.effect),
          route: route.template,
          event: null,
          references: [...new Set(references)],
          deliveries: [],
        });
    });
  } catch (error) {
    tenant.report(error);
  }
}

/** A POST's JSON body, read only to find the records it names; `undefined` when there is none to read. */
async function bodyOf(request: SandboxRequest, limit: number, received: Uint8Array | undefined): Promise<unknown> {
  if (request.method !== 'POST') return undefined;
  try {
    return JSON.parse(await readText(request, limit, received));
  } catch {
    return undefined;
  }
}

/** The `data` of a successful answer (where `data.sessionId`, `data.refundReference`, ... name what it made); `undefined` for another. */
async function answerData(answer: SandboxAnswer): Promise<unknown> {
  if (!answer.ok || answer.type === 'error') return undefined;
  if (answer instanceof JsonAnswer && answer.data !== undefined) return answer.data;
  try {
    const text = answer instanceof JsonAnswer ? answer.bodyText : await answer.clone().text();
    return (JSON.parse(text) as { data?: unknown }).data;
  } catch {
    return undefined;
  }
}

/**
 * The answer of an error, terminal or reset rule: the failure envelope with its status (a terminal
 * answers as a busy or offline one does), or no answer (`Response.error()`).
 */
function injected(rule: FaultRuleState, traceId: () => string): SandboxAnswer {
  const { effect } = rule;
  if (effect.type === 'terminal') {
    const failure =
      effect.outcome === 'busy'
        ? new ServiceFailure(409, 13005, 'Terminal busy: another payment is in progress')
        : new ServiceFailure(502, 13004, 'Error in POS payment response: Reject');
    return jsonResponse(failure.status, failureBody(failure, traceId()));
  }
  if (effect.type !== 'error') return Response.error();
  const failure = new ServiceFailure(effect.status, SANDBOX_CODES.injectedFault, `Injected by sandbox fault rule ${rule.id}`);
  const retryAfter = effect.retryAfter === undefined ? undefined : { 'retry-after': String(effect.retryAfter) };
  return jsonResponse(effect.status, failureBody(failure, traceId()), retryAfter);
}

/** The first half of the answer's body, under the `Content-Length` of the whole. */
async function truncated(answer: SandboxAnswer): Promise<Response> {
  const bytes = new Uint8Array(await answer.arrayBuffer());
  const cut = new Response(bytes.slice(0, Math.floor(bytes.byteLength / 2)), { status: answer.status, headers: headersOf(answer) });
  cut.headers.set('content-length', String(bytes.byteLength));
  return Object.assign(cut, { [DECLARED_LENGTH]: bytes.byteLength });
}

/** The answer with the rule named in its headers; a reset stays without an answer. */
function withFault(answer: SandboxAnswer, rule: FaultRuleState): SandboxAnswer {
  if (answer.type === 'error') return Object.assign(answer, { [STRUCK_RULE]: rule.id });
  if (answer instanceof JsonAnswer) return answer.withHeader(FAULT_HEADER, rule.id);
  const headers = new Headers(answer.headers);
  headers.set(FAULT_HEADER, rule.id);
  const marked = new Response(answer.body, { status: answer.status, headers });
  const declared = (answer as { [DECLARED_LENGTH]?: number })[DECLARED_LENGTH];
  return declared === undefined ? marked : Object.assign(marked, { [DECLARED_LENGTH]: declared });
}

/** Waits `ms`; a removal of the tenant ends the wait at once, answered 403 as for an unknown key. */
function sleep(ms: number, removed: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer);
      reject(unknownKey());
    };
    const timer = setTimeout(() => {
      removed.removeEventListener('abort', stop);
      resolve();
    }, ms);
    if (removed.aborted) stop();
    else removed.addEventListener('abort', stop, { once: true });
  });
}
