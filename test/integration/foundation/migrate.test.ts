import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { MIGRATIONS_DIR, migrate } from '../../../src/db/migrate.ts';
import { createTestDatabase } from '../../helpers/database.ts';

describe('migrations', () => {
  it('two runners at once on an empty database both succeed and leave one schema', async () => {
    const t = await createTestDatabase();
    const a = new Db(t.url, 2);
    const b = new Db(t.url, 2);
    try {
      const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
      const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
      // Every file applied exactly once, by one runner or the other.
      expect([...ra.applied, ...rb.applied].sort()).toEqual(files);
      const versions = await a.query<{ version: string }>('SELECT version FROM core.schema_migration');
      expect(versions.rows.map((r) => r.version)).toContain('0001_core.sql');
      const tables = await a.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'core' ORDER BY 1`,
      );
      expect(tables.rows.map((r) => r.table_name)).toEqual(
        expect.arrayContaining(['catalog', 'command', 'credential', 'event', 'execution', 'keychain', 'resource', 'runtime', 'transient']),
      );
      // A third run applies nothing.
      expect((await migrate(a)).applied).toEqual([]);
    } finally {
      await a.close();
      await b.close();
      await t.drop();
    }
  });

  it('takes TEMPORARY on the database from PUBLIC and the reader role (0036), the same when run again', async () => {
    const t = await createTestDatabase();
    const db = new Db(t.url, 2);
    try {
      await migrate(db);
      const privileges = async () =>
        (
          await db.query(
            `SELECT has_database_privilege(r.role, current_database(), 'TEMPORARY') AS reader_temp,
                    has_database_privilege(r.role, current_database(), 'CONNECT') AS reader_connect,
                    has_database_privilege('public', current_database(), 'TEMPORARY') AS public_temp,
                    has_database_privilege(current_user, current_database(), 'TEMPORARY') AS service_temp
               FROM (SELECT 'svc_sql_reader_' || left(md5(current_database()), 8) AS role) r`,
          )
        ).rows[0];
      const expected = { reader_temp: false, reader_connect: true, public_temp: false, service_temp: true };
      expect(await privileges()).toEqual(expected);
      await db.query(await readFile(path.join(MIGRATIONS_DIR, '0036_reader_no_temp.sql'), 'utf8'));
      expect(await privileges()).toEqual(expected);
    } finally {
      await db.close();
      await t.drop();
    }
  });

  it('enforces the spec checks on scope_type, cache_type and command status', async () => {
    const t = await createTestDatabase();
    const db = new Db(t.url, 2);
    try {
      await migrate(db);
      const cat = await db.query<{ catalog_id: number }>(
        `INSERT INTO core.catalog (path, version, content, payload) VALUES ('a', 1, 'x', '{}') RETURNING catalog_id`,
      );
      const id = cat.rows[0].catalog_id;
      const keychain = (scope: string, cache: string) =>
        db.query(
          `INSERT INTO core.keychain (cache_key, keychain_name, catalog_id, credential_type, cache_type, scope_type, data_encrypted, expires_at)
           VALUES ($1, 'k', $2, 'bearer', $3, $4, 'x', now())`,
          [`k:${scope}:${cache}`, id, cache, scope],
        );
      await expect(keychain('catalog', 'secret')).rejects.toThrow(/scope_type/);
      await expect(keychain('global', 'other')).rejects.toThrow(/cache_type/);
      await keychain('global', 'token');
    } finally {
      await db.close();
      await t.drop();
    }
  });
});
