-- An execution with a concurrency limit that ended in its own start (a workflow whose steps wait
-- on no worker) kept its admission row, and with it a slot of its key, for ever: the unit write
-- inserted the row beside the delete of the same row, which that one statement cannot see
-- (fixed in src/db/unit-write.ts). Such keys queue every later start. The rows of executions that
-- have ended go; the release trigger (migration 0025) gives each admitted one's slot back, and the
-- admitter admits what waits at its next look.
DELETE FROM core.admission a
 USING core.execution e
 WHERE e.execution_id = a.execution_id AND e.status IN ('completed', 'failed', 'cancelled');
