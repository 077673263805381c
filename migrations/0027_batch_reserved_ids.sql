-- A batch's `event_ids` are the ids its items take in the execution's log (core.event.event_id):
-- the accept statement reserves them beside the batch's `batch.accepted` marker, moving
-- core.execution.last_event_id on by the marker and the items, and the routing writes each item
-- at its id (src/db/batch-accept.repo.ts, actors/fold.ts). The global sequence that numbered the
-- items apart from the log, and the check that aborted a second routing of a batch (now the log's
-- key refuses it), are no longer used.
--
-- First landed as migration 0030 and taken back by 0026 (which gave the sequence and
-- core.svc_batch_moved back): numbered after 0026, so it runs on every database, fresh, having
-- run 0026 alone, or 0030 then 0026.
DROP SEQUENCE IF EXISTS core.batch_event_id_seq;
DROP FUNCTION IF EXISTS core.svc_batch_moved(text);

COMMENT ON COLUMN core.batch_request.event_ids IS 'ids reserved for the items in the execution''s log (core.event.event_id), the 202''s event_ids';
COMMENT ON COLUMN core.batch_request.routed_at IS 'when the batch was completed with its items in the log (a routing of the execution wrote them at their ids)';
