import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { withDatabaseLogin } from '../database-login.ts';
import type { Queryable } from './queryable.ts';
import { scramVerifier } from './scram-verifier.ts';

// The embedded default's service user: it owns the service database and the service's schemas
// and is no superuser. The superuser (`postgres`, password in pg-password) only prepares it.

/** The login role the service uses on the embedded PostgreSQL. */
export const SERVICE_OWNER = 'svc';
// Its password, beside the superuser's (pg-password), mode 0600.
const OWNER_PASSWORD_FILE = 'svc-password';
// The schemas the service creates: its own (migrations), and the job queue's of earlier versions
// (pg-boss), which migration 0014 drops once it is the owner's.
const SERVICE_SCHEMAS = ['core', 'pgboss'];

const ROLE_ATTRIBUTES = 'LOGIN NOSUPERUSER CREATEROLE NOCREATEDB NOREPLICATION NOBYPASSRLS INHERIT';

const FIND_ROLE = `SELECT rolsuper FROM pg_roles WHERE rolname = $1`;
const POWERS_OF_CURRENT_USER = `SELECT rolsuper, rolcreaterole AND current_setting('server_version_num')::int < 160000 AS grants_any_role
  FROM pg_roles WHERE rolname = current_user`;
const DATABASE_OWNER = `SELECT pg_get_userbyid(datdba) AS owner, current_database() AS name FROM pg_database WHERE datname = current_database()`;

// Everything in the service's schemas that another role owns (a data dir made before the service
// had its own owner: all of it was the superuser's), given to the owner once. Sequences owned by
// a table (identity, serial) and indexes follow their table; array types their element type.
const TRANSFER_OWNERSHIP = `
DO $$
DECLARE
  owner_role regrole := to_regrole($owner$${SERVICE_OWNER}$owner$);
  schemas text[] := ARRAY[${SERVICE_SCHEMAS.map((s) => `'${s}'`).join(', ')}];
  r record;
BEGIN
  FOR r IN SELECT nspname FROM pg_namespace WHERE nspname = ANY (schemas) AND nspowner <> owner_role LOOP
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', r.nspname, owner_role::text);
  END LOOP;
  FOR r IN
    SELECT c.oid::regclass AS rel, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = ANY (schemas) AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND c.relowner <> owner_role
       AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')))
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I',
      CASE r.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
      r.rel, owner_role::text);
  END LOOP;
  FOR r IN SELECT p.oid::regprocedure AS fn FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = ANY (schemas) AND p.prokind IN ('f', 'p') AND p.proowner <> owner_role LOOP
    EXECUTE format('ALTER ROUTINE %s OWNER TO %I', r.fn, owner_role::text);
  END LOOP;
  FOR r IN SELECT t.oid::regtype AS ty FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
            WHERE n.nspname = ANY (schemas) AND t.typtype IN ('e', 'd', 'r', 'm') AND t.typowner <> owner_role LOOP
    EXECUTE format('ALTER TYPE %s OWNER TO %I', r.ty, owner_role::text);
  END LOOP;
END $$`;

// The database's reader role (migrations/0002_credentials.sql), when the superuser made it (an
// earlier version): from PostgreSQL 16 a CREATEROLE role may change only roles it administers, and
// the owner gives the reader its login. Admin only: the owner neither inherits nor SETs it.
const READER_ADMIN = `
DO $$
DECLARE
  reader text := 'svc_sql_reader_' || left(md5(current_database()), 8);
BEGIN
  IF current_setting('server_version_num')::int >= 160000
     AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader)
     AND NOT EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.roleid = to_regrole(reader) AND m.member = to_regrole($owner$${SERVICE_OWNER}$owner$) AND m.admin_option) THEN
    EXECUTE format('GRANT %I TO %I WITH ADMIN TRUE, INHERIT FALSE, SET FALSE', reader, $owner$${SERVICE_OWNER}$owner$);
  END IF;
END $$`;

async function ownerPassword(dataDir: string, create: boolean): Promise<string | undefined> {
  const file = join(resolve(dataDir), OWNER_PASSWORD_FILE);
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  if (!create) return undefined;
  const password = randomBytes(18).toString('base64url');
  await writeFile(file, password + '\n', { mode: 0o600 });
  return password;
}

/** `url` (the embedded PostgreSQL's superuser URL) as the service owner with `password`. */
function asOwner(url: string, password: string): string {
  return withDatabaseLogin(url, SERVICE_OWNER, password);
}

/**
 * On the embedded PostgreSQL, as its superuser (`superuserUrl`): makes SERVICE_OWNER (a login,
 * no superuser, CREATEROLE for the reader role) the owner of the service database and of the
 * service's schemas, moving what a data dir of an earlier version left to the superuser. Returns
 * the URL the service connects with, as that owner.
 */
export async function prepareServiceOwner(superuserUrl: string, dataDir: string): Promise<string> {
  const password = await ownerPassword(dataDir, true);
  if (!password) throw new Error(`no ${OWNER_PASSWORD_FILE} in ${dataDir}`);
  const client = new pg.Client({ connectionString: superuserUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query('BEGIN');
    const role = await client.query<{ rolsuper: boolean }>(FIND_ROLE, [SERVICE_OWNER]);
    const verb = role.rows.length ? 'ALTER' : 'CREATE';
    // Its SCRAM secret, not the password: the statement's text may be logged or shown in pg_stat_activity.
    await client.query(`${verb} ROLE ${pg.escapeIdentifier(SERVICE_OWNER)} WITH ${ROLE_ATTRIBUTES} PASSWORD ${pg.escapeLiteral(await scramVerifier(password))}`);
    const db = (await client.query<{ owner: string; name: string }>(DATABASE_OWNER)).rows[0];
    if (db.owner !== SERVICE_OWNER) await client.query(`ALTER DATABASE ${pg.escapeIdentifier(db.name)} OWNER TO ${pg.escapeIdentifier(SERVICE_OWNER)}`);
    await client.query(TRANSFER_OWNERSHIP);
    await client.query(READER_ADMIN);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw new Error(`cannot prepare the service's database owner ${SERVICE_OWNER}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  } finally {
    await client.end().catch(() => {});
  }
  return asOwner(superuserUrl, password);
}

/**
 * The URL of the service owner on an embedded PostgreSQL that a running `svc start` prepared
 * (`superuserUrl` names that PostgreSQL); throws when it has no owner yet (an earlier version runs).
 */
export async function runningOwnerUrl(superuserUrl: string, dataDir: string): Promise<string> {
  const password = await ownerPassword(dataDir, false);
  if (!password) throw new Error(`the svc running on ${resolve(dataDir)} has no ${SERVICE_OWNER} database user yet (an earlier version): restart it with this one`);
  return asOwner(superuserUrl, password);
}

/**
 * What the database user `q` connects as may do beyond the service's own schemas: everything (a
 * superuser; the service should not be one), or grant itself any role but superuser (CREATEROLE
 * before PostgreSQL 16, pg_execute_server_program and pg_read_server_files among them).
 */
export async function servicePowers(q: Queryable): Promise<{ superuser: boolean; grantsAnyRole: boolean }> {
  const { rows } = await q.query<{ rolsuper: boolean; grants_any_role: boolean }>(POWERS_OF_CURRENT_USER);
  return { superuser: rows[0]?.rolsuper === true, grantsAnyRole: rows[0]?.rolsuper !== true && rows[0]?.grants_any_role === true };
}
