import * as v from 'valibot';
import type { Config } from '../src/config.ts';
import type { PgBoss } from '../src/jobs/boss.ts';

/** The pg-boss queue of batch processing: one job means "this execution has batches waiting". */
export const BATCH_QUEUE = 'svc-batch';

// A processor that died holds its job until this long past the processing timeout; then pg-boss
// hands the job out again (src/jobs/boss.ts supervises every few seconds).
const JOB_EXPIRY_MARGIN_SECONDS = 5;
// A failing job (the database away) is retried with backoff up to this often, ~10 minutes in all;
// after that the stale sweep of actors/batch-processor.ts sends a new one.
const JOB_RETRY_LIMIT = 25;
const JOB_RETRY_DELAY_MAX_SECONDS = 30;
// Completed jobs are kept this long (the batch requests keep their own state).
const JOB_KEEP_SECONDS = 600;

/** What a job carries. */
export const batchJobData = v.object({ execution_id: v.pipe(v.number(), v.integer(), v.minValue(1)) });

/**
 * Creates the queue, or brings its options up to the configuration. `stately` with the execution
 * as singleton key: at most one job of an execution waits and one runs, so an execution's batches
 * are processed by one processor at a time, in order, and a waiting job serves every batch that
 * arrives before it runs (sending another is then a no-op).
 */
export async function ensureBatchQueue(boss: PgBoss, config: Config): Promise<void> {
  const options = {
    expireInSeconds: Math.ceil(config.SVC_BATCH_PROCESSING_TIMEOUT_SECONDS) + JOB_EXPIRY_MARGIN_SECONDS,
    retryLimit: JOB_RETRY_LIMIT,
    retryDelay: 1,
    retryBackoff: true,
    retryDelayMax: JOB_RETRY_DELAY_MAX_SECONDS,
    deleteAfterSeconds: JOB_KEEP_SECONDS,
  };
  await boss.createQueue(BATCH_QUEUE, { policy: 'stately', notify: true, ...options });
  await boss.updateQueue(BATCH_QUEUE, options);
}

/**
 * Wakes this process's batch processors to fetch at once, as pg-boss's NOTIFY would (the accept
 * statement sends none: src/jobs/boss.ts). Processors of other servers on the database find the
 * jobs at their next poll.
 */
export function wakeBatchProcessors(boss: PgBoss): void {
  for (const w of boss.getWipData()) if (w.name === BATCH_QUEUE) boss.notifyWorker(w.id);
}

/**
 * Sends a job for each execution (one is enough however many batches wait). An accept sends its
 * jobs in its own statement instead (src/db/batch-accept.repo.ts).
 */
export async function sendBatchJobs(boss: PgBoss, executionIds: Iterable<number>): Promise<void> {
  const jobs = [...new Set(executionIds)].map((id) => ({ data: { execution_id: id }, singletonKey: String(id) }));
  if (jobs.length) await boss.insert(BATCH_QUEUE, jobs);
}
