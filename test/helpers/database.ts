import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { Db } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';

export type TestDatabase = { url: string; drop(): Promise<void> };

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A fresh, empty database on the run's PostgreSQL; `drop()` removes it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = inject('adminDatabaseUrl');
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return {
    url: withDatabase(admin, name),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      // Roles are cluster-wide: the database's SQL reader role (migrations/0002) outlives it.
      const role = `svc_sql_reader_${createHash('md5').update(name).digest('hex').slice(0, 8)}`;
      await c.query(`DROP ROLE IF EXISTS ${role}`);
      await c.end();
    },
  };
}

/** A fresh database with the service schema applied, and a Db on it. */
export async function createMigratedDatabase(): Promise<TestDatabase & { db: Db }> {
  const t = await createTestDatabase();
  const db = new Db(t.url, 10);
  await migrate(db);
  return {
    ...t,
    db,
    async drop() {
      await db.close();
      await t.drop();
    },
  };
}
