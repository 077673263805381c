-- The doctor's stuck_executions check tells work waiting for a rate limit's next token from work
-- the admitter failed to release, and work held by a limit that is not defined from work whose
-- limit's holders are gone: the reader role (migrations/0013, 0035) reads the limits' definitions
-- and their keys' buckets (names, keys, counts and times; no payload). Idempotent; skipped with a
-- notice as 0035 is.
DO $$
DECLARE
  reader text := 'svc_sql_reader_' || left(md5(current_database()), 8);
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
    RETURN;
  END IF;
  EXECUTE format('GRANT SELECT (name, concurrency, rate_limit, period_seconds, burst) ON core.flow_limit TO %I', reader);
  EXECUTE format('GRANT SELECT (name, key, capacity, running, tokens, refilled_at, served_at) ON core.flow_key TO %I', reader);
EXCEPTION
  WHEN insufficient_privilege THEN
    RAISE NOTICE 'role % not widened (the service user lacks the grant option on core tables); svc doctor detect cannot tell a rate limit''s wait from a stuck one', reader;
END $$;
