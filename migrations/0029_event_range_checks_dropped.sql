-- A range of core.event was attached with a CHECK of its bounds, so that ATTACH PARTITION need not
-- scan it. Once attached, the partition's bound is the same rule, and PostgreSQL routes every row
-- by it; the CHECK stayed and was evaluated again on every event inserted (PostgreSQL's manual
-- advises dropping it after the attach). Dropped from every range, and from now on at the attach.

CREATE OR REPLACE FUNCTION core.svc_event_partition_create(lo bigint, hi bigint) RETURNS boolean LANGUAGE plpgsql AS $$
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
  EXECUTE format('ALTER TABLE core.%I DROP CONSTRAINT %I', part, part || '_range');
  RETURN true;
END $$;

DO $$
DECLARE
  r record;
BEGIN
  FOR r IN
    SELECT p.relname AS part
    FROM pg_inherits i
    JOIN pg_class p ON p.oid = i.inhrelid
    JOIN pg_constraint c ON c.conrelid = p.oid AND c.contype = 'c' AND c.conname = p.relname || '_range'
    WHERE i.inhparent = 'core.event'::regclass
  LOOP
    EXECUTE format('ALTER TABLE core.%I DROP CONSTRAINT %I', r.part, r.part || '_range');
  END LOOP;
END $$;
