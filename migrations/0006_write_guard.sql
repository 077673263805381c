-- Aborts the statement that calls it. The engine writes a unit of work as one statement, some of
-- it computed from what this server holds in memory (a playbook's newest catalog version); a
-- guard in that statement calls this when what it assumed no longer holds, so nothing is
-- written and the server redoes the work from the database.
CREATE OR REPLACE FUNCTION core.svc_write_guard_failed(what text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'write guard failed: %', what USING ERRCODE = 'SVC01';
END
$$;
