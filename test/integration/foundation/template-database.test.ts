// Each test's migrated database is a copy of the run's migrated template (test/helpers/
// template-database.ts), which PostgreSQL copies without the database's own privileges, and whose
// reader role (migrations/0002: named after the database) is the template's. The copy must be what
// migrating it in full makes: the same privileges for every role on the database and on every
// schema, table, column and routine, and a reader of its own with the same attributes and
// settings, a member of nothing. Tests of the reader (tools/postgres, doctor/read-only-task) rely
// on it.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { createMigratedDatabase, createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const readerOf = (url: string) => `svc_sql_reader_${createHash('md5').update(new URL(url).pathname.slice(1)).digest('hex').slice(0, 8)}`;

// Every privilege in the database, and the reader's role, as lines; the reader's and the
// database's names as placeholders so two databases compare.
const PRIVILEGES = `
WITH acl AS (
  SELECT 'database' AS kind, '' AS object, a.grantee, a.privilege_type, a.is_grantable FROM pg_database d, aclexplode(d.datacl) a WHERE d.datname = current_database()
  UNION ALL SELECT 'schema', n.nspname, a.grantee, a.privilege_type, a.is_grantable FROM pg_namespace n, aclexplode(n.nspacl) a WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
  UNION ALL SELECT 'relation', c.oid::regclass::text, a.grantee, a.privilege_type, a.is_grantable FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(c.relacl) a WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
  UNION ALL SELECT 'column', t.attrelid::regclass::text || '.' || t.attname, a.grantee, a.privilege_type, a.is_grantable FROM pg_attribute t JOIN pg_class c ON c.oid = t.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(t.attacl) a WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
  UNION ALL SELECT 'routine', p.oid::regprocedure::text, a.grantee, a.privilege_type, a.is_grantable FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace, aclexplode(p.proacl) a WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
)
SELECT kind || ' ' || object || ' ' || replace(CASE WHEN grantee = 0 THEN 'PUBLIC' ELSE grantee::regrole::text END, $1, 'READER') || ' ' || privilege_type || CASE WHEN is_grantable THEN ' grantable' ELSE '' END AS line
  FROM acl
UNION ALL
SELECT 'reader ' || concat_ws(' ', rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, rolreplication, rolbypassrls, rolconnlimit)
  FROM pg_roles WHERE rolname = $1
UNION ALL
SELECT 'reader setting ' || c FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole, unnest(s.setconfig) c WHERE r.rolname = $1
UNION ALL
SELECT 'reader member of ' || g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = $1
ORDER BY 1`;

let migrated: TestDatabase & { db: Db };
let copied: TestDatabase & { db: Db };

beforeAll(async () => {
  const empty = await createTestDatabase();
  const db = new Db(empty.url, 2);
  await migrate(db);
  migrated = { ...empty, db, drop: async () => (await db.close(), await empty.drop()) };
  copied = await createMigratedDatabase();
});
afterAll(async () => {
  await migrated?.drop();
  await copied?.drop();
});

async function privileges(t: TestDatabase & { db: Db }): Promise<string[]> {
  const { rows } = await t.db.query<{ line: string }>(PRIVILEGES, [readerOf(t.url)]);
  return rows.map((r) => r.line);
}

describe("a test's migrated database, copied from the run's template", () => {
  it('has the privileges and the reader role that migrating it in full gives', async () => {
    const full = await privileges(migrated);
    // The check sees what it compares: the reader's grants, its role and the database's own privileges.
    expect(full).toEqual(expect.arrayContaining([expect.stringMatching(/^column core\.execution\.status READER SELECT$/), expect.stringMatching(/^reader /), expect.stringMatching(/^database  READER CONNECT$/)]));
    expect(full.some((l) => l.startsWith('database  PUBLIC TEMPORARY'))).toBe(false);
    expect(await privileges(copied)).toEqual(full);
  });

  it("holds the migrations' rows as migrating gives them", async () => {
    const versions = (t: TestDatabase & { db: Db }) => t.db.query<{ version: string }>('SELECT version FROM core.schema_migration ORDER BY 1').then((r) => r.rows.map((x) => x.version));
    expect(await versions(copied)).toEqual(await versions(migrated));
  });
});
