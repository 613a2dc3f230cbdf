/**
 * One control route as one value: its method and path, the Zod schemas of its path parameters,
 * query and body, the schema of what it answers, its words for the document, and the function that
 * runs it. The router matches and validates with it (router.ts), the control document is made from
 * it (openapi.ts), and the `Sandbox` object's typed methods call its `run` (invoke), so that the
 * three faces of a control action cannot drift apart. Modelled on `@hono/zod-openapi`'s `createRoute`.
 */
import * as z from 'zod/mini';
import type { Environment } from '../../core/options.js';
import { invalid, type ServiceFailure } from '../responses.js';
import type { Tenant, Tenants } from '../tenants.js';
import type { SandboxControl } from './control.js';

/** The groups of the control document. */
export type ControlTag = 'Records' | 'Terminals' | 'Requests' | 'Webhooks' | 'Clock' | 'Faults' | 'Tenants' | 'Sandbox';

/** What a control action acts on: the caller's tenant (its controls, fault rules...), and the sandbox's tenants. */
export interface ControlContext {
  /** The path's environment; `test` for the routes of no environment. */
  environment: Environment;
  /** The tenant of the caller's key (the typed methods: the sandbox's own). */
  tenant: Tenant;
  /** The tenant's controls, giving out links on the origin the request came by. */
  control: SandboxControl;
  tenants: Tenants;
}

type Schema = z.core.$ZodType;
/** The parsed value of an optional schema: `{}` where a route declares none. */
type Parsed<S extends Schema | undefined> = S extends Schema ? z.output<S> : Record<string, never>;

/** What a route's `run` gets: its path parameters, query and body, each as its schema parsed it. */
export interface RouteInput<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined> {
  params: Parsed<P>;
  query: Parsed<Q>;
  body: Parsed<B>;
}

/** A control route as declared. */
export interface ControlRouteSpec<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
  A extends Schema,
  R,
> {
  method: 'get' | 'post' | 'put' | 'delete';
  /** After `/_sandbox/`; one starting with `{environment}/` is a route of `test/` and of `live/`, each needing a key of its environment. */
  path: string;
  tag: ControlTag;
  summary: string;
  description?: string | undefined;
  /** The success status; default 200. */
  status?: 200 | 201 | undefined;
  /** Only the sandbox's own keys may call it (the tenants' routes); else any key of the tenant (of the path's environment). */
  ownerOnly?: boolean | undefined;
  /** An object schema of the `{name}` segments of `path`; a value it refuses answers 404 naming the record (its message). */
  params?: P;
  /** An object schema of the query; a value it refuses answers 400 with its message. */
  query?: Q;
  /** An object schema of the JSON body of a POST or PUT; a value it refuses answers 400 with its message. */
  body?: B;
  /** The schema of `data` in the success envelope. */
  answer: A;
  /** Runs the action (bivariant, so that routes of any schemas share one table). */
  run(context: ControlContext, input: RouteInput<P, Q, B>): R;
}

/** A declared route with what the router matches it by. */
export interface ControlRoute<
  P extends Schema | undefined = Schema | undefined,
  Q extends Schema | undefined = Schema | undefined,
  B extends Schema | undefined = Schema | undefined,
  A extends Schema = Schema,
  R = unknown,
> extends ControlRouteSpec<P, Q, B, A, R> {
  /** Whether the path starts with `{environment}/`. */
  scoped: boolean;
  /** Matches the path after `/_sandbox/` and the environment; its groups are the parameters, in order. */
  pattern: RegExp;
  /** The names of the path's parameters, in order. */
  paramNames: readonly string[];
}

const ENVIRONMENT = '{environment}/';

/**
 * Declares a control route. `run` must answer what `answer` describes (checked by the compiler:
 * its result is assignable to the schema's input type), so that the document tells the truth.
 */
export function controlRoute<
  A extends Schema,
  R extends Answer<A>,
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
>(spec: ControlRouteSpec<P, Q, B, A, R>): ControlRoute<P, Q, B, A, R> {
  const scoped = spec.path.startsWith(ENVIRONMENT);
  const rest = scoped ? spec.path.slice(ENVIRONMENT.length) : spec.path;
  const paramNames: string[] = [];
  const source = rest
    .split('/')
    .map((segment) => {
      const name = /^\{(\w+)\}$/.exec(segment)?.[1];
      if (name === undefined) return segment.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
      paramNames.push(name);
      return '([^/]+)';
    })
    .join('/');
  return { ...spec, scoped, pattern: new RegExp(`^${source}$`), paramNames };
}

/** What `run` may answer for `answer`: its input type, or a promise of it. */
type Answer<A extends Schema> = z.input<A> | Promise<z.input<A>>;

/**
 * `value` parsed by `schema` (`{}` where a route declares none), or the failure `refuse` makes of
 * its first issue: its message and the field it is about (`''` for the whole value).
 */
export function parseInput(
  schema: Schema | undefined,
  value: unknown,
  refuse: (message: string, field: string) => ServiceFailure,
): unknown {
  if (schema === undefined) return {};
  const result = z.safeParse(schema, value);
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  throw refuse(issue?.message ?? 'The request is not valid', issue?.path.join('.') ?? '');
}

/** 400 with the message, which names the field it is about (Zod's own messages do not: they get it in front). */
export function refusedField(message: string, field: string): ServiceFailure {
  return invalid(field === '' || message.includes(field) ? message : `${field}: ${message}`);
}

/**
 * Runs a route's action on `context`: the typed methods' way in. Their parameters and query are of
 * the schemas' parsed types already; the body is checked by the route's schema as over HTTP, so a
 * bad value is refused with the same 400 either way.
 */
export function invoke<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined, A extends Schema, R>(
  route: ControlRoute<P, Q, B, A, R>,
  context: ControlContext,
  input: Partial<RouteInput<P, Q, B>> = {},
): R {
  const body = parseInput(route.body, input.body ?? {}, refusedField);
  return route.run(context, { params: {}, query: {}, ...input, body } as RouteInput<P, Q, B>);
}
