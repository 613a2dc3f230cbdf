import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// The README's first command after install: it must keep working. `npm test` builds dist/ first.
it('npm run demo walks a whole payment against the sandbox', async () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const environment = { ...process.env };
  for (const name of ['PAYMENT_SERVICE_API_KEY', 'PAYMENT_SERVICE_WEBCODE', 'PAYMENT_SERVICE_BASE_URL', 'PAYMENT_SERVICE_ENVIRONMENT']) {
    delete environment[name];
  }
  const child = spawn(process.execPath, ['examples/quickstart.ts'], { cwd: root, env: environment });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(output).toContain('Against the local sandbox at http://127.0.0.1:');
  expect(output).toMatch(/Verified the redirect data with the client secret\n {3}payment \S+-PXTT-\d+, 4990 cents, AUTHORISED/);
  expect(output).toContain('Received the AUTHORISATION webhook');
  expect(output).toContain('confirmed against the API: session completed');
  expect(output).toContain('Received the REFUND webhook');
  expect(output).toMatch(/POS charge ending in 77\n {3}\S+: failed/);
  expect(output).toContain('TerminalBusyError 13005');
  expect(output).toContain('TerminalCommunicationError 13004');
  expect(output).toMatch(/recovered without a second charge: \S+ success \(recovered: true\)/);
  expect(output).toMatch(/Paged through completed sessions with for await\n {3}1 sessions, 49\.90 EUR/);
  expect(output).toContain('Done.');
  expect(code).toBe(0);
}, 30_000);
