import * as z from 'zod/mini';
import { type OpenEnum, openEnum } from './common.js';

/** Documented terminal statuses (only `boarded` is returned). */
export const TERMINAL_STATUSES = ['boarded'] as const;
/** A terminal status. */
export type TerminalStatus = OpenEnum<(typeof TERMINAL_STATUSES)[number]>;

export const TerminalSchema = z.looseObject({
  poiId: z.string(),
  status: openEnum(TERMINAL_STATUSES),
  name: z.nullish(z.string()),
  model: z.nullish(z.string()),
  createdAt: z.nullish(z.string()),
  updatedAt: z.nullish(z.string()),
});

export const TerminalListSchema = z.array(TerminalSchema);

export const ListTerminalsParamsSchema = z.strictObject({
  syncFromProvider: z.optional(z.boolean()),
});

/** A boarded POS terminal. Its timestamps are ISO 8601 with `Z`. */
export type Terminal = z.infer<typeof TerminalSchema>;
/** Parameters of `terminals.list`. */
export type ListTerminalsParams = z.input<typeof ListTerminalsParamsSchema>;
