import * as z from 'zod';
import { Amount } from './common.js';

/**
 * The payload of the `data` JWT on `urlOk`. The reference names its content (reference, amount,
 * status, `customReference` "and more") but not its claim names: the plausible names are typed,
 * every claim is optional, and unknown claims are kept.
 */
export const RedirectDataSchema = z.looseObject({
  paymentReference: z.string().nullish(),
  sessionId: z.string().nullish(),
  /** Integer cents, or an amount object `{ value, currency }`. */
  amount: z.union([z.number().int(), Amount]).nullish(),
  currency: z.string().nullish(),
  status: z.string().nullish(),
  paymentStatus: z.string().nullish(),
  customReference: z.string().nullish(),
  description: z.string().nullish(),
  webcode: z.string().nullish(),
  iat: z.number().nullish(),
  exp: z.number().nullish(),
  nbf: z.number().nullish(),
});

/** The decoded `data` of a redirect to `urlOk`. */
export type RedirectData = z.infer<typeof RedirectDataSchema>;
