import { BATCH_STATES, isTerminalBatchState } from '../../machines/batch-request.machine.ts';

/**
 * `IN (...)` list of the states of unfinished batches, written out (code constants, not data) so
 * that the planner matches the partial index batch_request_pending_idx (migrations/0011_batch.sql).
 * A module of its own: the log's readers (execution.repo.ts, unit-read.ts) need it without the
 * batch queue's statements.
 */
export const BATCH_PENDING_SQL = BATCH_STATES.filter((s) => !isTerminalBatchState(s))
  .map((s) => `'${s}'`)
  .join(', ');
