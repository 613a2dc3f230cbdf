/**
 * Holds recorded HTTP exchanges against an OpenAPI 3.1 document with ajv (JSON Schema 2020-12), a
 * validator we did not write, reading the document the way any client generator would: each
 * exchange is matched to its path template and operation, its parameters, API key and JSON body are
 * checked against the operation's request, and its status, media type and body against the response
 * documented for that status. Nothing here knows the service: only OpenAPI.
 */
import Ajv2020, { type FormatDefinition, type ValidateFunction } from 'ajv/dist/2020.js';

/** One request and the answer it got, as text. Header names in lowercase. */
export interface Exchange {
  method: string;
  /** The full URL requested. */
  url: string;
  requestHeaders: Record<string, string>;
  requestBody: string;
  status: number;
  responseHeaders: Record<string, string>;
  responseBody: string;
}

/** An exchange the document does not allow, with every reason. */
export interface Finding {
  exchange: string;
  problems: string[];
}

/** The operation an exchange was matched to. */
export interface Matched {
  /** `METHOD /path/template` as the document writes it. */
  operation: string;
  status: number;
  /** Whether the request broke the document (then it had to be refused with a 4xx). */
  requestRejected: boolean;
}

export interface CheckResult {
  findings: Finding[];
  matched: Matched[];
  /** Exchanges on no documented path or method, answered 404 or 405 (unknown routes are outside any contract). */
  unmatched: string[];
}

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const DOCUMENT_ID = 'openapi-document';

/**
 * Formats the documents may use, implemented here because `ajv-formats` is not a dependency. A format
 * without an implementation fails the compilation (see {@link OpenApiCheck}), never passes silently.
 */
const FORMATS: Record<string, FormatDefinition<string> | FormatDefinition<number>> = {
  // RFC 3339 `date-time`, with its offset required.
  'date-time': {
    type: 'string',
    validate: (value: string) =>
      /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/.test(
        value,
      ),
  },
  date: {
    type: 'string',
    validate: (value: string) => {
      const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
      if (!match) return false;
      const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
      return date.getUTCMonth() === Number(match[2]) - 1 && date.getUTCDate() === Number(match[3]);
    },
  },
  uri: { type: 'string', validate: (value: string) => /^[a-z][a-z\d+.-]*:/i.test(value) && URL.canParse(value) },
  email: { type: 'string', validate: (value: string) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value) },
  uuid: { type: 'string', validate: (value: string) => /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i.test(value) },
  int32: { type: 'number', validate: (value: number) => Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 },
  int64: { type: 'number', validate: (value: number) => Number.isInteger(value) },
  float: { type: 'number', validate: (value: number) => Number.isFinite(value) },
  double: { type: 'number', validate: (value: number) => Number.isFinite(value) },
};

/** `~` and `/` escaped, as in a JSON pointer. */
const pointerSegment = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/** Every `format` value under `value`'s schemas. */
function formatsIn(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) formatsIn(item, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'format' && typeof inner === 'string') found.add(inner);
      // Examples are data, not schemas: a field named `format` in one is not a keyword.
      else if (key !== 'example' && key !== 'examples') formatsIn(inner, found);
    }
  }
  return found;
}

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  /** The number of templated segments: literal paths are tried first, as OpenAPI says. */
  templated: number;
  pointer: string;
  value: Json;
  pathItem: Json;
  pathPointer: string;
}

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  pointer: string;
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** The parsed JSON of `text`, or `undefined` with `bad` set when it is not JSON. */
function parseJson(text: string): { value?: unknown; bad?: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { bad: (error as Error).message };
  }
}

/**
 * One OpenAPI 3.1 document, compiled once; {@link OpenApiCheck.check} then holds any number of
 * exchanges against it. The document's `servers` paths are the prefixes of its path templates.
 */
export class OpenApiCheck {
  readonly #document: Json;
  readonly #ajv: Ajv2020;
  /** Parameters are text on the wire: this one coerces `"20"` to `20` where the schema wants a number. */
  readonly #params: Ajv2020;
  readonly #operations: Operation[];
  readonly #prefixes: string[];
  readonly #compiled = new Map<string, ValidateFunction>();

  constructor(document: unknown) {
    this.#document = document as Json;
    if (!String(this.#document.openapi ?? '').startsWith('3.1'))
      throw new Error(`Not an OpenAPI 3.1 document: openapi ${this.#document.openapi}`);
    const unknown = [...formatsIn(this.#document.paths), ...formatsIn(this.#document.components)].filter((name) => !(name in FORMATS));
    if (unknown.length > 0) throw new Error(`The document uses formats this check does not implement: ${unknown.join(', ')}`);
    const make = (coerceTypes: boolean) => {
      const ajv = new Ajv2020({ allErrors: true, coerceTypes, formats: FORMATS, logger: false, strict: false });
      // The OpenAPI 3.1 keywords of a Schema Object beside JSON Schema's: annotations, no assertion.
      ajv.addVocabulary(['discriminator', 'xml', 'externalDocs', 'example']);
      ajv.addSchema(this.#document, DOCUMENT_ID);
      return ajv;
    };
    this.#ajv = make(false);
    this.#params = make(true);
    this.#prefixes = this.#serverPrefixes();
    this.#operations = this.#collectOperations();
  }

  /** `METHOD /template` of every operation in the document. */
  operations(): string[] {
    return this.#operations.map((operation) => `${operation.method.toUpperCase()} ${operation.template}`);
  }

  /** `METHOD /template` of the operation a request names, without checking anything; `undefined` for none. */
  operationOf(method: string, url: string): string | undefined {
    const found = this.#match(method, new URL(url).pathname);
    return found && `${found.operation.method.toUpperCase()} ${found.operation.template}`;
  }

  /** The names of the document's `webhooks`. */
  webhooks(): string[] {
    return Object.keys((this.#document.webhooks as Json | undefined) ?? {});
  }

  /** What is wrong with a request the API sends (a webhook delivery) as the document's webhook `name`. */
  checkWebhook(name: string, exchange: Exchange): string[] {
    const pointer = `#/webhooks/${pointerSegment(name)}`;
    const item = (this.#document.webhooks as Record<string, Json> | undefined)?.[name];
    if (!item) return [`no webhook ${name} in the document (it has ${this.webhooks().join(', ')})`];
    const { value, pointer: at } = this.#deref(item, pointer);
    const method = exchange.method.toLowerCase();
    const operation = value[method] as Json | undefined;
    if (!operation) return [`webhook ${name} is not sent with ${exchange.method}`];
    return this.#bodyProblems(operation, `${at}/${method}`, exchange);
  }

  /** Every exchange matched and checked; `findings` lists those the document does not allow. */
  check(exchanges: readonly Exchange[]): CheckResult {
    const result: CheckResult = { findings: [], matched: [], unmatched: [] };
    for (const exchange of exchanges) {
      const url = new URL(exchange.url);
      const label = `${exchange.method} ${url.pathname}${url.search} → ${exchange.status}`;
      const found = this.#match(exchange.method, url.pathname);
      if (!found) {
        if (exchange.status === 404 || exchange.status === 405) result.unmatched.push(label);
        else result.findings.push({ exchange: label, problems: ['no operation of the document matches this method and path'] });
        continue;
      }
      const { operation, params } = found;
      const requestProblems = this.#requestProblems(operation, params, url, exchange);
      const problems: string[] = [];
      if (requestProblems.length > 0 && exchange.status < 400) {
        problems.push(
          `answered ${exchange.status} to a request the document rejects:`,
          ...requestProblems.map((problem) => `  ${problem}`),
        );
      }
      problems.push(...this.#responseProblems(operation, exchange));
      result.matched.push({
        operation: `${operation.method.toUpperCase()} ${operation.template}`,
        status: exchange.status,
        requestRejected: requestProblems.length > 0,
      });
      if (problems.length > 0) result.findings.push({ exchange: label, problems });
    }
    return result;
  }

  #serverPrefixes(): string[] {
    const servers = (this.#document.servers as Json[] | undefined) ?? [];
    const prefixes = servers.map((server) => {
      let url = String(server.url ?? '/');
      for (const [name, variable] of Object.entries((server.variables as Record<string, Json> | undefined) ?? {})) {
        url = url.replaceAll(`{${name}}`, String(variable.default ?? ''));
      }
      return new URL(url, 'http://relative.invalid').pathname.replace(/\/$/, '');
    });
    // The longest prefix first; none at all is the document's default server `/`.
    return [...new Set(prefixes.length > 0 ? prefixes : [''])].sort((a, b) => b.length - a.length);
  }

  #collectOperations(): Operation[] {
    const operations: Operation[] = [];
    for (const [template, item] of Object.entries((this.#document.paths as Record<string, Json> | undefined) ?? {})) {
      const pathPointer = `#/paths/${pointerSegment(template)}`;
      const { value: pathItem } = this.#deref(item, pathPointer);
      const source = template
        .split('/')
        .map((segment) => segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '([^/]+)'))
        .join('/');
      for (const method of METHODS) {
        const value = pathItem[method] as Json | undefined;
        if (!value) continue;
        operations.push({
          method,
          template,
          pattern: new RegExp(`^${source}$`),
          templated: (template.match(/\{/g) ?? []).length,
          pointer: `${pathPointer}/${method}`,
          value,
          pathItem,
          pathPointer,
        });
      }
    }
    return operations.sort((a, b) => a.templated - b.templated);
  }

  /** The object a `$ref` (within this document) names, with its pointer; other values as they are. */
  #deref(value: unknown, pointer: string): { value: Json; pointer: string } {
    let current = value as Json;
    let at = pointer;
    for (let hops = 0; typeof current?.$ref === 'string'; hops++) {
      const ref = current.$ref as string;
      if (!ref.startsWith('#/') || hops > 20) throw new Error(`Unsupported $ref ${ref} at ${at}`);
      at = ref;
      current = ref
        .slice(2)
        .split('/')
        .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
        .reduce<unknown>((node, segment) => (node as Json | undefined)?.[segment], this.#document) as Json;
      if (current === undefined) throw new Error(`Dangling $ref ${ref}`);
    }
    return { value: current, pointer: at };
  }

  #match(method: string, pathname: string): { operation: Operation; params: Record<string, string> } | undefined {
    for (const prefix of this.#prefixes) {
      if (!pathname.startsWith(prefix)) continue;
      const rest = pathname.slice(prefix.length) || '/';
      for (const operation of this.#operations) {
        if (operation.method !== method.toLowerCase()) continue;
        const match = operation.pattern.exec(rest);
        if (!match) continue;
        const names = [...operation.template.matchAll(/\{([^}]+)\}/g)].map((name) => name[1] ?? '');
        const params: Record<string, string> = {};
        names.forEach((name, index) => {
          params[name] = decodeURIComponent(match[index + 1] ?? '');
        });
        return { operation, params };
      }
    }
    return undefined;
  }

  #validator(ajv: Ajv2020, pointer: string): ValidateFunction {
    const key = `${ajv === this.#params ? 'p' : 'b'}${pointer}`;
    let validate = this.#compiled.get(key);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.#compiled.set(key, validate);
    }
    return validate;
  }

  /** ajv's errors as `where: message` lines, `where` prefixed with `place`. */
  #errors(validate: ValidateFunction, place: string): string[] {
    return (validate.errors ?? []).map((error) => {
      const extra = error.keyword === 'additionalProperties' ? ` (${String(error.params.additionalProperty)})` : '';
      return `${place}${error.instancePath ? ` ${error.instancePath}` : ''}: ${error.message}${extra}`;
    });
  }

  #parameters(operation: Operation): Parameter[] {
    const byKey = new Map<string, Parameter>();
    const add = (list: unknown, pointer: string) => {
      ((list as unknown[] | undefined) ?? []).forEach((entry, index) => {
        const { value, pointer: at } = this.#deref(entry, `${pointer}/parameters/${index}`);
        const name = String(value.name);
        const place = String(value.in);
        // Header names are case-insensitive.
        const key = `${place}:${place === 'header' ? name.toLowerCase() : name}`;
        byKey.set(key, { name, in: place, required: value.required === true, pointer: `${at}/schema` });
      });
    };
    add(operation.pathItem.parameters, operation.pathPointer);
    add(operation.value.parameters, operation.pointer);
    return [...byKey.values()];
  }

  #requestProblems(operation: Operation, params: Record<string, string>, url: URL, exchange: Exchange): string[] {
    const problems: string[] = [];
    for (const parameter of this.#parameters(operation)) {
      const raw =
        parameter.in === 'path'
          ? params[parameter.name]
          : parameter.in === 'query'
            ? (url.searchParams.get(parameter.name) ?? undefined)
            : parameter.in === 'header'
              ? exchange.requestHeaders[parameter.name.toLowerCase()]
              : undefined;
      if (raw === undefined) {
        if (parameter.required) problems.push(`${parameter.in} parameter ${parameter.name} is required`);
        continue;
      }
      const validate = this.#validator(this.#params, parameter.pointer);
      if (!validate(raw)) problems.push(...this.#errors(validate, `${parameter.in} parameter ${parameter.name}`));
    }
    problems.push(...this.#securityProblems(operation, url, exchange));
    return [...problems, ...this.#bodyProblems(operation.value, operation.pointer, exchange)];
  }

  /** The request body of `exchange` against the operation's `requestBody`. */
  #bodyProblems(operation: Json, operationPointer: string, exchange: Exchange): string[] {
    const body = operation.requestBody;
    if (body === undefined) return [];
    const { value: requestBody, pointer } = this.#deref(body, `${operationPointer}/requestBody`);
    if (exchange.requestBody === '') return requestBody.required === true ? ['request body is required'] : [];
    const type = mediaType(exchange.requestHeaders['content-type']);
    const content = (requestBody.content as Record<string, Json> | undefined) ?? {};
    if (!(type in content)) return [`request media type ${type || '(none)'} is not one of ${Object.keys(content).join(', ')}`];
    if (!type.endsWith('json') || content[type]?.schema === undefined) return [];
    const parsed = parseJson(exchange.requestBody);
    if (parsed.bad) return [`request body is not JSON: ${parsed.bad}`];
    const validate = this.#validator(this.#ajv, `${pointer}/content/${pointerSegment(type)}/schema`);
    return validate(parsed.value) ? [] : this.#errors(validate, 'request body');
  }

  /** Whether one of the operation's (or the document's) security requirements is met, for `apiKey` schemes. */
  #securityProblems(operation: Operation, url: URL, exchange: Exchange): string[] {
    const requirements = (operation.value.security ?? this.#document.security) as Record<string, unknown>[] | undefined;
    if (!requirements || requirements.length === 0) return [];
    const schemes = ((this.#document.components as Json | undefined)?.securitySchemes ?? {}) as Record<string, Json>;
    const present = (name: string): boolean => {
      const { value: scheme } = this.#deref(schemes[name], `#/components/securitySchemes/${pointerSegment(name)}`);
      if (scheme?.type !== 'apiKey') return true;
      const key = String(scheme.name);
      if (scheme.in === 'header') return exchange.requestHeaders[key.toLowerCase()] !== undefined;
      if (scheme.in === 'query') return url.searchParams.has(key);
      return (exchange.requestHeaders.cookie ?? '').split(';').some((part) => part.trim().startsWith(`${key}=`));
    };
    if (requirements.some((requirement) => Object.keys(requirement).every(present))) return [];
    return [
      `no security requirement met (${requirements.map((requirement) => Object.keys(requirement).join(' + ') || '{}').join(' or ')})`,
    ];
  }

  #responseProblems(operation: Operation, exchange: Exchange): string[] {
    const responses = (operation.value.responses as Record<string, unknown> | undefined) ?? {};
    const status = String(exchange.status);
    const key = [status, `${status[0]}XX`, 'default'].find((candidate) => candidate in responses);
    if (key === undefined) return [`status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`];
    const { value: response, pointer } = this.#deref(responses[key], `${operation.pointer}/responses/${key}`);
    const problems: string[] = [];
    for (const [name, header] of Object.entries((response.headers as Record<string, unknown> | undefined) ?? {})) {
      const { value } = this.#deref(header, `${pointer}/headers/${pointerSegment(name)}`);
      if (value.required === true && exchange.responseHeaders[name.toLowerCase()] === undefined)
        problems.push(`response header ${name} is required`);
    }
    const content = response.content as Record<string, Json> | undefined;
    if (!content) {
      if (exchange.responseBody !== '')
        problems.push(`response ${key} is documented without a body, got ${exchange.responseBody.length} characters`);
      return problems;
    }
    const type = mediaType(exchange.responseHeaders['content-type']);
    const documented = type in content ? type : Object.keys(content).find((name) => name === '*/*' || name === `${type.split('/')[0]}/*`);
    if (documented === undefined)
      return [...problems, `response media type ${type || '(none)'} is not one of ${Object.keys(content).join(', ')}`];
    if (!type.endsWith('json') || content[documented]?.schema === undefined) return problems;
    const parsed = parseJson(exchange.responseBody);
    if (parsed.bad) return [...problems, `response body is not JSON: ${parsed.bad}`];
    const validate = this.#validator(this.#ajv, `${pointer}/content/${pointerSegment(documented)}/schema`);
    if (!validate(parsed.value)) problems.push(...this.#errors(validate, 'response body'));
    return problems;
  }
}

/** The findings as lines a failing test prints. */
export function describeFindings(findings: readonly Finding[]): string {
  return findings.map((finding) => [finding.exchange, ...finding.problems.map((problem) => `  ${problem}`)].join('\n')).join('\n');
}
