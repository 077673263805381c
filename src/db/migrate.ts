import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

// Any fixed number works; it only has to be the same for every server of this service.
const MIGRATION_LOCK_KEY = 7_242_001;

/** The migration a database without the service's schema starts with. */
export const FIRST_MIGRATION = '0001_core.sql';

export type MigrationResult = { applied: string[]; current: string | null };

/**
 * Applies pending migrations/NNNN_*.sql in order, each once, in its own transaction, under a
 * session advisory lock so that servers starting together never race.
 */
export async function migrate(db: Db, dir: string = MIGRATIONS_DIR): Promise<MigrationResult> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
  return db.withClient(async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS core`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS core.schema_migration (
           version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const done = new Set(
        (await client.query<{ version: string }>('SELECT version FROM core.schema_migration')).rows.map((r) => r.version),
      );
      const applied: string[] = [];
      for (const file of files) {
        if (done.has(file)) continue;
        const sql = await readFile(new URL(file, `file://${dir.endsWith('/') ? dir : dir + '/'}`), 'utf8');
        await client.query('BEGIN');
        try {
          await client.query(sql);
          await client.query('INSERT INTO core.schema_migration (version) VALUES ($1)', [file]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw new Error(`migration ${file} failed: ${err instanceof Error ? err.message : String(err)}`);
        }
        applied.push(file);
      }
      return { applied, current: files.at(-1) ?? null };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    }
  });
}
