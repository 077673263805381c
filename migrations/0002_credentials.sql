-- The reader role of POST /api/postgres/execute (without credential_name): statements against
-- the service database run in a session AUTHENTICATED as this role, never as the service user.
-- (SET ROLE alone is no boundary: the statement itself could RESET ROLE back to the service user.)
--
-- Roles are cluster-wide, so the role is per database: svc_sql_reader_<first 8 hex of
-- md5(database name)>. That keeps two services (or two test databases) on one cluster from
-- sharing grants or fighting over the password. The role is created NOLOGIN; the server gives
-- it LOGIN and a password derived from the encryption key on first use (src/db/sql-execute.ts).
--
-- What it may read: the orchestration tables, and only the metadata columns of credential and
-- keychain (never data_encrypted or renew_config). It owns nothing, writes nothing in core, and
-- has no superuser, CREATEROLE, CREATEDB, replication or RLS-bypass rights.
-- A service user without CREATEROLE skips this with a notice; the endpoint then answers 400.

DO $$
DECLARE
  reader text := 'svc_sql_reader_' || left(md5(current_database()), 8);
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
    BEGIN
      EXECUTE format(
        'CREATE ROLE %I NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 20',
        reader);
    EXCEPTION
      -- Another migration runner of this database made it between the check and the create.
      WHEN duplicate_object OR unique_violation THEN NULL;
    END;
  END IF;

  -- Defaults for its sessions; the server also sets the timeout per statement.
  EXECUTE format('ALTER ROLE %I SET statement_timeout = %L', reader, '30s');
  EXECUTE format('ALTER ROLE %I SET idle_in_transaction_session_timeout = %L', reader, '60s');

  EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), reader);
  EXECUTE format('GRANT USAGE ON SCHEMA core TO %I', reader);
  EXECUTE format(
    'GRANT SELECT ON core.catalog, core.execution, core.event, core.command, core.resource, core.runtime, core.transient, core.schema_migration TO %I',
    reader);
  EXECUTE format(
    'GRANT SELECT (id, name, type, schema, meta, tags, description, created_at, updated_at) ON core.credential TO %I',
    reader);
  EXECUTE format(
    'GRANT SELECT (cache_key, keychain_name, catalog_id, credential_type, cache_type, scope_type, execution_id, '
    'parent_execution_id, schema, expires_at, created_at, accessed_at, access_count, auto_renew) ON core.keychain TO %I',
    reader);
EXCEPTION
  WHEN insufficient_privilege THEN
    RAISE NOTICE 'role % not prepared (the service user lacks CREATEROLE); /api/postgres/execute without a credential is unavailable', reader;
END $$;
