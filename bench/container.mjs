// `npm run bench`, section `container` (BENCH_ONLY=container for it alone): the sandbox's container
// image with podman (scripts/podman.sh; the image built from this dist against the local base).
// Measured: the time from `podman start` to the first answered request, the time `podman stop -t 10`
// takes (and the stop the sandbox itself logs), and what the image adds to its base. Targets (issue
// 29): first answer within 1.5 s of start, stop within 2 s, at most 10 MB over the base; a missed
// one prints MISSED and makes the run exit 1.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const IMAGE = `payment-service-sdk/sandbox:${version}`;
const BASE = 'localhost/payment-sdk-node-base:24';
const RUNS = Number(process.env.BENCH_CONTAINER_RUNS ?? 5);
export const CONTAINER_TARGETS = { firstAnswerMs: 1_500, stopMs: 2_000, addedMB: 10 };
const env = { ...process.env, CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? join(root, 'scripts/containers.conf') };

function podman(args) {
  return execFileSync('podman', args, { env, encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Polls the published port every 5 ms until the sandbox answers its OpenAPI document (10 s at most). */
async function firstAnswer(baseUrl) {
  for (let attempt = 0; attempt < 2_000; attempt++) {
    try {
      if ((await fetch(`${baseUrl}/openapi.json`, { method: 'HEAD', signal: AbortSignal.timeout(500) })).status === 200) return;
    } catch {
      // not yet
    }
    await new Promise((done) => setTimeout(done, 5));
  }
  throw new Error(`${baseUrl} did not answer within 10 s`);
}

/** The section's numbers, or `{ skipped }` where podman cannot run here. */
export async function containerSection() {
  if (spawnSync('podman', ['--version'], { env, stdio: 'ignore' }).status !== 0)
    return { skipped: 'podman is not installed (scripts/podman.sh install)' };
  execFileSync(join(root, 'scripts/podman.sh'), ['image', '--no-build'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const name = `payment-sdk-bench-${process.pid}`;
  podman(['create', '--name', name, '--timeout', '300', '-p', '127.0.0.1::4010', IMAGE]);
  try {
    const starts = [];
    const stops = [];
    const ownStops = [];
    for (let run = 0; run < RUNS; run++) {
      const started = performance.now();
      podman(['start', name]);
      const port = /:(\d+)\s*$/.exec(podman(['port', name, '4010/tcp']))?.[1];
      await firstAnswer(`http://127.0.0.1:${port}`);
      starts.push(performance.now() - started);
      const stopping = performance.now();
      podman(['stop', '-t', '10', name]);
      stops.push(performance.now() - stopping);
      // The sandbox's lines are on the container's stderr, which `podman logs` writes to its own.
      const logs = spawnSync('podman', ['logs', name], { env, encoding: 'utf8', timeout: 60_000 });
      const logged = [...`${logs.stdout}${logs.stderr}`.matchAll(/Stopped on SIGTERM in (\d+) ms/g)].at(-1);
      ownStops.push(Number(logged?.[1] ?? Number.NaN));
    }
    const size = (image) => Number(podman(['image', 'inspect', '--format', '{{.Size}}', image]));
    return {
      runs: RUNS,
      firstAnswerMs: { median: median(starts), max: Math.max(...starts) },
      podmanStopMs: { median: median(stops), max: Math.max(...stops) },
      sandboxStopMs: { median: median(ownStops), max: Math.max(...ownStops) },
      addedMB: (size(IMAGE) - size(BASE)) / 1_048_576,
    };
  } finally {
    spawnSync('podman', ['rm', '-f', '-v', '-t', '0', name], { env, stdio: 'ignore' });
  }
}

/** The section's table (through the run's own `table`); a missed target sets exit code 1. */
export function printContainer(section, table) {
  if (section.skipped) return console.log(`\nContainer image: skipped, ${section.skipped}.`);
  const check = (ok) => {
    if (!ok) process.exitCode = 1;
    return ok ? 'met' : 'MISSED';
  };
  const ms = (value) => `${Math.round(value)} ms`;
  table(
    `Container image (${IMAGE} on ${BASE}, podman), ${section.runs} start/stop cycles of one container (BENCH_CONTAINER_RUNS)`,
    ['measure', 'median', 'max', 'target'],
    [
      [
        'podman start -> first answered request',
        ms(section.firstAnswerMs.median),
        ms(section.firstAnswerMs.max),
        `<= ${CONTAINER_TARGETS.firstAnswerMs} ms: ${check(section.firstAnswerMs.max <= CONTAINER_TARGETS.firstAnswerMs)}`,
      ],
      [
        'podman stop -t 10 (SIGTERM to exit 0)',
        ms(section.podmanStopMs.median),
        ms(section.podmanStopMs.max),
        `<= ${CONTAINER_TARGETS.stopMs} ms: ${check(section.podmanStopMs.max <= CONTAINER_TARGETS.stopMs)}`,
      ],
      ["  the sandbox's own stop, as it logs it", ms(section.sandboxStopMs.median), ms(section.sandboxStopMs.max), ''],
      [
        'image size over its base',
        `${section.addedMB.toFixed(2)} MB`,
        '',
        `<= ${CONTAINER_TARGETS.addedMB} MB: ${check(section.addedMB <= CONTAINER_TARGETS.addedMB)}`,
      ],
    ],
  );
}
