-- The event log partitioned by ranges of execution_id (DESIGN.md "Scale-out"): a year of history
-- is many tables of one range each, so vacuum and indexes work on the live ranges and retention
-- drops a whole range at once (src/partitions/). Every row of the table it replaces is copied.
--
-- A range is [lo, hi) of execution ids, its table core.event_p<lo, 19 digits>. The periodic work
-- makes them ahead of the execution id sequence (never the hot path); a DEFAULT partition takes
-- rows of a range not made yet, and making that range moves them.

-- Makes the range [lo, hi) of core.event (false: it exists), moving in the rows the default
-- partition took for it. Attached with a check of its bounds, so PostgreSQL need not scan it.
CREATE FUNCTION core.svc_event_partition_create(lo bigint, hi bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  part text := 'event_p' || lpad(lo::text, 19, '0');
BEGIN
  IF to_regclass('core.' || part) IS NOT NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('CREATE TABLE core.%I (LIKE core.event INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)', part);
  EXECUTE format('ALTER TABLE core.%I ADD CONSTRAINT %I CHECK (execution_id >= %s AND execution_id < %s)', part, part || '_range', lo, hi);
  EXECUTE format('WITH moved AS (DELETE FROM core.event_default WHERE execution_id >= %s AND execution_id < %s RETURNING *) INSERT INTO core.%I SELECT * FROM moved', lo, hi, part);
  EXECUTE format('ALTER TABLE core.event ATTACH PARTITION core.%I FOR VALUES FROM (%s) TO (%s)', part, lo, hi);
  RETURN true;
END $$;

-- Drops the range [lo, hi) of core.event (false: there is none): retention, once its executions
-- are archived.
CREATE FUNCTION core.svc_event_partition_drop(lo bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  part text := 'event_p' || lpad(lo::text, 19, '0');
BEGIN
  IF to_regclass('core.' || part) IS NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('ALTER TABLE core.event DETACH PARTITION core.%I', part);
  EXECUTE format('DROP TABLE core.%I', part);
  RETURN true;
END $$;

ALTER TABLE core.event RENAME TO event_unpartitioned;
ALTER TABLE core.event_unpartitioned RENAME CONSTRAINT event_pkey TO event_unpartitioned_pkey;
ALTER INDEX core.event_retry_of_idx RENAME TO event_unpartitioned_retry_of_idx;
ALTER INDEX core.event_started_labels_idx RENAME TO event_unpartitioned_started_labels_idx;
ALTER INDEX core.event_started_requester_idx RENAME TO event_unpartitioned_started_requester_idx;
ALTER INDEX core.event_started_trigger_idx RENAME TO event_unpartitioned_started_trigger_idx;

CREATE TABLE core.event (LIKE core.event_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE) PARTITION BY RANGE (execution_id);
ALTER TABLE core.event ADD CONSTRAINT event_pkey PRIMARY KEY (execution_id, event_id);
CREATE INDEX event_retry_of_idx ON core.event ((context ->> 'retry_of')) WHERE event_type = 'execution.started' AND context ? 'retry_of';
CREATE INDEX event_started_labels_idx ON core.event USING gin ((context -> 'labels') jsonb_path_ops) WHERE event_type = 'execution.started' AND context ? 'labels';
CREATE INDEX event_started_requester_idx ON core.event (((context -> 'requested_by') ->> 'sub'), execution_id) WHERE event_type = 'execution.started';
CREATE INDEX event_started_trigger_idx ON core.event (((context -> 'trigger') ->> 'name'), execution_id) WHERE event_type = 'execution.started';
CREATE TABLE core.event_default PARTITION OF core.event DEFAULT;

-- Ranges of a million executions for what is stored and the next range ahead (the periodic work
-- goes on with SVC_EVENT_PARTITION_EXECUTIONS from the last range's end).
DO $$
DECLARE
  width constant bigint := 1000000;
  top bigint;
  lo bigint := 0;
BEGIN
  SELECT GREATEST(COALESCE((SELECT max(execution_id) FROM core.event_unpartitioned), 0), (SELECT last_value FROM core.execution_id_seq)) INTO top;
  WHILE lo <= top + width LOOP
    PERFORM core.svc_event_partition_create(lo, lo + width);
    lo := lo + width;
  END LOOP;
END $$;

INSERT INTO core.event SELECT * FROM core.event_unpartitioned;
DROP TABLE core.event_unpartitioned;
