// `npm run bench`, section `follow-ups` (BENCH_ONLY=follow-ups for it alone): the queue overhead of
// a follow-up check (issue 32) on pg-boss (PostgreSQL) and BullMQ (Redis), loopback: the time of a
// `schedule` (storing one job), and the time per job of running N due no-op jobs, the handler doing
// nothing, with `concurrency` 10 on one process. Both from dist (`npm run build`). No target: the
// numbers are what a check costs beyond its API call(s).

const JOBS = Number(process.env.BENCH_FOLLOW_UP_JOBS ?? 500);
const CONCURRENCY = 10;
const dist = (path) => new URL(`../dist/${path}`, import.meta.url).href;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p90 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)];

/** Schedules JOBS no-op jobs one after the other (each timed), then starts a worker and times the drain. */
async function measure(queue, name) {
  const run = `${name}-${process.pid}-${Date.now()}`;
  const job = (index) => ({ id: `session:${run}-${index}#0`, target: { sessionId: `${run}-${index}` }, check: 0, trackedAt: Date.now() });
  for (let index = 0; index < 20; index++) await queue.schedule(job(`warm-${index}`), 0);
  const scheduleMs = [];
  for (let index = 0; index < JOBS; index++) {
    const started = performance.now();
    await queue.schedule(job(index), 0);
    scheduleMs.push(performance.now() - started);
  }
  let ran = 0;
  let done;
  const all = new Promise((resolve) => (done = resolve));
  const started = performance.now();
  await queue.start(
    async () => {
      if (++ran === JOBS + 20) done();
    },
    { concurrency: CONCURRENCY },
  );
  await Promise.race([
    all,
    new Promise((_, fail) => setTimeout(() => fail(new Error(`${name}: ${ran} of ${JOBS + 20} jobs ran in 120 s`)), 120_000)),
  ]);
  const drainMs = performance.now() - started;
  await queue.stop();
  return { scheduleMedianMs: median(scheduleMs), scheduleP90Ms: p90(scheduleMs), runPerJobMs: drainMs / (JOBS + 20), drainMs };
}

/** Both engines on the servers given (the bench's PostgreSQL and Redis). */
export async function followUpQueueSection(servers) {
  const { pgBossFollowUpQueue } = await import(dist('queues/pg-boss.mjs'));
  const { bullMqFollowUpQueue } = await import(dist('queues/bullmq.mjs'));
  const { PgBoss } = await import('pg-boss');
  const { createClient } = await import('redis');
  const schema = `bench_follow_ups_${process.pid}`;
  const boss = new PgBoss({ connectionString: servers.postgres, schema, max: 10 });
  boss.on('error', () => {});
  await boss.start();
  const redis = await createClient({ url: servers.redis }).connect();
  try {
    const queue = `bench-follow-ups-${process.pid}`;
    // pg-boss's idle poll is its floor (500 ms); the jobs are due before the worker starts, so
    // workers fetch back to back until the queue is empty.
    const pgBoss = await measure(pgBossFollowUpQueue(boss, { queue, pollingIntervalMs: 500 }), 'pg-boss');
    const bullMq = await measure(bullMqFollowUpQueue(redis, { queue }), 'bullmq');
    return { jobs: JOBS, concurrency: CONCURRENCY, engines: { 'pg-boss': pgBoss, bullmq: bullMq } };
  } finally {
    await boss.stop({ graceful: false });
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: servers.postgres });
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await pool.end();
    const keys = await redis.keys('bull:bench-follow-ups-*');
    if (keys.length > 0) await redis.del(keys);
    redis.destroy();
  }
}

export function printFollowUpQueues(section, table) {
  const ms = (value) => `${value.toFixed(2)} ms`;
  table(
    `Follow-up queues: overhead per check, ${section.jobs} no-op jobs, loopback (BENCH_FOLLOW_UP_JOBS); run with concurrency ${section.concurrency} on one process`,
    ['engine', 'schedule (median)', 'schedule (p90)', 'run, per job', 'schedule + run'],
    Object.entries(section.engines).map(([name, run]) => [
      name,
      ms(run.scheduleMedianMs),
      ms(run.scheduleP90Ms),
      ms(run.runPerJobMs),
      ms(run.scheduleMedianMs + run.runPerJobMs),
    ]),
  );
}
