/** The dashboard's test-mode reference: the cardholder names, terminals, POS amount endings and test cards. */
import { POS_TEST_ENDINGS, TEST_CARDHOLDER_NAMES, TEST_CARDS, TEST_SUCCESS_CARDHOLDER, TEST_TERMINALS } from '../../../testing/index.js';
import { html } from '../html.js';
import { type Cell, type PageParts, table } from './parts.js';

export function referencePage(): PageParts {
  const holders: Cell[][] = Object.entries(TEST_CARDHOLDER_NAMES).map(([name, outcome]) => [
    html`<code>${name}</code>`,
    outcome.result === 'error' ? 'processor error' : 'declined',
    outcome.description,
  ]);
  holders.push([html`any other name, for example <code>${TEST_SUCCESS_CARDHOLDER}</code>`, 'paid', 'authorised']);
  const terminals = TEST_TERMINALS.map((terminal) => [
    html`<code>${terminal.poiId}</code>`,
    terminal.name,
    terminal.model,
    terminal.online ? 'online' : 'offline: 502 / 13004',
  ]);
  const endings = [
    ['any other ending', '200, status success'],
    [`…${POS_TEST_ENDINGS.failed}`, '200, status failed (declined)'],
    [`…${POS_TEST_ENDINGS.timeout}`, '200, status timeout; completes later with a webhook'],
    [`…${POS_TEST_ENDINGS.busy}`, '409 / 13005, terminal busy'],
  ];
  const cards = Object.values(TEST_CARDS).map((card) => [
    card.brand,
    html`<code>${card.number}</code>`,
    card.cvc,
    `${card.expiryMonth}/${card.expiryYear}`,
  ]);
  return {
    title: 'Test-mode reference',
    environment: undefined,
    current: 'reference',
    body: html`<h1>Test-mode reference</h1>
<h2>Cardholder names on the payment page</h2>${table('Cardholder names and their outcomes', ['Name', 'Outcome', 'Meaning'], holders, '')}
<h2>Terminals</h2>${table('Test terminals', ['poiId', 'Name', 'Model', 'State'], terminals, '')}
<h2>POS amount endings</h2>${table('POS outcomes by the last two digits of the amount in cents', ['Amount ends in', 'Answer'], endings, '')}
<h2>Test cards</h2>${table('Luhn-valid test cards', ['Brand', 'Number', 'CVC', 'Expiry'], cards, '')}`,
  };
}
