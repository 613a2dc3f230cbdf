/**
 * The shop's orders, in memory here: in an app, your database. The checkout page and the redirect
 * page read an order by the id the shop put in `urlOk` (`/checkout/done?order=order-1042`).
 */

/** An order of the shop, with the session made for it. */
export interface Order {
  id: string;
  totalCents: number;
  currency: string;
  sessionId?: string;
  /** Set once, by the confirmed AUTHORISATION webhook. */
  paymentReference?: string;
}

const orders = new Map<string, Order>();

/** Stores (or replaces) an order. */
export async function saveOrder(order: Order): Promise<void> {
  orders.set(order.id, order);
}

/** The order with this id, if any. */
export async function findOrder(id: string | undefined): Promise<Order | undefined> {
  return id === undefined ? undefined : orders.get(id);
}

/** Marks an order paid, once: a later call for the same order changes nothing. */
export async function markPaid(id: string | null | undefined, paymentReference: string): Promise<void> {
  const order = id ? orders.get(id) : undefined;
  if (order && order.paymentReference === undefined) order.paymentReference = paymentReference;
}
