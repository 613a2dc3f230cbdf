/** Webhook bodies as the service documents them, shared by the webhook tests. */

/** A REFUND event for payment `SHOP1-PXTT-42`. */
export const REFUND_WEBHOOK = {
  event_code: 'REFUND',
  data: {
    amount: 500,
    currency: 'EUR',
    paymentReference: 'SHOP1-PXTT-42',
    refundReason: 'damaged',
    refundReference: 'SHOP1-RFXT-7',
    status: 'success',
    customReference: 'order-42',
    paymentSource: 'external_api',
  },
};
