// `npm run bench`, section `sandbox-ratio` (BENCH_ONLY=sandbox-ratio for it alone), issue 39: the
// sandbox's cost per keyed create beside the least the work costs (bench/bare-server.mjs: node:http
// and node:sqlite), in memory and on a file, in one run, each server in its own process. Windows of
// 50 concurrent raw-fetch loops (an Idempotency-Key each, as the SDK sends) are taken one server at a
// time, in a shuffled order each round, so that all see the same machine; the server's CPU is read
// from /proc/PID/stat around each window. Prism 5 mocking the service's OpenAPI document (stateless)
// runs as a peer when it is installed. Reported as ratios to the bare server; target <= 2.0.
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

/** One window of load on `server`: creates/s, and the server's CPU per create in µs. */
async function window(server) {
  const url = `${server.baseUrl}/external/v1/test/payment/session`;
  const body = JSON.stringify({
    webcode: server.webcode,
    amount: { value: 2599, currency: 'EUR' },
    urlOk: 'https://shop.example/ok',
    urlKo: 'https://shop.example/ko',
  });
  const cpuBefore = cpuSeconds(server.child.pid);
  const started = performance.now();
  const end = started + WINDOW_MS;
  let created = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'x-api-key': server.apiKey, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
          body,
        });
        await response.arrayBuffer();
        if (response.status === 201 || response.status === 200) created++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { createsPerSecond: created / seconds, cpuUsPerCreate: ((cpuSeconds(server.child.pid) - cpuBefore) * 1e6) / Math.max(1, created) };
}

/** The section: bare and sandbox, in memory and on a file, Prism beside them when installed. */
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
    const windows = Object.fromEntries(Object.keys(servers).map((name) => [name, []]));
    for (const name of Object.keys(servers)) await window(servers[name]); // warm-up, not counted
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of Object.keys(servers).sort(() => Math.random() - 0.5)) windows[name].push(await window(servers[name]));
    }
    const summary = Object.fromEntries(
      Object.entries(windows).map(([name, runs]) => [
        name,
        {
          createsPerSecond: median(runs.map((run) => run.createsPerSecond)),
          cpuUsPerCreate: median(runs.map((run) => run.cpuUsPerCreate)),
        },
      ]),
    );
    const ratio = (sandbox, bare) => ({
      cpuPerCreate: summary[sandbox].cpuUsPerCreate / summary[bare].cpuUsPerCreate,
      createsPerSecond: summary[sandbox].createsPerSecond / summary[bare].createsPerSecond,
    });
    const ratios = { memory: ratio('sandboxMemory', 'bareMemory'), file: ratio('sandboxFile', 'bareFile') };
    if (ratios.memory.cpuPerCreate > SANDBOX_RATIO_TARGET || ratios.file.cpuPerCreate > SANDBOX_RATIO_TARGET) process.exitCode = 1;
    return { summary, ratios, rounds: ROUNDS, windowMs: WINDOW_MS, clients: CLIENTS };
  } finally {
    for (const server of Object.values(servers)) server.child.kill('SIGKILL');
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  }
}

/** The section's table. */
export function printSandboxRatio(section, table) {
  const rows = Object.entries(section.summary).map(([name, run]) => [
    name,
    Math.round(run.createsPerSecond).toLocaleString('en-US'),
    `${Math.round(run.cpuUsPerCreate)} µs`,
  ]);
  table(
    `Sandbox beside a bare node:http + node:sqlite server, ${section.clients} keyed raw-fetch loops, ${section.rounds} shuffled rounds of ${section.windowMs} ms windows, medians`,
    ['server', 'creates / s', 'CPU per create'],
    rows,
  );
  const verdict = (value) => (value <= SANDBOX_RATIO_TARGET ? 'met' : 'MISSED');
  table(
    'Sandbox over bare, ratios in one run',
    ['store', 'CPU per create', 'creates / s', `target CPU <= ${SANDBOX_RATIO_TARGET}`],
    Object.entries(section.ratios).map(([store, ratio]) => [
      store,
      `${ratio.cpuPerCreate.toFixed(2)} x`,
      `${ratio.createsPerSecond.toFixed(2)} x`,
      verdict(ratio.cpuPerCreate),
    ]),
  );
}
