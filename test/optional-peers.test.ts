/**
 * The optional peer `bullmq`, absent: an app that installed payment-service-sdk without it imports
 * `payment-service-sdk/queues/bullmq` (ESM and CommonJS), and the queue's first use says which
 * package to install, instead of Node's bare `Cannot find package 'bullmq'`. The built package is
 * copied into a shop's node_modules beside every dependency of this checkout but bullmq (linked),
 * so that nothing above the shop's folder can resolve bullmq. Run after `npm run build`.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULLMQ_MISSING } from '../src/queues/bullmq.js';
import { buildOnce, ROOT } from './sandbox/cli-process.js';

const run = promisify(execFile);
let shop: string;

beforeAll(() => {
  buildOnce();
  shop = mkdtempSync(join(tmpdir(), 'shop-without-bullmq-'));
  const modules = join(shop, 'node_modules');
  const sdk = join(modules, 'payment-service-sdk');
  mkdirSync(sdk, { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(sdk, 'package.json'));
  cpSync(join(ROOT, 'dist'), join(sdk, 'dist'), { recursive: true });
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name === 'bullmq' || name === '.bin' || name.startsWith('.')) continue;
    symlinkSync(join(ROOT, 'node_modules', name), join(modules, name));
  }
}, 120_000);

afterAll(() => rmSync(shop, { recursive: true, force: true }));

/** What the script prints, run in the shop's folder. */
async function inShop(script: string, type: 'module' | 'commonjs'): Promise<unknown> {
  const args = type === 'module' ? ['--input-type=module', '-e', script] : ['-e', script];
  const { stdout } = await run(process.execPath, args, { cwd: shop });
  return JSON.parse(stdout);
}

const USE = `
const queue = bullMqFollowUpQueue({ host: '127.0.0.1', port: 1 });
const outcome = {};
for (const [step, call] of [['start', () => queue.start(async () => {}, { concurrency: 1 })], ['schedule', () => queue.schedule({ id: 'session#X', target: { sessionId: 'X' } }, 0)]]) {
  try { await call(); outcome[step] = 'resolved'; } catch (error) { outcome[step] = { name: error.name, option: error.option, message: error.message }; }
}
await queue.stop();
console.log(JSON.stringify({ resolvable: (() => { try { return Boolean(import.meta.resolve('bullmq')); } catch { return false; } })(), ...outcome }));
`;

describe('payment-service-sdk/queues/bullmq without bullmq installed', () => {
  const refused = { name: 'ConfigurationError', option: 'bullmq', message: BULLMQ_MISSING };

  it('imports (ESM), and the first start or schedule says to install bullmq', async () => {
    const result = await inShop(`import { bullMqFollowUpQueue } from 'payment-service-sdk/queues/bullmq';\n${USE}`, 'module');
    expect(result).toEqual({ resolvable: false, start: refused, schedule: refused });
    expect(BULLMQ_MISSING).toMatch(/npm install bullmq@\^6/);
  }, 30_000);

  it('requires (CommonJS), and the first start or schedule says to install bullmq', async () => {
    const script = `(async () => {
const { bullMqFollowUpQueue } = require('payment-service-sdk/queues/bullmq');
${USE.replace(/import\.meta\.resolve\('bullmq'\)/, "require.resolve('bullmq')")}
})().catch((error) => { console.log(JSON.stringify({ crashed: String(error) })); });`;
    expect(await inShop(script, 'commonjs')).toEqual({ resolvable: false, start: refused, schedule: refused });
  }, 30_000);
});
