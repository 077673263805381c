-- The execution list (GET /api/executions, src/db/execution.repo.ts listExecutions): newest first
-- by start time, then id (ids come from blocks each server fetches ahead, so id order is not start
-- order), paged by a (started_at, execution_id) keyset, filtered by status, path, path prefix,
-- start time, parent, trigger and requester. Each filter has an index in the page's order, so a
-- filtered page is a range scan that stops at the page's end, never a scan of the table.
CREATE INDEX execution_started_idx ON core.execution (started_at DESC, execution_id DESC);
CREATE INDEX execution_status_started_idx ON core.execution (status, started_at DESC, execution_id DESC);
CREATE INDEX execution_path_started_idx ON core.execution (path, started_at DESC, execution_id DESC);
CREATE INDEX execution_parent_started_idx ON core.execution (parent_execution_id, started_at DESC, execution_id DESC)
  WHERE parent_execution_id IS NOT NULL;
-- path_prefix: a range of paths, whatever the database's collation.
CREATE INDEX execution_path_prefix_idx ON core.execution (path text_pattern_ops);
-- The (path, execution_id) index is covered by execution_path_started_idx for every path lookup.
DROP INDEX IF EXISTS core.execution_path_idx;

-- Trigger and requester are read from the `execution.started` event (its context's
-- `trigger.name` and `requested_by.sub`), so executions started before this migration filter
-- too: one small index entry per execution, on the started event only.
CREATE INDEX event_started_trigger_idx ON core.event (((context -> 'trigger') ->> 'name'), execution_id)
  WHERE event_type = 'execution.started';
CREATE INDEX event_started_requester_idx ON core.event (((context -> 'requested_by') ->> 'sub'), execution_id)
  WHERE event_type = 'execution.started';
