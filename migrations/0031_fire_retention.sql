-- Retention forgets trigger fires too (docs/scaling.md, "The event log: ranges and retention"):
-- a fire that started an execution goes with that execution's range (trigger_fire_execution_idx
-- finds them); one that started nothing (skipped, refused) once it is older than
-- SVC_RETENTION_DAYS, found by this index of those fires only (a started fire makes no entry).
CREATE INDEX trigger_fire_unstarted_idx ON core.trigger_fire (fired_at) WHERE execution_id IS NULL;
