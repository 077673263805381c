-- Every step inserts ~10 event rows and updates its execution row: keep what each write
-- maintains to what some query reads.
-- No query looks events up by type; the log is read by (execution_id, event_id), the primary key.
DROP INDEX IF EXISTS core.event_type_idx;
-- Room on each page for updated versions of a row: with no indexed column changed, an update
-- stays on its page (HOT) and touches no index. last_event_id and friends are in no index.
ALTER TABLE core.execution SET (fillfactor = 80);
ALTER TABLE core.command SET (fillfactor = 85);
