/**
 * The overview's Client secret section: which secret the payment pages sign with (masked), and a
 * form that rotates it (the control API's `POST /_sandbox/{environment}/client-secret/rotate`).
 */
import type { Environment } from '../../../core/options.js';
import { type Html, html } from '../html.js';
import { actionForm, type DashboardContext } from './parts.js';

/** A secret as a page may show it: its prefix (`cs_test_`) and its last four characters, never more. */
export function maskedSecret(secret: string): string {
  const prefix = /^[a-z]+_(test|live)_/.exec(secret)?.[0] ?? '';
  return secret.length <= prefix.length + 8 ? `${prefix}…` : `${prefix}…${secret.slice(-4)}`;
}

/** The Client secret section of an environment's overview. */
export function clientSecretSection(context: DashboardContext, environment: Environment): Html {
  const rotate = actionForm(
    context,
    'rotate-client-secret',
    environment === 'test' ? '/' : '/live',
    { hidden: { environment } },
    'Rotate client secret',
    'secondary',
  );
  return html`<h2>Client secret</h2>
<p>Payment pages sign the redirect's <code>data</code> with <code>${maskedSecret(context.clientSecret(environment))}</code>. After a rotation, tokens made before still carry the old secret: decode with both, the new one first, until customers stop coming back with old ones.</p>
${rotate}`;
}
