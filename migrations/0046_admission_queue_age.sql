-- Queued executions are admitted by priority, then age (docs/flow-control.md, "Priority and
-- fairness"). The admitter ordered them by execution id, which is not their age: ids are handed
-- out in blocks per server (up to 256, held up to 10 s: actors/start-prelude-cache.ts), so on two
-- servers a start on one could be admitted before an older start of the same key on the other.
-- They are ordered by when they were queued (created_at, the start's write) and then by id, and
-- the two queue indexes (a key's, and that of executions of no limit) follow.
DROP INDEX core.admission_queue_idx;
CREATE INDEX admission_queue_idx ON core.admission (limit_name, limit_key, priority DESC, created_at, execution_id)
  WHERE admitted_at IS NULL AND limit_name IS NOT NULL;
DROP INDEX core.admission_free_idx;
CREATE INDEX admission_free_idx ON core.admission (priority DESC, created_at, execution_id)
  WHERE admitted_at IS NULL AND limit_name IS NULL;
