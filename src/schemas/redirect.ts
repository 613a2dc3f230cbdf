import * as z from 'zod/mini';
import { Amount, integer } from './common.js';

/**
 * The payload of the `data` JWT on `urlOk`. The reference names its content (reference, amount,
 * status, `customReference` "and more") but not its claim names: the plausible names are typed,
 * every claim is optional, and unknown claims are kept.
 */
export const RedirectDataSchema = z.looseObject({
  paymentReference: z.nullish(z.string()),
  sessionId: z.nullish(z.string()),
  /** Integer cents, or an amount object `{ value, currency }`. */
  amount: z.nullish(z.union([integer, Amount])),
  currency: z.nullish(z.string()),
  status: z.nullish(z.string()),
  paymentStatus: z.nullish(z.string()),
  customReference: z.nullish(z.string()),
  description: z.nullish(z.string()),
  webcode: z.nullish(z.string()),
  iat: z.nullish(z.number()),
  exp: z.nullish(z.number()),
  nbf: z.nullish(z.number()),
});

/** The decoded `data` of a redirect to `urlOk`. */
export type RedirectData = z.infer<typeof RedirectDataSchema>;
