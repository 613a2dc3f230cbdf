// `npm run bench`, section `sandbox-ratio` (BENCH_ONLY=sandbox-ratio for it alone), issue 39: the
// sandbox's CPU per request beside the least the work costs (bench/bare-server.mjs: node:http and
// node:sqlite), in memory and on a file, in one run, each server in its own process, for three
// requests: a keyed create, the payment page's form POST that pays a session, a keyed refund.
// Windows of 50 concurrent raw-fetch loops (an Idempotency-Key each, as the SDK sends) are taken
// one server at a time, in a shuffled order each round, so that all see the same machine; the
// server's CPU is read from /proc/PID/stat around each window. Prism 5 mocking the service's
// OpenAPI document (stateless, no pages) runs as a peer on the API requests when it is installed.
// Reported as ratios to the bare server; target <= 2.0.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const WINDOW_MS = Number(process.env.BENCH_RATIO_WINDOW_MS ?? 1_500);
const ROUNDS = Number(process.env.BENCH_RATIO_ROUNDS ?? 4);
const CLIENTS = 50;
/** The sandbox's CPU per create at most this many times the bare server's (issue 39). */
export const SANDBOX_RATIO_TARGET = 2.0;
const TICKS_PER_SECOND = 100;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

async function startNode(script, args, nodeFlags = []) {
  const child = spawn(process.execPath, [...nodeFlags, here(script), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const { value } = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
  if (value === undefined) throw new Error(`${script} did not start`);
  return { child, ...JSON.parse(value) };
}

async function startPrism() {
  const prism = here('../node_modules/.bin/prism');
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(prism, ['mock', here('../docs/openapi.json'), '-p', String(port), '-h', '127.0.0.1', '-v', 'silent'], {
    stdio: 'ignore',
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((done) => setTimeout(done, 200))) {
    if (child.exitCode !== null) return undefined;
    try {
      await fetch(`${baseUrl}/external/v1/test/pos/terminals?webcode=X`, { headers: { 'x-api-key': 'k' } });
      return { child, baseUrl, apiKey: 'sk_test_prism', webcode: 'PRISM' };
    } catch {
      // not listening yet
    }
  }
  child.kill();
  return undefined;
}

const JSON_HEADERS = (server) => ({ 'x-api-key': server.apiKey, 'content-type': 'application/json' });
const sessionBody = (server, value = 2599) =>
  JSON.stringify({
    webcode: server.webcode,
    amount: { value, currency: 'EUR' },
    urlOk: 'https://shop.example/ok',
    urlKo: 'https://shop.example/ko',
  });
const PAY_FORM = new URLSearchParams({
  cardNumber: '4111 1111 1111 1111',
  expiryMonth: '12',
  expiryYear: '39',
  cvc: '123',
  holderName: 'Jane Doe',
  action: 'pay',
}).toString();
/** Sessions made before each window of page POSTs: more than a window pays (each is paid once). */
const PAGE_POOL = Number(process.env.BENCH_RATIO_PAGE_POOL ?? 4_000);

async function post(url, headers, body) {
  const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual' });
  const text = await response.text();
  return { status: response.status, text, location: response.headers.get('location') ?? '' };
}

/** Makes `count` sessions on `server`, 50 at a time; their payment page URLs. */
async function sessions(server, count) {
  const urls = [];
  const url = `${server.baseUrl}/external/v1/test/payment/session`;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (urls.length < count) {
        const { status, text } = await post(url, JSON_HEADERS(server), sessionBody(server));
        if (status !== 201) throw new Error(`${server.name}: a create answered ${status}: ${text.slice(0, 200)}`);
        urls.push(JSON.parse(text).data.paymentUrl);
      }
    }),
  );
  return urls;
}

/** Payments the refunds are spread over, as a shop refunds many payments, each a few times. */
const REFUND_PAYMENTS = 200;

/** `count` payments made on `server` (sessions paid on their page), by their references. */
async function paidPayments(server, count) {
  const references = [];
  for (const url of await sessions(server, count)) {
    const paid = await post(url, { 'content-type': 'application/x-www-form-urlencoded' }, PAY_FORM);
    if (paid.status !== 303) throw new Error(`${server.name}: paying a session answered ${paid.status}`);
    // The payment's reference, from the redirect's signed `data` (its payload, base64url JSON).
    const data = new URL(paid.location).searchParams.get('data') ?? '';
    references.push(JSON.parse(Buffer.from(data.split('.')[1] ?? '', 'base64url').toString('utf8')).paymentReference);
  }
  return references;
}

/**
 * The requests measured, each with what it needs made first (outside the window): a keyed create;
 * the payment page's form POST, one per session made before; a keyed refund of 1 cent, of
 * payments paid before, in turn. Prism (stateless, no pages) takes the API calls only.
 */
const OPERATIONS = {
  create: {
    prepare: async () => undefined,
    request: (server) =>
      post(
        `${server.baseUrl}/external/v1/test/payment/session`,
        { ...JSON_HEADERS(server), 'idempotency-key': crypto.randomUUID() },
        sessionBody(server),
      ),
    ok: (status) => status === 201 || status === 200,
  },
  pagePost: {
    pages: true,
    prepare: (server) => sessions(server, PAGE_POOL),
    request: (_server, pool) => {
      const url = pool.pop();
      return url === undefined ? undefined : post(url, { 'content-type': 'application/x-www-form-urlencoded' }, PAY_FORM);
    },
    ok: (status) => status === 303,
  },
  refund: {
    prepare: async (server) => {
      if (server.name === 'prism') return { references: ['PRISM-PAYT-1'], next: 0 };
      server.payments ??= await paidPayments(server, REFUND_PAYMENTS);
      return { references: server.payments, next: 0 };
    },
    request: (server, pool) =>
      post(
        `${server.baseUrl}/external/v1/test/payment/refund`,
        { ...JSON_HEADERS(server), 'idempotency-key': crypto.randomUUID() },
        JSON.stringify({
          webcode: server.webcode,
          paymentReference: pool.references[pool.next++ % pool.references.length],
          amount: { value: 1, currency: 'EUR' },
        }),
      ),
    ok: (status) => status === 202,
  },
};

/** One window of `operation` on `server`: requests/s, and the server's CPU per request in µs. */
async function window(server, name) {
  const operation = OPERATIONS[name];
  const state = await operation.prepare(server);
  const cpuBefore = cpuSeconds(server.child.pid);
  const started = performance.now();
  const end = started + WINDOW_MS;
  let done = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) {
        const answer = await operation.request(server, state);
        if (answer === undefined) break;
        if (!operation.ok(answer.status))
          throw new Error(`${server.name} ${name}: answered ${answer.status}: ${answer.text.slice(0, 200)}`);
        done++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: done / seconds, cpuUs: ((cpuSeconds(server.child.pid) - cpuBefore) * 1e6) / Math.max(1, done) };
}

const PAIRS = { memory: ['sandboxMemory', 'bareMemory'], file: ['sandboxFile', 'bareFile'] };

/** The section: bare and sandbox, in memory and on a file, for each request measured; Prism beside them when installed. */
export async function sandboxRatioSection() {
  const folders = [mkdtempSync(join(tmpdir(), 'bench-bare-')), mkdtempSync(join(tmpdir(), 'bench-sandbox-'))];
  const cli = ['--max-semi-space-size=2'];
  const servers = {};
  try {
    servers.bareMemory = await startNode('./bare-server.mjs', []);
    servers.bareFile = await startNode('./bare-server.mjs', ['--file', folders[0]]);
    servers.sandboxMemory = await startNode('./sandbox-server.mjs', [], cli);
    servers.sandboxFile = await startNode('./sandbox-server.mjs', ['--data-dir', folders[1]], cli);
    const prism = await startPrism();
    if (prism) servers.prism = prism;
    for (const [name, server] of Object.entries(servers)) server.name = name;
    const summary = {};
    for (const operation of Object.keys(OPERATIONS)) {
      const taking = Object.keys(servers).filter((name) => name !== 'prism' || !OPERATIONS[operation].pages);
      const windows = Object.fromEntries(taking.map((name) => [name, []]));
      for (const name of taking) await window(servers[name], operation); // warm-up, not counted
      for (let round = 0; round < ROUNDS; round++) {
        for (const name of [...taking].sort(() => Math.random() - 0.5)) windows[name].push(await window(servers[name], operation));
      }
      summary[operation] = Object.fromEntries(
        Object.entries(windows).map(([name, runs]) => [
          name,
          { perSecond: median(runs.map((run) => run.perSecond)), cpuUs: median(runs.map((run) => run.cpuUs)) },
        ]),
      );
    }
    const ratios = Object.fromEntries(
      Object.entries(summary).map(([operation, byServer]) => [
        operation,
        Object.fromEntries(
          Object.entries(PAIRS).map(([store, [sandbox, bare]]) => [
            store,
            { cpu: byServer[sandbox].cpuUs / byServer[bare].cpuUs, perSecond: byServer[sandbox].perSecond / byServer[bare].perSecond },
          ]),
        ),
      ]),
    );
    const missed = Object.values(ratios).some((byStore) => Object.values(byStore).some((ratio) => ratio.cpu > SANDBOX_RATIO_TARGET));
    if (missed) process.exitCode = 1;
    return { summary, ratios, rounds: ROUNDS, windowMs: WINDOW_MS, clients: CLIENTS };
  } finally {
    for (const server of Object.values(servers)) server.child.kill('SIGKILL');
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  }
}

/** The section's tables. */
export function printSandboxRatio(section, table) {
  const label = { create: 'keyed create', pagePost: 'page POST (pay)', refund: 'keyed refund' };
  const rows = [];
  for (const [operation, byServer] of Object.entries(section.summary))
    for (const [name, run] of Object.entries(byServer))
      rows.push([label[operation] ?? operation, name, Math.round(run.perSecond).toLocaleString('en-US'), `${Math.round(run.cpuUs)} µs`]);
  table(
    `Sandbox beside a bare node:http + node:sqlite server, ${section.clients} raw-fetch loops, ${section.rounds} shuffled rounds of ${section.windowMs} ms windows, medians`,
    ['request', 'server', 'requests / s', 'CPU per request'],
    rows,
  );
  const verdict = (value) => (value <= SANDBOX_RATIO_TARGET ? 'met' : 'MISSED');
  const ratioRows = [];
  for (const [operation, byStore] of Object.entries(section.ratios))
    for (const [store, ratio] of Object.entries(byStore))
      ratioRows.push([
        label[operation] ?? operation,
        store,
        `${ratio.cpu.toFixed(2)} x`,
        `${ratio.perSecond.toFixed(2)} x`,
        verdict(ratio.cpu),
      ]);
  table(
    'Sandbox over bare, ratios in one run',
    ['request', 'store', 'CPU per request', 'requests / s', `target CPU <= ${SANDBOX_RATIO_TARGET}`],
    ratioRows,
  );
}
