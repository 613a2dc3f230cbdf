import * as z from 'zod';
import { type OpenEnum, openEnum } from './common.js';

/** Documented terminal statuses (only `boarded` is returned). */
export const TERMINAL_STATUSES = ['boarded'] as const;
/** A terminal status. */
export type TerminalStatus = OpenEnum<(typeof TERMINAL_STATUSES)[number]>;

export const TerminalSchema = z.looseObject({
  poiId: z.string(),
  status: openEnum(TERMINAL_STATUSES),
  name: z.string().nullish(),
  model: z.string().nullish(),
  createdAt: z.string().nullish(),
  updatedAt: z.string().nullish(),
});

export const TerminalListSchema = z.array(TerminalSchema);

export const ListTerminalsParamsSchema = z.strictObject({
  syncFromProvider: z.boolean().optional(),
});

/** A boarded POS terminal. Its timestamps are ISO 8601 with `Z`. */
export type Terminal = z.infer<typeof TerminalSchema>;
/** Parameters of `terminals.list`. */
export type ListTerminalsParams = z.input<typeof ListTerminalsParamsSchema>;
