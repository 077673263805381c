// The integration run migrates one database once, and each test's migrated database is a copy of
// it (CREATE DATABASE ... TEMPLATE): about a second and a half of DDL less per test file on a busy
// 2-core machine. A copy is the migrated database but for what PostgreSQL does not copy or what
// names the database: the per-database reader role of migrations/0002 (svc_sql_reader_<md5 of the
// database's name>), its grants, and the database's own privileges. READER_FOR_COPY gives the copy
// its own reader as migrating it would have; test/integration/foundation/template-database.test.ts
// compares a copy's roles and privileges with a database migrated in full.
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { Db } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Run in the copy as a superuser: a reader of the copy's own, with the template reader's
 * attributes, session settings, database privileges and object privileges (schemas, tables,
 * columns, sequences, routines), which the template reader loses in the copy. The template
 * database's privileges are read from its row: CREATE DATABASE copies none.
 */
const READER_FOR_COPY = (template: string) => `
DO $copy$
DECLARE
  old_name text := 'svc_sql_reader_' || left(md5(${pg.escapeLiteral(template)}), 8);
  new_name text := 'svc_sql_reader_' || left(md5(current_database()), 8);
  old_role pg_roles%ROWTYPE;
  r record;
BEGIN
  SELECT * INTO old_role FROM pg_roles WHERE rolname = old_name;
  IF NOT FOUND THEN RETURN; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = new_name) THEN
    EXECUTE format('CREATE ROLE %I %s %s %s %s %s %s %s CONNECTION LIMIT %s', new_name,
      CASE WHEN old_role.rolcanlogin THEN 'LOGIN' ELSE 'NOLOGIN' END,
      CASE WHEN old_role.rolsuper THEN 'SUPERUSER' ELSE 'NOSUPERUSER' END,
      CASE WHEN old_role.rolcreatedb THEN 'CREATEDB' ELSE 'NOCREATEDB' END,
      CASE WHEN old_role.rolcreaterole THEN 'CREATEROLE' ELSE 'NOCREATEROLE' END,
      CASE WHEN old_role.rolinherit THEN 'INHERIT' ELSE 'NOINHERIT' END,
      CASE WHEN old_role.rolreplication THEN 'REPLICATION' ELSE 'NOREPLICATION' END,
      CASE WHEN old_role.rolbypassrls THEN 'BYPASSRLS' ELSE 'NOBYPASSRLS' END,
      old_role.rolconnlimit);
  END IF;
  FOR r IN SELECT split_part(c, '=', 1) AS name, substr(c, length(split_part(c, '=', 1)) + 2) AS value
             FROM pg_db_role_setting s, unnest(s.setconfig) c WHERE s.setrole = old_role.oid AND s.setdatabase = 0 LOOP
    EXECUTE format('ALTER ROLE %I SET %I = %L', new_name, r.name, r.value);
  END LOOP;
  -- The database: as the template's row says, its reader replaced (PUBLIC is grantee 0).
  EXECUTE format('REVOKE ALL ON DATABASE %I FROM PUBLIC', current_database());
  FOR r IN SELECT a.grantee, a.privilege_type FROM pg_database d, aclexplode(d.datacl) a
            WHERE d.datname = ${pg.escapeLiteral(template)} AND a.grantee <> d.datdba LOOP
    EXECUTE format('GRANT %s ON DATABASE %I TO %s', r.privilege_type, current_database(),
      CASE WHEN r.grantee = 0 THEN 'PUBLIC' WHEN r.grantee = old_role.oid THEN quote_ident(new_name) ELSE quote_ident(r.grantee::regrole::text) END);
  END LOOP;
  FOR r IN SELECT n.nspname, a.privilege_type FROM pg_namespace n, aclexplode(n.nspacl) a WHERE a.grantee = old_role.oid LOOP
    EXECUTE format('GRANT %s ON SCHEMA %I TO %I', r.privilege_type, r.nspname, new_name);
    EXECUTE format('REVOKE %s ON SCHEMA %I FROM %I', r.privilege_type, r.nspname, old_name);
  END LOOP;
  FOR r IN SELECT c.oid::regclass AS rel, c.relkind, a.privilege_type FROM pg_class c, aclexplode(c.relacl) a WHERE a.grantee = old_role.oid LOOP
    EXECUTE format('GRANT %s ON %s %s TO %I', r.privilege_type, CASE r.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, r.rel, new_name);
    EXECUTE format('REVOKE %s ON %s %s FROM %I', r.privilege_type, CASE r.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, r.rel, old_name);
  END LOOP;
  FOR r IN SELECT t.attrelid::regclass AS rel, t.attname, a.privilege_type FROM pg_attribute t, aclexplode(t.attacl) a WHERE a.grantee = old_role.oid LOOP
    EXECUTE format('GRANT %s (%I) ON %s TO %I', r.privilege_type, r.attname, r.rel, new_name);
    EXECUTE format('REVOKE %s (%I) ON %s FROM %I', r.privilege_type, r.attname, r.rel, old_name);
  END LOOP;
  FOR r IN SELECT p.oid::regprocedure AS fn, a.privilege_type FROM pg_proc p, aclexplode(p.proacl) a WHERE a.grantee = old_role.oid LOOP
    EXECUTE format('GRANT %s ON ROUTINE %s TO %I', r.privilege_type, r.fn, new_name);
    EXECUTE format('REVOKE %s ON ROUTINE %s FROM %I', r.privilege_type, r.fn, old_name);
  END LOOP;
END $copy$`;

/** Makes and migrates the run's template database on the PostgreSQL of `adminUrl`; its name, and how to drop it. */
export async function prepareTemplateDatabase(adminUrl: string): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `svc_test_template_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const db = new Db(withDatabase(adminUrl, name), 2);
  try {
    await migrate(db);
  } finally {
    // A template is copied only while no session is connected to it.
    await db.close();
  }
  return {
    name,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        // Roles are cluster-wide: the template's reader (migrations/0002) outlives it.
        await c.query(`DROP ROLE IF EXISTS svc_sql_reader_${createHash('md5').update(name).digest('hex').slice(0, 8)}`);
      } finally {
        await c.end();
      }
    },
  };
}

/** Database `name`, made on `admin`'s PostgreSQL as a copy of `template` (prepareTemplateDatabase), with its own reader role. */
export async function copyTemplateDatabase(admin: pg.Client, adminUrl: string, name: string, template: string): Promise<void> {
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  const copy = new pg.Client({ connectionString: withDatabase(adminUrl, name) });
  await copy.connect();
  try {
    await copy.query(READER_FOR_COPY(template));
  } finally {
    await copy.end();
  }
}
