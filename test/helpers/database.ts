import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { Db } from '../../src/db/db.ts';
import { copyTemplateDatabase } from './template-database.ts';

export type TestDatabase = { url: string; drop(): Promise<void> };

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A fresh database on the run's PostgreSQL, empty or (`migrated`) a copy of the run's migrated template; `drop()` removes it. */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const admin = inject('adminDatabaseUrl');
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    if (opts.migrated) await copyTemplateDatabase(client, admin, name, inject('templateDatabase'));
    else await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
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

/** A fresh database with the service schema applied (a copy of the run's migrated template), and a Db on it. */
export async function createMigratedDatabase(): Promise<TestDatabase & { db: Db }> {
  const t = await createTestDatabase({ migrated: true });
  const db = new Db(t.url, 10);
  return {
    ...t,
    db,
    async drop() {
      await db.close();
      await t.drop();
    },
  };
}
