/**
 * The sandbox's request path, in the order the steps run. Each step may answer early; those that
 * wrap `next` also act on the way out (`respond` turns any failure into the envelope, `faults`
 * changes an answer after its commit).
 *
 *   respond → host check → /openapi.json → due work → router ─┬─ API:     request log → endpoint → tenant → faults → body → commit(idempotency, operation)
 *                                                              ├─ control: /_sandbox/openapi.json | endpoint → tenant → run (the declared routes)
 *                                                              └─ pages:   dashboard, payment page (404 after them)
 */
import { controlOpenApi } from './control/openapi.js';
import { controlEndpoint, runControl } from './control/router.js';
import { body } from './steps/body.js';
import { chain, type Next } from './steps/chain.js';
import { commit } from './steps/commit.js';
import { dueWork } from './steps/due.js';
import { endpoint } from './steps/endpoint.js';
import { faults } from './steps/faults.js';
import { hostCheck, type OwnHosts } from './steps/host.js';
import { idempotency } from './steps/idempotency.js';
import { serviceOpenApi } from './steps/openapi.js';
import { operation } from './steps/operation.js';
import type { Incoming, Located } from './steps/request.js';
import { requestLog } from './steps/request-log.js';
import { type FailureAnswers, respond } from './steps/respond.js';
import { type ApiRequest, type PageHandler, router } from './steps/route.js';
import { tenant } from './steps/tenant.js';
import type { Tenants } from './tenants.js';

/** What the steps are built from. */
export interface PipelineParts {
  tenants: Tenants;
  hosts: OwnHosts;
  failures: FailureAnswers;
  /** Runs the work due by now, of every tenant. */
  runDue: () => void;
  /** The origin of the links an answer carries, given the request's URL (built from its `Host`): the public URL, or that URL's origin. */
  origin: (url: URL) => string;
  maxBodyBytes: number;
  idempotencyTtlMs: number;
  /** The dashboard and the payment page, asked in this order. */
  pages: readonly PageHandler[];
}

export function pipeline(parts: PipelineParts): Next<Incoming> {
  const api = chain<ApiRequest>()
    .use(requestLog(parts.tenants, parts.failures, parts.maxBodyBytes))
    .use(endpoint())
    .use(tenant(parts.tenants))
    .use(faults(parts.failures.traceId, parts.maxBodyBytes))
    .use(body(parts.maxBodyBytes))
    .end(commit(idempotency(parts.idempotencyTtlMs), operation(parts.origin)));

  const control = chain<Located>()
    .use(controlOpenApi(parts.origin))
    .use(controlEndpoint())
    .use(tenant(parts.tenants))
    .end(runControl(parts.maxBodyBytes, parts.origin, parts.tenants));

  return chain<Incoming>()
    .use(respond(parts.failures))
    .use(hostCheck(parts.hosts))
    .use(serviceOpenApi(parts.origin))
    .use(dueWork(parts.runDue))
    .end(router({ api, control, pages: parts.pages }));
}
