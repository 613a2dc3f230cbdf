/**
 * What a tool call answers: the structured result (as its `outputSchema` says) with the same JSON
 * as text, for clients without structured output; or a tool error (`isError`) carrying the typed
 * error's name, code, message and `traceId`. Merchant text (descriptions, references) stays inside
 * those JSON fields: nothing here writes it into prose addressed to the model. Every answer passes
 * through {@link Redactor}, so that the API key and the client secrets never leave the server.
 */
import { ApiError, PaymentServiceError, RequestValidationError } from '../core/errors.js';

/** Replaces every secret it knows with `[redacted]`. */
export type Redactor = (text: string) => string;

/** A redactor of `secrets` (empty and very short values are ignored: they would match everywhere). */
export function redactor(secrets: readonly (string | undefined)[]): Redactor {
  const known = [...new Set(secrets.filter((secret): secret is string => typeof secret === 'string' && secret.length >= 4))].sort(
    (a, b) => b.length - a.length,
  );
  return (text) => known.reduce((redacted, secret) => redacted.split(secret).join('[redacted]'), text);
}

/** The MCP result of a tool call that succeeded. */
export interface ToolSuccess {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
}

/** The MCP result of a tool call that failed. */
export interface ToolFailure {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError: true;
}

export function success(structured: Record<string, unknown>, redact: Redactor): ToolSuccess {
  const text = redact(JSON.stringify(structured));
  return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> };
}

/** The fields of a tool error: the typed error's, never its body, headers or cause (they may quote the request). */
export function errorFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const fields: Record<string, unknown> = { name: error.name, message: error.message };
  if (error instanceof ApiError) {
    fields.status = error.status;
    fields.code = error.code ?? null;
    fields.traceId = error.traceId ?? null;
  } else {
    const code = (error as { code?: unknown }).code;
    const traceId = (error as { traceId?: unknown }).traceId;
    const status = (error as { status?: unknown }).status;
    if (code !== undefined) fields.code = code;
    if (traceId !== undefined) fields.traceId = traceId;
    if (status !== undefined) fields.status = status;
  }
  if (error instanceof RequestValidationError) fields.issues = error.issues;
  if (error instanceof PaymentServiceError && error.idempotencyKey !== undefined) fields.idempotencyKey = error.idempotencyKey;
  const state = (error as { posPaymentId?: unknown }).posPaymentId;
  if (state !== undefined) fields.posPaymentId = state;
  return fields;
}

export function failure(error: unknown, redact: Redactor): ToolFailure {
  return { content: [{ type: 'text', text: redact(JSON.stringify({ error: errorFields(error) })) }], isError: true };
}
