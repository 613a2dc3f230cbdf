// The sandbox on loopback in its own process (its event loop is what is measured); prints its base
// URL as one JSON line, with how long createSandbox() and listen() took in here. `--data-dir DIR`
// keeps the store in DIR/sandbox.db; without it the store is in memory. Reads commands on stdin:
// `mark` starts a measurement, `report` prints the share of one core this process used since the
// mark, so that the bench can tell whether the sandbox or the load generator is the one that
// saturates; `memory` prints the process's memory (after a full GC when started with
// --expose-gc) and the record counts; `fill N` creates sessions in process, through the sandbox's
// own handler, until the store holds N, so that the bench reaches a store size without paying
// for N HTTP exchanges. `--request-log-size N` sets the request log's size (0: off).
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createSandbox } from '../dist/sandbox.mjs';

const { values: flags } = parseArgs({ options: { 'data-dir': { type: 'string' }, 'request-log-size': { type: 'string' } } });
const opening = performance.now();
const requestLogSize = flags['request-log-size'] === undefined ? undefined : Number(flags['request-log-size']);
const sandbox = createSandbox({ posDelayMs: 0, dataDir: flags['data-dir'], requestLogSize });
const { baseUrl } = await sandbox.listen({ host: '127.0.0.1' });
const openMs = performance.now() - opening;
console.log(JSON.stringify({ baseUrl, apiKey: sandbox.keys.test, webcode: sandbox.webcode, openMs, location: sandbox.location }));

const MB = 1024 * 1024;
const createBody = JSON.stringify({
  webcode: sandbox.webcode,
  amount: { value: 2599, currency: 'EUR' },
  urlOk: 'https://shop.example/ok',
  urlKo: 'https://shop.example/ko',
});
/** Creates sessions the way an SDK client's requests do (an idempotency key each), without the HTTP server. */
async function fill(level) {
  const started = performance.now();
  let created = 0;
  for (let missing = level - sandbox.records.counts().sessions; missing > 0; missing = level - sandbox.records.counts().sessions) {
    for (let batch = Math.min(missing, 500); batch > 0; batch--) {
      const response = await sandbox.handle(
        new Request(`${baseUrl}/external/v1/test/payment/session`, {
          method: 'POST',
          headers: { 'x-api-key': sandbox.keys.test, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
          body: createBody,
        }),
        { remoteAddress: '127.0.0.1' },
      );
      if (response.status !== 201) throw new Error(`fill: the sandbox answered ${response.status}: ${await response.text()}`);
      await response.text();
      created++;
    }
  }
  return { created, ms: performance.now() - started, sessions: sandbox.records.counts().sessions };
}

let cpuMark = process.cpuUsage();
let wallMark = performance.now();
// One command at a time, in order: `fill` takes seconds, and its answer must come before the next.
let queue = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (command) => {
  queue = queue.then(async () => {
    if (command === 'mark') {
      cpuMark = process.cpuUsage();
      wallMark = performance.now();
    } else if (command === 'report') {
      const { user, system } = process.cpuUsage(cpuMark);
      const cpuPercent = ((user + system) / 1000 / (performance.now() - wallMark)) * 100;
      console.log(JSON.stringify({ cpuPercent, sessions: sandbox.records.counts().sessions }));
    } else if (command === 'memory') {
      globalThis.gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      console.log(
        JSON.stringify({
          rssMB: rss / MB,
          maxRssMB: (process.resourceUsage().maxRSS * 1024) / MB,
          heapUsedMB: heapUsed / MB,
          afterGc: typeof globalThis.gc === 'function',
          counts: sandbox.records.counts(),
        }),
      );
    } else if (command.startsWith('fill ')) {
      console.log(JSON.stringify(await fill(Number(command.slice('fill '.length)))));
    }
  });
  // A failed command ends the process, so that the bench waiting on its answer fails instead of hanging.
  queue = queue.catch((error) => {
    console.error(error);
    process.exit(1);
  });
});
process.on('SIGTERM', () => void sandbox.close().then(() => process.exit(0)));
