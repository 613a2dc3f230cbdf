// `npm run bench`, section `follow-ups` (BENCH_ONLY=follow-ups for it alone): the queue overhead of
// a follow-up check (issue 32) on pg-boss (PostgreSQL) and BullMQ (Redis), loopback: the time of a
// `schedule` (storing one job), and the time per job of running N due no-op jobs, the handler doing
// nothing, with `concurrency` 10 on one process. Both from dist (`npm run build`). No target: the
// numbers are what a check costs beyond its API call(s).

const JOBS = Number(process.env.BENCH_FOLLOW_UP_JOBS ?? 500);
const CONCURRENCY = 10;
/** Outcome times spread evenly over the 24 h, for the schedule's mean cost and delay. */
const UNIFORM_SAMPLES = Number(process.env.BENCH_FOLLOW_UP_SAMPLES ?? 100);
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

/**
 * The default schedule's cost and delay against a real sandbox (in process, over loopback HTTP),
 * with time moved on the sandbox clock: each check runs at its due time at once, after
 * `advanceClock` brought the sandbox there (the follow-ups' own `Date.now` reads the same time).
 * For each outcome time T after `track` (or never: a session never opened stays pending until the
 * 24 h horizon), the sandbox pays the session at T (`paySession`), every webhook dropped: the API
 * calls the tracked session cost over its life, and the time from its outcome to its callback.
 */
export async function followUpScheduleSection() {
  const { createFollowUps, memoryWebhookStore, DEFAULT_FOLLOW_UP_SCHEDULE, PaymentClient } = await import(dist('index.mjs'));
  const { createSandbox } = await import(dist('sandbox.mjs'));
  const sandbox = createSandbox();
  const { baseUrl } = await sandbox.listen();
  await sandbox.faults.add({ event: 'AUTHORISATION', effect: { type: 'drop' } });
  let calls = 0;
  const counting = (input, init) => {
    calls++;
    return fetch(input, init);
  };
  const client = new PaymentClient({ apiKey: sandbox.keys.test, webcode: sandbox.webcode, baseUrl, fetch: counting });
  const realNow = Date.now;
  // The sandbox clock's lead on the system clock: what advanceClock moved it by.
  let lead = 0;
  const advanceTo = async (at) => {
    const ms = Math.max(0, Math.round(at - (realNow() + lead)));
    if (ms > 0) await sandbox.advanceClock(ms);
    lead += ms;
  };
  const simulate = async (finalAfterMs) => {
    const jobs = [];
    let acted;
    let stale = false;
    let handler;
    const queue = {
      async schedule(job, delayMs) {
        if (!jobs.some((queued) => queued.job.id === job.id)) jobs.push({ job, due: Date.now() + delayMs });
      },
      async start(run) {
        handler = run;
      },
      async stop() {},
    };
    const followUps = createFollowUps({
      client,
      store: memoryWebhookStore(),
      queue,
      onAuthorisation: () => {
        acted = Date.now();
      },
      onStale: () => {
        stale = true;
      },
    });
    await followUps.start();
    const session = await client.sessions.create({
      amount: { value: 2_500, currency: 'EUR' },
      urlOk: 'https://shop.example/ok',
      urlKo: 'https://shop.example/ko',
    });
    const start = Date.now();
    calls = 0;
    await followUps.track({ sessionId: session.sessionId });
    let paidAt;
    for (let guard = 0; jobs.length > 0 && guard < 10_000; guard++) {
      jobs.sort((a, b) => a.due - b.due);
      const { job, due } = jobs.shift();
      if (finalAfterMs !== undefined && paidAt === undefined && start + finalAfterMs <= due) {
        await advanceTo(start + finalAfterMs);
        await sandbox.paySession('test', session.sessionId);
        paidAt = Date.now();
      }
      await advanceTo(due);
      await handler(job);
    }
    return { calls, delayMs: acted === undefined ? undefined : acted - paidAt, stale };
  };
  Date.now = () => realNow() + lead;
  try {
    const rows = {};
    for (const [label, after] of [
      ['paid before the first check (10 s)', 10_000],
      ['paid after 3 min', 180_000],
      ['paid after 1 h', 3_600_000],
      ['paid after 12 h', 43_200_000],
      ['never final (onStale at 24 h)', undefined],
    ]) {
      rows[label] = await simulate(after);
    }
    // The outcome at a uniformly random time over the 24 h: mean calls and delay to the callback.
    const samples = [];
    for (let index = 0; index < UNIFORM_SAMPLES; index++)
      samples.push(await simulate(Math.round((index + 0.5) * (86_400_000 / UNIFORM_SAMPLES))));
    const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;
    return {
      schedule: DEFAULT_FOLLOW_UP_SCHEDULE,
      rows,
      uniform: {
        samples: UNIFORM_SAMPLES,
        meanCalls: mean(samples.map((sample) => sample.calls)),
        meanDelayMs: mean(samples.map((sample) => sample.delayMs)),
        maxDelayMs: Math.max(...samples.map((sample) => sample.delayMs)),
      },
    };
  } finally {
    Date.now = realNow;
    await sandbox.close();
  }
}

export function printFollowUpSchedule(section, table) {
  const time = (ms) => (ms === undefined ? '-' : ms >= 60_000 ? `${(ms / 60_000).toFixed(1)} min` : `${(ms / 1000).toFixed(1)} s`);
  table(
    `Follow-ups, default schedule (${section.schedule.map((ms) => time(ms)).join(', ')} repeating, 24 h): API calls per tracked session and outcome-to-callback time with every webhook dropped (sandbox clock)`,
    ['outcome', 'API calls over its life', 'outcome to callback'],
    [
      ...Object.entries(section.rows).map(([label, row]) => [label, String(row.calls), row.stale ? 'onStale at 24 h' : time(row.delayMs)]),
      [
        `uniform over 24 h (mean of ${section.uniform.samples})`,
        section.uniform.meanCalls.toFixed(1),
        `${time(section.uniform.meanDelayMs)} (max ${time(section.uniform.maxDelayMs)})`,
      ],
    ],
  );
}
