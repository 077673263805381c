-- A batch's item ids come from core.batch_event_id_seq (as migration 0011 made them). A later
-- change that reserved them in the execution's log dropped the sequence and core.svc_batch_moved
-- (its migration 0030, taken back before release: under batch load PostgreSQL 18.4 crashed with
-- it); a database that ran it gets both back here, the sequence past every id handed out.
CREATE SEQUENCE IF NOT EXISTS core.batch_event_id_seq AS bigint;
SELECT setval('core.batch_event_id_seq',
              GREATEST((SELECT max(x) FROM core.batch_request b CROSS JOIN LATERAL unnest(b.event_ids) x), (SELECT last_value FROM core.batch_event_id_seq), 1));

CREATE OR REPLACE FUNCTION core.svc_batch_moved(what text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'batch moved on: %', what USING ERRCODE = 'SVC02';
END
$$;

COMMENT ON COLUMN core.batch_request.event_ids IS NULL;
COMMENT ON COLUMN core.batch_request.routed_at IS NULL;
