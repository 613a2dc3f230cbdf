import * as z from 'zod/mini';
import {
  ApiError,
  type ApiErrorDetails,
  AuthenticationError,
  ConflictError,
  ErrorCode,
  IdempotencyConflictError,
  InvalidRequestError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  type RequestContext,
  ResponseValidationError,
  ServerError,
  TerminalBusyError,
  TerminalCommunicationError,
  type ValidationIssue,
} from './errors.js';
import type { Environment } from './options.js';
import { parseRetryAfter } from './retry.js';

/** Where the client's key is meant to work: what a 401, a 403 or a 3xx tells the caller to check. */
export interface KeyScope {
  environment: Environment;
  webcode: string;
  /** The service's address, the only origin the key goes to; a relative `Location` resolves against it. */
  baseUrl?: string | undefined;
}

const FailureEnvelope = z.object({
  success: z.literal(false),
  error: z.looseObject({
    message: z.optional(z.string()),
    code: z.optional(z.number()),
    statusCode: z.optional(z.number()),
    traceId: z.optional(z.string()),
  }),
});

type Failure = z.infer<typeof FailureEnvelope>['error'];

const article = (noun: string) => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`);

/**
 * Messages for the issues a schema does not word itself. zod/mini ships no locale (that is much
 * of its size), and these read as the end of "`field` ...", like the schemas' own messages.
 */
function issueMessage(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input instanceof Date) return 'must be a valid Date';
      return issue.input === undefined ? 'is required' : `must be ${article(issue.expected)}`;
    case 'invalid_value':
      return `must be ${issue.values.length === 1 ? '' : 'one of '}${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'too_small':
      return `must be at least ${issue.minimum}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'too_big':
      return `must be at most ${issue.maximum}${issue.origin === 'string' ? ' characters' : ''}`;
    case 'invalid_format':
      return `must be a valid ${issue.format}`;
    case 'invalid_union': {
      // The branch of the right type says what is wrong; if none, list the types accepted.
      if (issue.input instanceof Date) return 'must be a valid Date';
      if (issue.input === undefined) return 'is required';
      const branches = issue.errors.map((issues) => issues[0]);
      const typed = branches.find((first) => first && !(first.code === 'invalid_type' && first.path.length === 0));
      if (typed && typed.path.length === 0) return typed.message;
      const types = branches.flatMap((first) => (first?.code === 'invalid_type' ? [article(first.expected)] : []));
      // Two branches of one type (an array, or an object holding one) name it once.
      return types.length === branches.length ? `must be ${[...new Set(types)].join(' or ')}` : 'does not match any accepted form';
    }
    case 'unrecognized_keys':
      return 'is not a known field';
    default:
      return 'is invalid';
  }
}

const PARSE_CONTEXT = { error: issueMessage };

/** Checks `data` against `schema`, with the SDK's wording for issues the schema does not word. */
export function parseWith<T>(schema: z.core.$ZodType<T>, data: unknown): z.core.util.SafeParseResult<T> {
  return z.safeParse(schema, data, PARSE_CONTEXT);
}

/** Converts zod issues to the SDK's `{ path, message }` form. */
export function toIssues(error: z.core.$ZodError): ValidationIssue[] {
  return error.issues.flatMap((issue) => issuesAt([], issue));
}

function issuesAt(prefix: PropertyKey[], issue: z.core.$ZodIssue): ValidationIssue[] {
  const at = [...prefix, ...issue.path];
  const path = at.map(String).join('.');
  // One issue per unknown key, each at its own path, so callers can find the field.
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path: path ? `${path}.${key}` : key, message: 'is not a known field' }));
  }
  // A union branch whose type matched (all its issues are inside the value) says what is wrong, where.
  if (issue.code === 'invalid_union') {
    const matched = issue.errors.find((branch) => branch.length > 0 && branch.every((inner) => inner.path.length > 0));
    if (matched) return matched.flatMap((inner) => issuesAt(at, inner));
  }
  return [{ path, message: issue.message }];
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The two documented idempotency conflicts, told apart by their message. */
function idempotencyReason(message: string | undefined): 'body-mismatch' | 'endpoint-mismatch' | undefined {
  if (!message || !/idempotency key/i.test(message)) return undefined;
  if (/different request body/i.test(message)) return 'body-mismatch';
  if (/different endpoint/i.test(message)) return 'endpoint-mismatch';
  return undefined;
}

/** What to check after a 401 or a 403 11008, naming the client's environment and webcode (never the key). */
function keyAdvice(status: number, code: number | undefined, scope: KeyScope | undefined): string {
  if (!scope) return '';
  const { environment, webcode } = scope;
  const routes = environment === 'test' ? '/external/v1/test/...' : '/external/v1/...';
  if (status === 401)
    return `Check the API key: it must be set (option apiKey or PAYMENT_SERVICE_API_KEY), and not revoked or regenerated since.`;
  if (status === 403 && code === ErrorCode.PERMISSION_DENIED)
    return `Check the three things the service ties together: the API key (valid, not revoked, with permission for this operation); its environment (this client calls ${environment}, ${routes}, so it needs a ${environment === 'test' ? 'Test' : 'Live'} key); and the webcode (this client sends "${webcode}", which must be the one the key is bound to).`;
  return '';
}

/** Builds the typed error for a failure: the class follows the status, then the code. */
function toApiError(status: number, failure: Failure | undefined, details: ApiErrorDetails, scope: KeyScope | undefined): ApiError {
  const code = failure?.code;
  const stated = failure?.message ?? `The service answered HTTP ${status} without a failure envelope${details.body ? '' : ' (empty body)'}`;
  const advice = keyAdvice(status, code, scope);
  const message = advice ? `${stated}${/[.!?]$/.test(stated) ? '' : '.'} ${advice}` : stated;
  if (status === 400) return new InvalidRequestError(message, details);
  if (status === 401) return new AuthenticationError(message, details);
  if (status === 403) return new PermissionDeniedError(message, details);
  if (status === 404) return new NotFoundError(message, details);
  if (status === 409) {
    if (code === ErrorCode.TERMINAL_BUSY) return new TerminalBusyError(message, details);
    const reason = idempotencyReason(failure?.message);
    if (reason) return new IdempotencyConflictError(message, { ...details, reason });
    return new ConflictError(message, details);
  }
  if (status === 429) {
    return new RateLimitError(message, { ...details, retryAfterMs: parseRetryAfter(details.headers?.get('retry-after')) });
  }
  if (status === 502 && code === ErrorCode.TERMINAL_COMMUNICATION) return new TerminalCommunicationError(message, details);
  if (status >= 500) return new ServerError(message, details);
  return new ApiError(message, details);
}

/**
 * The error for a 3xx, or for the opaque redirect a browser gives in its place (status 0): the SDK
 * sends with `redirect: 'manual'` and never follows one, so that the API key and the body stay on
 * the service's origin. The message names the status and the target's origin only, never its path
 * or query (a token there would end up in logs); `headers` keeps the `Location`. Not retryable: a
 * resend would be redirected again.
 */
function redirectError(response: Response, context: RequestContext, scope: KeyScope | undefined): ApiError {
  const location = response.headers.get('location');
  let target = 'without a Location';
  if (location !== null) {
    try {
      target = `to ${new URL(location, scope?.baseUrl || response.url || undefined).origin}`;
    } catch {
      target = 'to an unreadable Location';
    }
  }
  const what = response.type === 'opaqueredirect' ? 'a redirect the runtime hides' : `HTTP ${response.status}, a redirect ${target}`;
  return new ApiError(
    `The service answered ${what}, which the SDK does not follow (the API key and the body stay on baseUrl's origin): check baseUrl`,
    // No body: a redirect's body often repeats its full target, query and all, and errors end up in logs.
    { status: response.status, body: '', headers: response.headers, context },
  );
}

/** A 3xx, or a browser's opaque redirect (status 0, no headers). */
function isRedirect(response: Response): boolean {
  return response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400);
}

/**
 * Reads one HTTP exchange: returns the success envelope's `data` or throws the typed error the
 * body and status call for. With `check` (validation on), `data` is what it hands back; when it
 * hands back `undefined`, `data` is parsed with `schema`, which words what is wrong.
 */
export function interpretResponse<T>(
  response: Response,
  text: string,
  schema: z.core.$ZodType<T>,
  check: ((data: unknown) => T | undefined) | undefined,
  context: RequestContext,
  scope?: KeyScope,
): T {
  if (isRedirect(response)) throw redirectError(response, context, scope);
  const body = parseJson(text);
  const envelope = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : undefined;

  if (envelope?.success === false || !response.ok) {
    const failure = parseWith(FailureEnvelope, body);
    const error = failure.success ? failure.data.error : undefined;
    // A 2xx carrying a failure envelope takes its status from the envelope.
    const status = response.ok ? (error?.statusCode ?? 500) : response.status;
    throw toApiError(
      status,
      error,
      {
        status,
        code: error?.code,
        traceId: error?.traceId,
        body: text,
        headers: response.headers,
        context,
      },
      scope,
    );
  }

  if (envelope?.success !== true || !('data' in envelope)) {
    throw new ResponseValidationError('The service answered without the success envelope { success: true, data }', {
      body: text,
      status: response.status,
      context,
    });
  }
  if (!check) return envelope.data as T;
  const checked = check(envelope.data);
  if (checked !== undefined) return checked;
  const parsed = parseWith(schema, envelope.data);
  if (!parsed.success) {
    throw new ResponseValidationError('The service answered data the SDK cannot rely on', {
      body: text,
      status: response.status,
      issues: toIssues(parsed.error).map((issue) => ({ ...issue, path: issue.path ? `data.${issue.path}` : 'data' })),
      context,
    });
  }
  return parsed.data;
}
