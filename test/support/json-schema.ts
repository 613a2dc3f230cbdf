/**
 * A JSON Schema (draft 2020-12) check of the keywords `z.toJSONSchema` and the fixture schema use,
 * enough to hold the shipped fixture schema against the CLI's own check in tests. An unknown
 * keyword fails loudly, so the schema cannot grow past what this checks without the test noticing.
 */
type Schema = boolean | { [keyword: string]: unknown };

const KNOWN = new Set([
  '$schema',
  '$ref',
  '$defs',
  'title',
  'description',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'enum',
  'const',
  'pattern',
  'minLength',
  'maxLength',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
]);

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Whether `value` is valid against `schema`, whose `$ref`s point into `root`'s `$defs`. */
export function validates(schema: Schema, value: unknown, root: Schema = schema): boolean {
  if (typeof schema === 'boolean') return schema;
  for (const keyword of Object.keys(schema)) if (!KNOWN.has(keyword)) throw new Error(`keyword ${keyword} is not checked here`);
  const s = schema as Record<string, unknown>;
  const sub = (inner: unknown, item: unknown) => validates(inner as Schema, item, root);
  if (typeof s.$ref === 'string') {
    const name = s.$ref.replace(/^#\/\$defs\//, '');
    if (!sub((root as Record<string, Record<string, unknown>>).$defs?.[name], value)) return false;
  }
  if (s.type !== undefined) {
    const actual = typeOf(value);
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((type) => type === actual || (type === 'number' && actual === 'integer'))) return false;
  }
  if (s.enum && !(s.enum as unknown[]).includes(value)) return false;
  if ('const' in s && s.const !== value) return false;
  if (typeof value === 'string') {
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) return false;
    if (typeof s.minLength === 'number' && [...value].length < s.minLength) return false;
    if (typeof s.maxLength === 'number' && [...value].length > s.maxLength) return false;
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) return false;
    if (typeof s.maximum === 'number' && value > s.maximum) return false;
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) return false;
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) return false;
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) return false;
    if (s.items !== undefined && !value.every((item) => sub(s.items, item))) return false;
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    const properties = (s.properties ?? {}) as Record<string, unknown>;
    if (Array.isArray(s.required) && !s.required.every((key) => Object.hasOwn(object, key))) return false;
    for (const [key, item] of Object.entries(object)) {
      if (Object.hasOwn(properties, key)) {
        if (!sub(properties[key], item)) return false;
      } else if (s.additionalProperties !== undefined && !sub(s.additionalProperties, item)) return false;
    }
  }
  if (Array.isArray(s.anyOf) && !s.anyOf.some((inner) => sub(inner, value))) return false;
  if (Array.isArray(s.oneOf) && s.oneOf.filter((inner) => sub(inner, value)).length !== 1) return false;
  if (Array.isArray(s.allOf) && !s.allOf.every((inner) => sub(inner, value))) return false;
  if (s.not !== undefined && sub(s.not, value)) return false;
  return true;
}
