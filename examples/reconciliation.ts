/**
 * End-of-day reconciliation: pages through completed sessions and all modifications with
 * `for await` and writes one CSV (a file given as argument, or stdout).
 *
 *   npm run build && node examples/reconciliation.ts report.csv
 */
import { writeFileSync } from 'node:fs';
import type { PaymentClient } from 'payment-service-sdk';
import { connect, isMain } from './setup.ts';

const COLUMNS = ['type', 'reference', 'paymentReference', 'amount', 'currency', 'status', 'date', 'note'] as const;

/** A CSV field: quoted when it holds a comma, a quote or a line break, with quotes doubled. */
function field(value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export async function reconcile(client: PaymentClient): Promise<string> {
  const rows: unknown[][] = [COLUMNS as unknown as unknown[]];
  for await (const session of client.sessions.list({ status: 'completed', take: 100 })) {
    rows.push([
      'payment',
      session.sessionId,
      session.paymentReference,
      session.amount.value,
      session.amount.currency,
      session.paymentStatus,
      session.completedAt,
      session.description,
    ]);
  }
  for await (const modification of client.modifications.list({ take: 100 })) {
    rows.push([
      modification.operationType,
      modification.operationReference,
      modification.paymentReference,
      modification.amount?.value,
      modification.amount?.currency,
      modification.status,
      modification.resolvedAt ?? modification.createdAt,
      modification.reason,
    ]);
  }
  return `${rows.map((row) => row.map(field).join(',')).join('\r\n')}\r\n`;
}

if (isMain(import.meta.url)) {
  const setup = await connect();
  const csv = await reconcile(setup.client);
  const [file] = process.argv.slice(2);
  if (file) writeFileSync(file, csv);
  else process.stdout.write(csv);
  await setup.close();
}
