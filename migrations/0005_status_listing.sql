-- Executions of one status are listed newest first (GET /api/executions?status=running, the
-- inbox sweep): an index in that order serves them by a range scan. Ordered by started_at, it
-- could not: the planner walked the primary key backwards past every finished execution.
DROP INDEX IF EXISTS core.execution_status_idx;
CREATE INDEX execution_status_idx ON core.execution (status, execution_id);
