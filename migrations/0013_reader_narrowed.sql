-- The service database's reader role (migrations/0002_credentials.sql) reads what the doctor's
-- detection playbooks read (src/doctor/playbooks/*.yaml), and nothing else (DESIGN.md, Security):
-- executions and commands without what may carry secrets (a command's input: its tasks and
-- rendered context; an execution's snapshot, result and error; a claim token), and worker pools.
-- No catalog, event, resource, transient, credential, keychain, api token, idempotency,
-- execution-secret or batch table; no sequence; no membership in any role.
-- `read_only` postgres tasks without `auth` and POST /api/postgres/execute without a credential
-- run as this role. Idempotent; a service user without CREATEROLE skips it with a notice, as 0002.

DO $$
DECLARE
  reader text := 'svc_sql_reader_' || left(md5(current_database()), 8);
  membership text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
    BEGIN
      EXECUTE format(
        'CREATE ROLE %I NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 20',
        reader);
    EXCEPTION
      WHEN duplicate_object OR unique_violation THEN NULL;
    END;
    EXECUTE format('ALTER ROLE %I SET statement_timeout = %L', reader, '30s');
    EXECUTE format('ALTER ROLE %I SET idle_in_transaction_session_timeout = %L', reader, '60s');
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), reader);
    EXECUTE format('GRANT USAGE ON SCHEMA core TO %I', reader);
  END IF;

  -- Every table-level grant goes, and with it every column grant (credential and keychain metadata).
  EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA core FROM %I', reader);
  EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA core FROM %I', reader);

  EXECUTE format(
    'GRANT SELECT (execution_id, catalog_id, path, parent_execution_id, root_execution_id, parent_command_id, status, progress, '
    'machine_version, snapshot_event_id, applied_event_id, last_event_id, started_at, updated_at, finished_at) ON core.execution TO %I',
    reader);
  EXECUTE format(
    'GRANT SELECT (command_id, execution_id, catalog_id, seq, step, loop_index, status, attempt, worker_id, '
    'claimed_at, heartbeat_at, published_at, created_at, updated_at, reclaim_attempt) ON core.command TO %I',
    reader);
  EXECUTE format('GRANT SELECT ON core.runtime TO %I', reader);

  -- A member of another role could SET ROLE to it: the reader is a member of nothing.
  FOR membership IN
    SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid JOIN pg_roles r ON r.oid = m.member
     WHERE r.rolname = reader
  LOOP
    EXECUTE format('REVOKE %I FROM %I', membership, reader);
  END LOOP;
EXCEPTION
  WHEN insufficient_privilege THEN
    RAISE NOTICE 'role % not narrowed (the service user lacks CREATEROLE or owns no core table); /api/postgres/execute without a credential is unavailable', reader;
END $$;
