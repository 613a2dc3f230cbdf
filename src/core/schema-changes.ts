import type * as z from 'zod/mini';

/**
 * Where `schema` would hand back something other than the value it accepted: transforms, pipes,
 * defaults, catches, coercion, readonly (frozen output) and overwrite checks such as `trim`, each
 * as `path: what`. A schema type this walk does not know is reported too, so that a new kind of
 * schema is looked at rather than assumed harmless. An empty list means that valid data can be
 * used as it is, without the copy a parse builds.
 */
export function changesMadeBy(schema: z.core.$ZodType, path = ''): string[] {
  const def = schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
  const here = path || '(root)';
  const changes = ((def.checks ?? []) as z.core.$ZodCheck[])
    .filter((check) => check._zod.def.check === 'overwrite')
    .map(() => `${here}: overwrite check`);
  if (def.coerce === true) changes.push(`${here}: coercion`);
  const inner = (child: unknown, suffix: string) => changesMadeBy(child as z.core.$ZodType, `${path}${suffix}`);
  switch (def.type) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'null':
    case 'unknown':
    case 'literal':
    case 'enum':
      return changes;
    case 'object':
      return [
        ...changes,
        ...Object.entries(def.shape as Record<string, unknown>).flatMap(([key, child]) => inner(child, path ? `.${key}` : key)),
        ...(def.catchall ? inner(def.catchall, '.*') : []),
      ];
    case 'array':
      return [...changes, ...inner(def.element, '[]')];
    case 'optional':
    case 'nullable':
      return [...changes, ...inner(def.innerType, '')];
    case 'union':
      return [...changes, ...(def.options as unknown[]).flatMap((option) => inner(option, ''))];
    case 'record':
      return [...changes, ...inner(def.keyType, '{key}'), ...inner(def.valueType, '{}')];
    default:
      return [...changes, `${here}: ${def.type}`];
  }
}
