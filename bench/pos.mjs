// `npm run bench`, section `pos` (BENCH_ONLY=pos for it alone), issue 36: what preparing a POS
// charge adds to `pos.createPayment`, and how many requests `pos.checkPayment` makes per call.
// Against a sandbox in its own process (bench/sandbox-server.mjs, terminal time 0), the SDK from
// dist (`npm run build`). The two ways of charging are timed call by call, alternating in a shuffled
// order, in one run (the machine's speed moves between runs): the figure is their ratio.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const CALLS = Number(process.env.BENCH_POS_CALLS ?? 800);
const CHECKS = 200;
/** Preparing must not cost the call anything measurable: the median call within 10 % of `createPayment(params)` (A/A pairs differ by up to 5 % here). */
export const POS_PREPARE_TARGET = 1.1;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function startSandbox() {
  const script = fileURLToPath(new URL('./sandbox-server.mjs', import.meta.url));
  const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const { value } = await lines.next();
  if (value === undefined) throw new Error('the sandbox of the POS section did not start');
  return { child, ...JSON.parse(value) };
}

/** A client of the sandbox that counts the requests it sends. */
function countingClient(PaymentClient, { baseUrl, apiKey, webcode }) {
  const counter = { requests: 0 };
  const client = new PaymentClient({
    apiKey,
    webcode,
    baseUrl,
    environment: 'test',
    fetch: (request, init) => {
      counter.requests += 1;
      return fetch(request, init);
    },
  });
  return { client, counter };
}

/** Milliseconds per call of each variant: calls alternating in a shuffled order, so that both see the same machine; the median call of each. */
async function alternate(variants) {
  const perCall = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (const run of Object.values(variants)) for (let warm = 0; warm < 50; warm++) await run(`warm-${warm}`);
  for (let call = 0; call < CALLS; call++) {
    for (const name of Object.keys(variants).sort(() => Math.random() - 0.5)) {
      const started = performance.now();
      await variants[name](String(call));
      perCall[name].push(performance.now() - started);
    }
  }
  return Object.fromEntries(Object.entries(perCall).map(([name, values]) => [name, median(values)]));
}

/** Microseconds of `preparePayment` alone (validation, key, copy), over many calls. */
function prepareMicros(client, params) {
  const count = 20_000;
  const started = performance.now();
  for (let index = 0; index < count; index++) client.pos.preparePayment(params(index));
  return ((performance.now() - started) * 1000) / count;
}

/** The section: createPayment with and without preparePayment, and checkPayment's requests per call. */
export async function posSection() {
  const { PaymentClient, posPaymentKey } = await import('../dist/index.mjs');
  const sandbox = await startSandbox();
  try {
    const { client, counter } = countingClient(PaymentClient, sandbox);
    const params = (order) => ({ poiId: 'V400m-TEST-000001', amount: { value: 1500, currency: 'EUR' }, customReference: `bench-${order}` });
    const msPerCall = await alternate({
      params: (order) => client.pos.createPayment(params(`p-${order}`)),
      prepared: async (order) => {
        const state = client.pos.preparePayment(params(`s-${order}`), { idempotencyKey: posPaymentKey(`bench-${order}-${Math.random()}`) });
        await client.pos.createPayment(state);
      },
    });
    // As a status route polls: each charge checked by its saved state (no id) once it has been sent.
    let final = 0;
    let requests = 0;
    for (let order = 0; order < CHECKS; order++) {
      const state = client.pos.preparePayment(params(`c-${order}`), { idempotencyKey: posPaymentKey(`check-${order}-${Math.random()}`) });
      await client.pos.createPayment(state);
      counter.requests = 0;
      if ((await client.pos.checkPayment(state)).status === 'success') final += 1;
      requests += counter.requests;
    }
    const ratio = msPerCall.prepared / msPerCall.params;
    const prepareUs = prepareMicros(client, params);
    if (ratio > POS_PREPARE_TARGET || final !== CHECKS) process.exitCode = 1;
    return { msPerCall, ratio, prepareUs, checks: CHECKS, checksFinal: final, requestsPerCheck: requests / CHECKS, calls: CALLS };
  } finally {
    sandbox.child.kill();
  }
}

/** The section's table. */
export function printPos(pos, table) {
  const verdict = pos.ratio <= POS_PREPARE_TARGET ? 'met' : 'MISSED';
  table(
    `POS: createPayment on the sandbox (terminal time 0), ${pos.calls} calls of each, alternating, median call`,
    ['measure', 'value', 'target'],
    [
      ['createPayment(params), per call', `${pos.msPerCall.params.toFixed(3)} ms`, ''],
      ['preparePayment + createPayment(state), per call', `${pos.msPerCall.prepared.toFixed(3)} ms`, ''],
      ['ratio, prepared / params', `${pos.ratio.toFixed(3)} x`, `<= ${POS_PREPARE_TARGET}: ${verdict}`],
      ['preparePayment alone, per call', `${pos.prepareUs.toFixed(1)} µs`, ''],
      [
        `checkPayment by its saved state (no id) after sending, requests per call over ${pos.checks}`,
        `${pos.requestsPerCheck.toFixed(2)} (${pos.checksFinal} read final)`,
        '1 in the common case',
      ],
    ],
  );
}
