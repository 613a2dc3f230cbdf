// Checks the packed tarball as users get it: attw, publint, then a clean install used from ESM,
// CJS, the CLI, and strict TypeScript consumers (node16 and bundler resolution).
// Run with `npm run check:package` (it builds first).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const work = mkdtempSync(join(tmpdir(), 'payment-sdk-pack-'));
const results = [];

function run(label, command, args, options = {}) {
  const started = Date.now();
  try {
    execFileSync(command, args, { stdio: 'pipe', timeout: 180_000, encoding: 'utf8', ...options });
    results.push([label, 'ok', Date.now() - started]);
  } catch (error) {
    results.push([label, 'FAILED', Date.now() - started]);
    process.stderr.write(`\n--- ${label} failed ---\n${error.stdout ?? ''}${error.stderr ?? ''}${error.message}\n`);
  }
}

function write(path, content) {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
}

const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8' }));
const tarball = join(work, packed.filename);
console.log(`packed ${packed.filename}: ${packed.entryCount} files, ${(packed.size / 1024).toFixed(1)} kB`);

run('attw --profile node16', bin('attw'), [tarball, '--profile', 'node16'], { cwd: root });
run('publint --strict', bin('publint'), ['--strict'], { cwd: root });

// A clean consumer: the tarball and its dependencies from the registry, nothing else.
const consumer = join(work, 'consumer');
write(join(consumer, 'package.json'), { name: 'consumer', private: true, type: 'module' });
run('npm install <tarball>', 'npm', ['install', '--no-audit', '--no-fund', tarball], { cwd: consumer });

const scenario = `
  const sandbox = createSandbox({ posDelayMs: 0 });
  const { baseUrl } = await sandbox.listen();
  const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl });
  const terminals = await client.terminals.list();
  const payment = await client.pos.createPayment({ poiId: TEST_TERMINALS[0].poiId, amount: { value: posTestAmount('success'), currency: 'EUR' } });
  await sandbox.close();
  if (terminals.length !== 3 || payment.status !== 'success' || typeof decodeRedirectData !== 'function') throw new Error('unexpected results');
`;
write(
  join(consumer, 'esm.mjs'),
  `import { PaymentClient, decodeRedirectData } from 'payment-service-sdk';
import { createSandbox } from 'payment-service-sdk/sandbox';
import { TEST_TERMINALS, posTestAmount } from 'payment-service-sdk/testing';
${scenario}`,
);
write(
  join(consumer, 'cjs.cjs'),
  `const { PaymentClient, decodeRedirectData } = require('payment-service-sdk');
const { createSandbox } = require('payment-service-sdk/sandbox');
const { TEST_TERMINALS, posTestAmount } = require('payment-service-sdk/testing');
(async () => {${scenario}})().catch((error) => { console.error(error); process.exit(1); });`,
);
run('ESM import', process.execPath, ['esm.mjs'], { cwd: consumer });
run('CJS require', process.execPath, ['cjs.cjs'], { cwd: consumer });

// The installed CLI: one JSON line on stdout, then a clean exit on SIGTERM.
await new Promise((done) => {
  const started = Date.now();
  const child = spawn(join(consumer, 'node_modules', '.bin', 'payment-service-sdk'), ['sandbox', '--port', '0'], { cwd: consumer });
  let output = '';
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  child.stdout.on('data', (chunk) => {
    output += chunk;
    if (output.includes('\n')) child.kill('SIGTERM');
  });
  child.on('close', (code) => {
    clearTimeout(timer);
    let ok = code === 0;
    try {
      ok &&= JSON.parse(output.split('\n')[0]).baseUrl.startsWith('http://127.0.0.1:');
    } catch {
      ok = false;
    }
    results.push(['CLI sandbox', ok ? 'ok' : 'FAILED', Date.now() - started]);
    done();
  });
});

// Strict TypeScript consumers, compiled with the repository's compiler.
const usage = `import { PaymentClient, type PaymentSession, type PosPayment, ErrorCode, TerminalBusyError } from 'payment-service-sdk';
import { createSandbox, type Sandbox } from 'payment-service-sdk/sandbox';
import { posTestAmount, TEST_CARDS } from 'payment-service-sdk/testing';

export async function typed(sandbox: Sandbox): Promise<PaymentSession | PosPayment> {
  const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl: sandbox.baseUrl });
  const code: 13005 = ErrorCode.TERMINAL_BUSY;
  try {
    return await client.pos.createPayment({ poiId: 'V400m-TEST-000001', amount: { value: posTestAmount('busy'), currency: 'EUR' } });
  } catch (error) {
    if (error instanceof TerminalBusyError && error.code === code) {
      return client.sessions.create({ amount: { value: 100, currency: 'EUR' }, urlOk: 'https://s.example/ok', urlKo: 'https://s.example/ko', description: TEST_CARDS.visa.number });
    }
    throw error;
  }
}
export const make = () => createSandbox({ posDelayMs: 0 });
`;
const strict = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noEmit: true,
  skipLibCheck: false,
  types: [],
};
for (const [label, options] of [
  ['TypeScript node16 (ESM)', { module: 'node16', moduleResolution: 'node16', target: 'es2022', lib: ['es2023', 'dom'] }],
  ['TypeScript bundler', { module: 'preserve', moduleResolution: 'bundler', target: 'es2022', lib: ['es2023', 'dom'] }],
]) {
  const dir = join(consumer, label.replace(/\W+/g, '-'));
  write(join(dir, 'index.ts'), usage);
  write(join(dir, 'tsconfig.json'), { compilerOptions: { ...strict, ...options }, files: ['index.ts'] });
  run(label, process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { cwd: consumer });
}

rmSync(work, { recursive: true, force: true });
for (const [label, status, ms] of results) console.log(`${status === 'ok' ? 'ok    ' : 'FAILED'} ${label} (${(ms / 1000).toFixed(1)} s)`);
const failed = results.filter(([, status]) => status !== 'ok').length;
console.log(failed === 0 ? 'package checks passed' : `${failed} package check(s) failed`);
process.exit(failed === 0 ? 0 : 1);
