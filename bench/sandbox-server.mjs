// The sandbox on loopback in its own process (its event loop is what is measured); prints its base
// URL as one JSON line. Reads commands on stdin: `mark` starts a measurement, `report` prints the
// share of one core this process used since the mark, so that the bench can tell whether the
// sandbox or the load generator is the one that saturates.
import { createInterface } from 'node:readline';
import { createSandbox } from '../dist/sandbox.mjs';

const sandbox = createSandbox({ posDelayMs: 0 });
const { baseUrl } = await sandbox.listen({ host: '127.0.0.1' });
console.log(JSON.stringify({ baseUrl, apiKey: sandbox.keys.test, webcode: sandbox.webcode }));

let cpuMark = process.cpuUsage();
let wallMark = performance.now();
createInterface({ input: process.stdin }).on('line', (command) => {
  if (command === 'mark') {
    cpuMark = process.cpuUsage();
    wallMark = performance.now();
  } else if (command === 'report') {
    const { user, system } = process.cpuUsage(cpuMark);
    const cpuPercent = ((user + system) / 1000 / (performance.now() - wallMark)) * 100;
    console.log(JSON.stringify({ cpuPercent, sessions: sandbox.records.counts().sessions }));
  }
});
process.on('SIGTERM', () => void sandbox.close().then(() => process.exit(0)));
