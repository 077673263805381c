-- The doctor's stuck_executions check (src/doctor/playbooks/stuck_executions.yaml) tells an
-- execution that waits on purpose (a durable timer, a signal, a debounce window, a limit whose
-- holder still runs) from a stuck one: the reader role (migrations/0013) reads what a wait and an
-- admission are, and which limit a command waits for. Not an admission's `args` (a start's
-- payload) nor a wait's approval roles. Idempotent; skipped with a notice as 0013 is.
DO $$
DECLARE
  reader text := 'svc_sql_reader_' || left(md5(current_database()), 8);
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
    RETURN;
  END IF;
  EXECUTE format('GRANT SELECT (execution_id, seq, step, kind, signal, wake_at, created_at) ON core.wait TO %I', reader);
  EXECUTE format('GRANT SELECT (execution_id, limit_name, limit_key, not_before, debounce_path, created_at, admitted_at) ON core.admission TO %I', reader);
  EXECUTE format('GRANT SELECT (limit_name, limit_key) ON core.command TO %I', reader);
EXCEPTION
  WHEN insufficient_privilege THEN
    RAISE NOTICE 'role % not widened (the service user lacks the grant option on core tables); svc doctor detect cannot tell waiting executions from stuck ones', reader;
END $$;
