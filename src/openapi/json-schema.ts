/**
 * The SDK's Zod schemas as JSON Schema 2020-12 (OpenAPI 3.1's dialect), with zod 4's own
 * `z.toJSONSchema`: requests as the SDK sends them (`io: 'output'`), answers as the service sends
 * them (`io: 'input'`, what the response schemas read). What refinements and transforms check or
 * produce comes from {@link jsonSchemaHints}; a transform without a hint stops the build.
 */
import * as z from 'zod/mini';
import {
  Amount,
  AmountParams,
  amountValue,
  integer,
  jsonSchemaHints,
  ListMeta,
  ModificationAmountParams,
  timestamp,
} from '../schemas/common.js';

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

/** What the reference says of the shared pieces, for readers of the document (the SDK's bundle does not carry it). */
const DESCRIPTIONS = new Map<z.core.$ZodType, string>([
  [timestamp, 'Record timestamp, `YYYY-MM-DD HH:MM:SS` in the reference; any string is accepted.'],
  [amountValue, 'Amount in cents, a positive integer.'],
  [integer, 'An integer.'],
  [AmountParams, '`value` in integer cents, `currency` one of EUR, GBP, USD (ISO 4217, uppercase).'],
  [ModificationAmountParams, '`value` in integer cents, `currency` one of EUR, GBP, USD (ISO 4217, uppercase).'],
  [Amount, '`value` in integer cents and its ISO 4217 `currency`.'],
  [
    ListMeta,
    'Cursor pagination: while `hasMore` is true, pass `cursor` as the `cursor` of the next request; `cursor` is null on the last page; `total` counts every matching item.',
  ],
]);

/** The hint of `schema`, or of the schema it was made from by `.check()` (a clone keeps its parent). */
function hintOf(schema: z.core.$ZodType): { [keyword: string]: unknown } | undefined {
  for (let current: z.core.$ZodType | undefined = schema; current; current = current._zod.parent) {
    const hint = jsonSchemaHints.get(current);
    if (hint) return hint;
  }
  return undefined;
}

/**
 * `schema` as JSON Schema, without `$schema` (the document declares the dialect once). A part of it
 * that `names` names (the root aside) becomes a `$ref` to `#/components/schemas/<name>`, where the
 * document keeps it once.
 */
export function jsonSchema(schema: z.core.$ZodType, direction: Direction, names?: ReadonlyMap<z.core.$ZodType, string>): JsonObject {
  const { $schema: _dialect, ...converted } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: direction === 'request' ? 'output' : 'input',
    override: ({ zodSchema, jsonSchema }) => {
      const name = zodSchema === schema ? undefined : names?.get(zodSchema);
      if (name !== undefined) {
        for (const keyword of Object.keys(jsonSchema)) delete jsonSchema[keyword];
        jsonSchema.$ref = `#/components/schemas/${name}`;
        return;
      }
      Object.assign(jsonSchema, hintOf(zodSchema));
      const description = DESCRIPTIONS.get(zodSchema);
      if (description && jsonSchema.description === undefined) jsonSchema.description = description;
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
