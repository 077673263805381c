-- The snapshot is written every few dozen events, not on every transaction: `applied_event_id`
-- is the last event folded into the machine (by anyone), `snapshot_event_id` the last one the
-- stored snapshot holds. Events after applied_event_id are inbox events still to apply.
ALTER TABLE core.execution ADD COLUMN applied_event_id bigint NOT NULL DEFAULT 0;
UPDATE core.execution SET applied_event_id = snapshot_event_id;
COMMENT ON COLUMN core.execution.snapshot IS 'execution machine snapshot, folded through snapshot_event_id; a cache of the event log';
