-- The reader role (migrations/0002, 0013) writes nothing, temporary tables included: it could
-- CREATE TEMP TABLE through the TEMPORARY privilege every role has on a database through PUBLIC,
-- which no REVOKE from the reader alone takes away. So TEMPORARY on the service database goes
-- from PUBLIC. Nothing of the service needs it: its own user keeps it as the database's owner
-- (superusers need no grant), the gateway's role and the workers use no temporary table. Any
-- other role that needs it here gets it by an explicit GRANT (docs/operations.md); granting it
-- back to every role of the cluster would tie them all to this database (DROP ROLE refused).
-- Idempotent. A service user that neither owns the database nor is a superuser cannot revoke
-- it: the migration then changes nothing (a warning) and says so with a notice.
DO $$
DECLARE
  reader text := 'svc_sql_reader_' || left(md5(current_database()), 8);
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
    RETURN;
  END IF;
  EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC, %I', current_database(), reader);
  IF has_database_privilege(reader, current_database(), 'TEMPORARY') THEN
    RAISE NOTICE 'role % keeps TEMPORARY on database % (the service user neither owns it nor is a superuser; docs/operations.md)', reader, current_database();
  END IF;
EXCEPTION
  WHEN insufficient_privilege THEN
    RAISE NOTICE 'role % keeps TEMPORARY on database % (the service user may not revoke it; docs/operations.md)', reader, current_database();
END $$;
