/**
 * The SDK's Zod schemas as JSON Schema 2020-12 (OpenAPI 3.1's dialect), with zod 4's own
 * `z.toJSONSchema`: requests as the SDK sends them (`io: 'output'`), answers as the service sends
 * them (`io: 'input'`, what the response schemas read). What refinements and transforms check or
 * produce comes from {@link jsonSchemaHints}; a transform without a hint stops the build.
 */
import * as z from 'zod/mini';
import { jsonSchemaHints } from '../schemas/common.js';

/** A JSON Schema (or any part of the document). */
export type JsonObject = { [keyword: string]: unknown };

/** Which side of a schema: what the SDK sends, or what the service answers. */
export type Direction = 'request' | 'response';

/**
 * `{ x-open-enum: [...] }` becomes `anyOf: [the known values, any string]`: the values are
 * documented, and an unknown one is still valid (the reference leaves these sets open).
 */
function openEnums(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openEnums);
  if (node === null || typeof node !== 'object') return node;
  const walked = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, openEnums(value)]));
  const known = walked['x-open-enum'];
  if (!Array.isArray(known)) return walked;
  delete walked['x-open-enum'];
  delete walked.type;
  return {
    ...walked,
    anyOf: [{ type: 'string', enum: known }, { type: 'string' }],
    description: [walked.description, `Known values: ${known.join(', ')}. The set is open: other strings may come.`]
      .filter(Boolean)
      .join(' '),
  };
}

/** The hint of `schema`, or of the schema it was made from by `.check()` (a clone keeps its parent). */
function hintOf(schema: z.core.$ZodType): { [keyword: string]: unknown } | undefined {
  for (let current: z.core.$ZodType | undefined = schema; current; current = current._zod.parent) {
    const hint = jsonSchemaHints.get(current);
    if (hint) return hint;
  }
  return undefined;
}

/** `schema` as JSON Schema, without `$schema` (the document declares the dialect once). */
export function jsonSchema(schema: z.core.$ZodType, direction: Direction): JsonObject {
  const { $schema: _dialect, ...converted } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: direction === 'request' ? 'output' : 'input',
    override: ({ zodSchema, jsonSchema }) => {
      Object.assign(jsonSchema, hintOf(zodSchema));
    },
    unrepresentable: ({ zodSchema, path }) => {
      const hint = hintOf(zodSchema);
      if (hint) return hint;
      throw new Error(
        `No JSON Schema for the ${zodSchema._zod.def.type} at ${path.join('.') || 'the root'}: give it a hint (src/schemas/common.ts)`,
      );
    },
  }) as JsonObject;
  return openEnums(converted) as JsonObject;
}
