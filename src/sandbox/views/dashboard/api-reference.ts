/**
 * The dashboard's API reference: the service's OpenAPI document (the one `/openapi.json` serves)
 * rendered on the server, endpoint by endpoint: parameters, body fields with their rules, answers
 * with their codes, examples, and the webhooks. Plain HTML, no script and no asset from elsewhere.
 */
import type { JsonObject } from '../../../openapi/json-schema.js';
import { CONTROL_OPENAPI_PATH, OPENAPI_PATH } from '../../openapi.js';
import { type Html, html } from '../html.js';
import { type Cell, type PageParts, table } from './parts.js';

/** Where the page is. */
export const API_REFERENCE_PATH = '/api-reference';

type Schema = JsonObject & {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  items?: Schema;
  enum?: unknown[];
};

/** Text with `code` spans, as the document's descriptions write them. */
function prose(text: unknown): Html {
  if (typeof text !== 'string') return html``;
  return html`${text.split('`').map((part, index) => (index % 2 === 1 ? html`<code>${part}</code>` : part))}`;
}

/** Follows a `$ref` within the document. */
function resolve(document: JsonObject, node: unknown): Schema {
  let current = node as Schema;
  for (let hops = 0; current?.$ref && hops < 8; hops++) {
    current = current.$ref
      .slice(2)
      .split('/')
      .reduce<unknown>((value, key) => (value as JsonObject | undefined)?.[key], document) as Schema;
  }
  return current ?? {};
}

/** A schema in a few words: its type and its rules. */
function summary(document: JsonObject, node: unknown): string {
  const schema = resolve(document, node);
  const open = schema.anyOf?.find((branch) => Array.isArray(branch.enum));
  if (open?.enum && schema.anyOf?.length === 2 && schema.anyOf.some((branch) => !branch.enum)) {
    return `${String(open.type)}; known values ${open.enum.join(', ')} (open set)`;
  }
  if (schema.anyOf) {
    const branches = schema.anyOf.filter((branch) => branch.type !== 'null').map((branch) => summary(document, branch));
    const nullable = schema.anyOf.some((branch) => branch.type === 'null');
    return `${[...new Set(branches)].join(' or ')}${nullable ? ', or null' : ''}`;
  }
  const types = Array.isArray(schema.type) ? schema.type.filter((type) => type !== 'null') : [schema.type ?? 'any'];
  const nullable = Array.isArray(schema.type) && schema.type.includes('null');
  const rules: string[] = [];
  if (schema.const !== undefined) rules.push(`always ${JSON.stringify(schema.const)}`);
  if (schema.enum) rules.push(`one of ${schema.enum.join(', ')}`);
  if (schema.minLength !== undefined) rules.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) rules.push(`at most ${schema.maxLength} characters`);
  if (schema.exclusiveMinimum !== undefined) rules.push(`greater than ${schema.exclusiveMinimum}`);
  if (schema.minimum !== undefined) rules.push(`from ${schema.minimum}`);
  if (schema.maximum !== undefined && schema.maximum !== Number.MAX_SAFE_INTEGER) rules.push(`up to ${schema.maximum}`);
  if (schema.format) rules.push(String(schema.format));
  if (schema.pattern) rules.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) rules.push(`default ${JSON.stringify(schema.default)}`);
  if (schema.type === 'array' && schema.items) return `array of ${summary(document, schema.items)}`;
  return [`${types.join(' or ')}${nullable ? ' or null' : ''}`, ...rules].join(', ');
}

/** Every field of an object schema, nested objects flattened as `amount.value`. */
function fieldRows(document: JsonObject, node: unknown, prefix = ''): Cell[][] {
  const schema = resolve(document, node);
  return Object.entries(schema.properties ?? {}).flatMap(([name, property]) => {
    const inner = resolve(document, property);
    const row: Cell[] = [
      html`<code>${prefix}${name}</code>`,
      schema.required?.includes(name) ? 'yes' : 'no',
      summary(document, inner),
      prose(inner.description),
    ];
    return inner.type === 'object' && inner.properties ? [row, ...fieldRows(document, inner, `${prefix}${name}.`)] : [row];
  });
}

/** A path that may break after each `/` on a narrow screen. */
function breakable(path: string): Html {
  return html`${path.split('/').map((part, index) => (index === 0 ? part : html`/<wbr>${part}`))}`;
}

function example(label: string, value: unknown): Html {
  return html`<h4>${label}</h4><pre>${JSON.stringify(value, null, 2)}</pre>`;
}

type Operation = JsonObject & {
  operationId: string;
  summary: string;
  description?: string;
  parameters?: Schema[];
  requestBody?: { content: { 'application/json': { schema: Schema; example?: unknown } } };
  responses: Record<string, JsonObject>;
};

function operationSection(document: JsonObject, method: string, path: string, operation: Operation): Html {
  const id = operation.operationId;
  const parameters = (operation.parameters ?? []).map((parameter) => resolve(document, parameter));
  const parameterRows = parameters.map((parameter): Cell[] => [
    html`<code>${String(parameter.name)}</code>`,
    String(parameter.in),
    parameter.required ? 'yes' : 'no',
    summary(document, parameter.schema),
    prose(parameter.description),
  ]);
  const body = operation.requestBody?.content['application/json'];
  const responseRows = Object.entries(operation.responses).map(([status, response]): Cell[] => [
    status,
    prose(resolve(document, response).description),
  ]);
  const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'));
  const successExample = (success?.[1] as { content?: { 'application/json'?: { example?: unknown } } } | undefined)?.content?.[
    'application/json'
  ]?.example;
  return html`<section aria-labelledby="${id}">
<h3 id="${id}"><code>${method.toUpperCase()} ${breakable(path)}</code></h3>
<p>${operation.summary.replace(/ \(Live\)$/, '')}. Test: <code>${method.toUpperCase()} ${breakable(path.replace('/external/v1/', '/external/v1/test/'))}</code></p>
${operation.description && html`<p>${prose(operation.description.split('\n\n')[0])}</p>`}
${parameterRows.length > 0 && table(`Parameters of ${id}`, ['Name', 'In', 'Required', 'Type and rules', 'Notes'], parameterRows, '')}
${body && table(`Body of ${id}`, ['Field', 'Required', 'Type and rules', 'Notes'], fieldRows(document, body.schema), '')}
${table(`Answers of ${id}`, ['Status', 'Meaning and codes'], responseRows, '')}
${body?.example !== undefined && example('Example request body', body.example)}
${successExample !== undefined && example('Example answer', successExample)}
</section>`;
}

/** The page, from the service's OpenAPI document. */
export function apiReferencePage(document: JsonObject): PageParts {
  const paths = document.paths as Record<string, Record<string, Operation>>;
  const live = Object.entries(paths).filter(([path]) => !path.startsWith('/external/v1/test/'));
  const tags = (document.tags as { name: string; description: string }[]).map((tag) => ({
    ...tag,
    operations: live.flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => (operation.tags as string[]).includes(tag.name))
        .map(([method, operation]) => ({ method, path, operation })),
    ),
  }));
  const webhooks = Object.entries(document.webhooks as Record<string, { post: Operation }>);
  const info = document.info as { version: string };
  return {
    title: 'API reference',
    environment: undefined,
    current: 'api-reference',
    body: html`<h1>API reference</h1>
<p>The service's endpoints as this sandbox answers them, rendered from its OpenAPI 3.1 document (version ${info.version}), which is generated from the SDK's Zod schemas. Machine-readable: <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a> (the API) and <a href="${CONTROL_OPENAPI_PATH}">${CONTROL_OPENAPI_PATH}</a> (the sandbox's control API).</p>
<p>Every request carries <code>X-API-KEY</code> and <code>webcode</code> (in the body of a POST, in the query of a GET). Live paths start with <code>/external/v1/</code>, Test paths with <code>/external/v1/test/</code>. Writes take an optional <code>Idempotency-Key</code> header. Answers: <code>{ success: true, data }</code> or <code>{ success: false, error: { message, code, statusCode, traceId } }</code>.</p>
<nav aria-label="Endpoints"><ul>${tags.map(
      (tag) =>
        html`<li>${tag.name}<ul>${tag.operations.map(
          ({ method, path, operation }) =>
            html`<li><a href="#${operation.operationId}">${method.toUpperCase()} ${breakable(path.replace('/external/v1', ''))}</a></li>`,
        )}</ul></li>`,
    )}<li><a href="#webhooks">Webhooks</a></li></ul></nav>
${tags.map(
  (tag) => html`<h2>${tag.name}</h2><p>${prose(tag.description)}</p>
${tag.operations.map(({ method, path, operation }) => operationSection(document, method, path, operation))}`,
)}
<h2 id="webhooks">Webhooks</h2>
${webhooks.map(([code, { post }]) => {
  const body = post.requestBody?.content['application/json'];
  return html`<section aria-labelledby="webhook-${code}">
<h3 id="webhook-${code}"><code>${code}</code></h3>
<p>${post.summary}. ${prose(post.description)}</p>
${body && table(`Body of the ${code} webhook`, ['Field', 'Required', 'Type and rules', 'Notes'], fieldRows(document, body.schema), '')}
${body?.example !== undefined && example('Example body', body.example)}
</section>`;
})}`,
  };
}
