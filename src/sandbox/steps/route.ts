/** Where a request goes by its path: the API, the control API, the dashboard, the payment page, or 404. */
import type { Environment } from '../../core/options.js';
import type { SandboxAnswer } from '../answer.js';
import type { ApiRoute } from '../api/routes.js';
import { SANDBOX_CODES, ServiceFailure } from '../responses.js';
import type { Next } from './chain.js';
import { apiPath, CONTROL_PREFIX, type Located } from './request.js';

/** An API request: its environment and the path after `/external/v1[/test]`. */
export interface ApiRequest extends Located {
  environment: Environment;
  path: string;
  /** The body's bytes when the request log read them first (the request's own stream is then spent). */
  received?: Uint8Array | undefined;
  /** Set by the request log: what the steps below it learn, noted so that its entry works nothing out twice. */
  notes?: RequestNotes | undefined;
}

/** What the steps learn of an API request on its way: its endpoint, then its body. */
export interface RequestNotes {
  /** The endpoint the path named and its path parameters, decoded. */
  route?: ApiRoute;
  params?: readonly string[];
  /** A POST's body as the body step decoded it, and the JSON object it parsed from it. */
  text?: string;
  body?: Record<string, unknown>;
  /** The `data` the operation answered, when a fault rule then changed the answer (a 500 or a reset after the commit). */
  made?: unknown;
}

/** A page handler: its answer, or `undefined` for a path that is not its own. */
export type PageHandler = (context: Located) => Promise<SandboxAnswer | undefined>;

/** The sub-chains a request may take. */
export interface Areas {
  api: Next<ApiRequest>;
  control: Next<Located>;
  /** Asked in order; the first that answers wins. */
  pages: readonly PageHandler[];
}

export function router(areas: Areas): Next<Located> {
  return async (context) => {
    const api = apiPath(context.url);
    if (api) return areas.api({ ...context, ...api });
    if (context.url.pathname.startsWith(CONTROL_PREFIX)) return areas.control(context);
    for (const page of areas.pages) {
      const response = await page(context);
      if (response) return response;
    }
    throw new ServiceFailure(404, SANDBOX_CODES.notFound, `Nothing at ${context.url.pathname}`);
  };
}
