-- Fewer index entries per execution. An execution's row is inserted, and updated when it ends:
-- that update changes `status`, which indexes hold, so PostgreSQL writes the new row version into
-- every index of the table (no HOT update). Each index removed here is two entries less per
-- execution (docs/benchmarks.md, twenty-sixth session), and the same queries stay index-served
-- (test/integration/engine/execution-list.test.ts checks each listing's plan).

-- A path and a path prefix, one index: text_pattern_ops serves `=` as well as `LIKE 'prefix%'`
-- in any collation, and keeps the page order (started_at, execution_id) under a path.
DROP INDEX IF EXISTS core.execution_path_started_idx;
DROP INDEX IF EXISTS core.execution_path_prefix_idx;
CREATE INDEX execution_path_started_idx ON core.execution (path text_pattern_ops, started_at DESC, execution_id DESC);

-- The same predicate and leading column as execution_parent_started_idx, which serves every
-- lookup by parent.
DROP INDEX IF EXISTS core.execution_parent_idx;

-- What reads by status in id order reads live executions (the inbox sweep, auto-resume, the
-- cancel cascade): an index of those only, which an execution leaves when it ends. Listings by
-- status keep execution_status_started_idx.
DROP INDEX IF EXISTS core.execution_status_idx;
CREATE INDEX execution_live_idx ON core.execution (execution_id) WHERE status IN ('queued', 'running', 'paused');

-- The started event of an execution started by a trigger, or by a caller, only: the others have
-- no entry (the listing's filters say `context ? 'trigger'` / `? 'requested_by'` to use them).
DROP INDEX IF EXISTS core.event_started_trigger_idx;
CREATE INDEX event_started_trigger_idx ON core.event (((context -> 'trigger') ->> 'name'), execution_id)
  WHERE event_type = 'execution.started' AND context ? 'trigger';
DROP INDEX IF EXISTS core.event_started_requester_idx;
CREATE INDEX event_started_requester_idx ON core.event (((context -> 'requested_by') ->> 'sub'), execution_id)
  WHERE event_type = 'execution.started' AND context ? 'requested_by';
