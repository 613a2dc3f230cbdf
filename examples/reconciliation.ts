/**
 * End-of-day reconciliation: pages through completed sessions and through all modifications with
 * `for await` (100 per request, fetched only as the loop needs them) and writes one CSV, one row
 * per payment and per modification, to a file given as argument or to stdout.
 *
 *   npm run build && node examples/reconciliation.ts [report.csv] [--from 2026-01-01] [--to 2026-01-02]
 *
 * With PAYMENT_SERVICE_API_KEY, PAYMENT_SERVICE_WEBCODE, PAYMENT_SERVICE_BASE_URL (and
 * PAYMENT_SERVICE_ENVIRONMENT) set, it reports on the real service; otherwise on a local sandbox
 * that it first fills with two paid sessions and a refund.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { PaymentClient } from 'payment-service-sdk';
import { connect, isMain } from './setup.ts';

export const CSV_COLUMNS = ['type', 'reference', 'paymentReference', 'amount', 'currency', 'status', 'date', 'description'] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes doubled.
 * Text starting with `=`, `+`, `-`, `@` or a tab is prefixed with `'`, so that a spreadsheet shows a
 * customer-written description instead of running it as a formula.
 */
export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * A record timestamp as an instant. The service sends `YYYY-MM-DD HH:MM:SS` and does not document
 * its time zone: UTC is assumed here.
 */
function instant(timestamp: string | null | undefined): Date | undefined {
  if (!timestamp) return undefined;
  const date = new Date(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(timestamp) ? `${timestamp.replace(' ', 'T')}Z` : timestamp);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

export interface ReconcileOptions {
  /** Only records on or after this instant (sessions by completion, modifications by resolution or creation). */
  from?: Date;
  /** Only records before this instant. */
  to?: Date;
}

/**
 * The CSV (CRLF line ends, a header row) of the completed sessions and the modifications in
 * `[from, to)`. The listings take no date filter and have no documented order, so every page is read
 * and the range is applied here.
 */
export async function reconcile(client: PaymentClient, { from, to }: ReconcileOptions = {}): Promise<string> {
  const inRange = (timestamp: string | null | undefined) => {
    const at = instant(timestamp);
    if (!from && !to) return true;
    return at !== undefined && (!from || at >= from) && (!to || at < to);
  };
  const rows: (string | number | null | undefined)[][] = [[...CSV_COLUMNS]];

  for await (const session of client.sessions.list({ status: 'completed', take: 100 })) {
    const date = session.completedAt ?? session.createdAt;
    if (!inRange(date)) continue;
    rows.push([
      'payment',
      session.sessionId,
      session.paymentReference,
      session.amount.value,
      session.amount.currency,
      session.paymentStatus ?? session.status,
      date,
      session.description,
    ]);
  }

  for await (const modification of client.modifications.list({ take: 100 })) {
    const date = modification.resolvedAt ?? modification.createdAt ?? modification.requestedAt;
    if (!inRange(date)) continue;
    rows.push([
      modification.operationType,
      modification.operationReference,
      modification.paymentReference,
      modification.amount?.value, // absent for a cancel or an extend
      modification.amount?.currency,
      modification.status,
      date,
      modification.reason,
    ]);
  }

  return rows.map((row) => `${row.map(csvField).join(',')}\r\n`).join('');
}

if (isMain(import.meta.url)) {
  const { values, positionals } = parseArgs({ options: { from: { type: 'string' }, to: { type: 'string' } }, allowPositionals: true });
  const setup = await connect({ modificationResolveMs: 0 });
  try {
    if (setup.sandbox) {
      // An empty sandbox makes a dull report: pay two sessions and refund part of one.
      const { TEST_CARDS, TEST_SUCCESS_CARDHOLDER } = await import('payment-service-sdk/testing');
      const card = TEST_CARDS.visa;
      const form = { cardNumber: card.number, expiryMonth: card.expiryMonth, expiryYear: card.expiryYear, cvc: card.cvc, action: 'pay' };
      for (const [cents, description] of [
        [2599, 'Two coffees, one "large"'],
        [1250, 'A croissant'],
      ] as const) {
        const session = await setup.client.sessions.create({
          amount: { value: cents, currency: 'EUR' },
          urlOk: 'https://shop.example/paid',
          urlKo: 'https://shop.example/failed',
          description,
        });
        await fetch(session.paymentUrl, { method: 'POST', body: new URLSearchParams({ ...form, holderName: TEST_SUCCESS_CARDHOLDER }) });
      }
      const paymentReference = setup.sandbox.records.sessions()[0]?.paymentReference ?? '';
      await setup.client.modifications.refund({ paymentReference, amount: { value: 1000, currency: 'EUR' }, reason: 'Cold, sorry' });
    }
    const csv = await reconcile(setup.client, {
      ...(values.from ? { from: new Date(values.from) } : {}),
      ...(values.to ? { to: new Date(values.to) } : {}),
    });
    const [file] = positionals;
    if (file) {
      await writeFile(file, csv);
      console.error(`wrote ${csv.split('\r\n').length - 2} rows to ${file}`);
    } else {
      process.stdout.write(csv);
    }
  } finally {
    await setup.close();
  }
}
