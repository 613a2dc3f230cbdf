/**
 * Next.js (App Router), as `app/checkout/done/page.tsx`: the `urlOk` page, a server component. The
 * shop made the session with `urlOk: 'https://shop.example/checkout/done?order=order-1042'`; the
 * customer arrives with `&data=<token>` appended. The page decodes the token with the client secret
 * and compares it with the order (amount, currency, reference): a manipulated URL cannot be forged
 * without the secret. The secret is read when a customer arrives, never when the module loads:
 * `next build` imports every page without the runtime's environment.
 *
 * The redirect is for the customer's eyes only: the order is marked paid by the confirmed webhook
 * (`app/api/webhooks/route.ts`), since the customer may close the browser before arriving here.
 */
import { RedirectDataError, RedirectMismatchError, verifyRedirect } from 'payment-service-sdk';
import { findOrder } from '../../../lib/orders';

/** What Next.js passes a page: its search parameters, as a promise since Next.js 15. */
interface PageProps {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export default async function CheckoutDone({ searchParams }: PageProps) {
  const query = await searchParams;
  const order = await findOrder(first(query.order));
  if (!order) return <p>Unknown order.</p>;
  const clientSecret = process.env.PAYMENT_SERVICE_CLIENT_SECRET;
  if (!clientSecret) throw new Error('Set PAYMENT_SERVICE_CLIENT_SECRET'); // a deployment mistake: Next.js shows its error page
  try {
    const data = await verifyRedirect(new URLSearchParams({ data: first(query.data) ?? '' }), clientSecret, {
      customReference: order.id,
      amount: order.totalCents,
      currency: order.currency,
    });
    return (
      <main>
        <h1>Thank you</h1>
        <p>
          Order {order.id} is paid (payment {data.paymentReference}). We will email you when it ships.
        </p>
      </main>
    );
  } catch (error) {
    if (!(error instanceof RedirectDataError || error instanceof RedirectMismatchError)) throw error;
    // Not proof of payment: say nothing either way; the webhook decides.
    return (
      <main>
        <h1>We could not confirm your payment here</h1>
        <p>If you paid, order {order.id} is confirmed by email within minutes.</p>
      </main>
    );
  }
}
