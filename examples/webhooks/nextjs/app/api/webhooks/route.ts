/**
 * Next.js (App Router), as `app/api/webhooks/route.ts`: the handler is fetch-standard, so it is the
 * route's `POST` as it is. A route file exports only route handlers, so the handler lives in
 * `lib/payments.ts`, where it is made on the first delivery: Next.js imports this module at build
 * time, when PAYMENT_SERVICE_* and DATABASE_URL may be unset.
 */
import { webhook } from '../../../lib/payments';

export const POST = (request: Request): Promise<Response> => webhook()(request);
