import { PgBoss } from 'pg-boss';
// pg-boss's statement builders: its own job insert, embedded in a statement of ours (jobInsertCte).
import { insertJobs } from 'pg-boss/dist/plans.js';
import type { Logger } from '../log.ts';

export type { PgBoss } from 'pg-boss';

/** pg-boss keeps its tables in this schema of the service database. */
export const BOSS_SCHEMA = 'pgboss';
/** Connections of pg-boss's own pool (fetching, completing, maintenance), beside the LISTEN one. */
const BOSS_POOL_CONNECTIONS = 4;
// How often pg-boss supervises (finds jobs whose worker died, active past their expiry, and puts
// them back for retry; and, at most as often as asked, refreshes its queue statistics: the
// monitor) and reads those statistics into its cache (the queue cache). A fetch from a stately
// queue skips the singleton keys the cached statistics list as active: at pg-boss's defaults
// (60 s), an execution whose batch job was running when the monitor looked had its next job
// skipped for up to a minute (seen: 8 executions' batches waited 52 s in the benchmark). At 1 s
// such a job waits a second or two.
export const BOSS_QUEUE_STATS_INTERVAL_SECONDS = 1;
// Completed jobs are deleted by maintenance; the batch requests keep what a client may ask.
const BOSS_MAINTENANCE_INTERVAL_SECONDS = 300;
/** How long stop() lets handlers in flight finish before it closes the pool. */
export const BOSS_STOP_TIMEOUT_MS = 8_000;

/**
 * Starts the service's one pg-boss instance on `databaseUrl` (creating or migrating its schema),
 * with LISTEN/NOTIFY so a job sent to a notifying queue wakes its workers at once. Errors of its
 * background work are logged, never thrown at the process.
 */
export async function startBoss(databaseUrl: string, log: Logger): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: databaseUrl,
    schema: BOSS_SCHEMA,
    max: BOSS_POOL_CONNECTIONS,
    application_name: 'svc-jobs',
    useListenNotify: true,
    superviseIntervalSeconds: BOSS_QUEUE_STATS_INTERVAL_SECONDS,
    monitorIntervalSeconds: BOSS_QUEUE_STATS_INTERVAL_SECONDS,
    queueCacheIntervalSeconds: BOSS_QUEUE_STATS_INTERVAL_SECONDS,
    maintenanceIntervalSeconds: BOSS_MAINTENANCE_INTERVAL_SECONDS,
    schedule: false,
  });
  boss.on('error', (err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'job queue error'));
  boss.on('warning', (w: { message?: string }) => log.debug({ warning: w.message }, 'job queue warning'));
  await boss.start();
  return boss;
}

/** Stops the workers (letting handlers in flight finish up to BOSS_STOP_TIMEOUT_MS) and closes its pool. */
export async function stopBoss(boss: PgBoss): Promise<void> {
  await boss.stop({ graceful: true, timeout: BOSS_STOP_TIMEOUT_MS });
}


// The parameter of pg-boss's job insert: the job array as JSON text.
const JOBS_PARAM = '$1::text::json';

/**
 * pg-boss's own job insert for `queue` as the CTE `boss_job`, for a statement of ours: the jobs
 * commit with what they are about, in its round trip. `jobsJson` is an SQL expression of the job
 * array `boss.insert` takes. It sends no NOTIFY: PostgreSQL serialises the commits of notifying
 * transactions behind one lock held through their WAL flush, so a NOTIFY in each statement made
 * every one wait for the others' flushes; the caller wakes the workers instead. Throws when
 * pg-boss's insert no longer has its shape.
 */
export async function jobInsertCte(boss: PgBoss, queue: string, jobsJson: string): Promise<string> {
  const q = await boss.getQueue(queue);
  if (!q) throw new Error(`job queue ${queue} does not exist`);
  const insert = insertJobs(BOSS_SCHEMA, { table: q.table, name: queue, returnId: true, notify: false });
  if (insert.split(JOBS_PARAM).length !== 2) throw new Error(`pg-boss's job insert no longer reads its jobs from ${JOBS_PARAM}`);
  return `boss_job AS (${insert.replace(JOBS_PARAM, `(${jobsJson})::text::json`)})`;
}
