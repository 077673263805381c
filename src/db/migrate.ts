import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../log.ts';
import type { Db } from './db.ts';
import { advisoryLockHolder, describeSession, longTransactions } from './migration-waits.ts';
import type { Queryable } from './queryable.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

// Any fixed number works; it only has to be the same for every server of this service.
const MIGRATION_LOCK_KEY = 7_242_001;

/**
 * Migrations this service once applied and later took back (their files removed): a database
 * that ran one keeps its row, which names no newer version. 0030_batch_reserved_ids.sql: reserved
 * batch ids, taken back in 6fd85d1d (0026 repairs a database that ran it).
 */
const RETIRED_MIGRATIONS: ReadonlySet<string> = new Set(['0030_batch_reserved_ids.sql']);

/** The migration a database without the service's schema starts with. */
export const FIRST_MIGRATION = '0001_core.sql';

/**
 * How long one wait for a lock lasts before the runner says what it waits on (and, for a table's
 * lock, steps back): a migration's DDL queued behind another server's transaction holds up every
 * statement on that table that comes after it, so it lets go after this and tries again.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 5_000;
/** Longest the runner waits, in all, for its tables' locks, or on a migration lock whose holder runs nothing. */
export const MIGRATION_WAIT_MS = 120_000;
const LOCK_NOT_AVAILABLE = '55P03';
/** How often a migration's session has PostgreSQL check that the runner is still there. */
const CLIENT_CHECK_MS = 1_000;

/**
 * `ahead`: migrations the database has that this version has no file for, applied by a newer
 * version of the service (a rollback, or an old server restarted during a rolling upgrade).
 */
export type MigrationResult = { applied: string[]; current: string | null; ahead: string[] };
export type MigrateOptions = { log?: Logger; lockTimeoutMs?: number; waitMs?: number };
/** How often a migration still running says so (`svc migrate` on stderr, a server's start in its log). */
export const MIGRATION_PROGRESS_MS = 5_000;

/**
 * Applies pending migrations/NNNN_*.sql in order, each once, in its own transaction, under a
 * session advisory lock so that servers starting together never race. A wait for a lock says
 * on what every `lockTimeoutMs`; it fails, naming the sessions in the way, past `waitMs`.
 */
export async function migrate(db: Db, dir: string = MIGRATIONS_DIR, opts: MigrateOptions = {}): Promise<MigrationResult> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
  const lockTimeoutMs = opts.lockTimeoutMs ?? MIGRATION_LOCK_TIMEOUT_MS;
  const waitMs = opts.waitMs ?? MIGRATION_WAIT_MS;
  return db.withClient(async (client) => {
    await client.query(`SELECT set_config('lock_timeout', $1, false)`, [String(lockTimeoutMs)]);
    // PostgreSQL notices a client gone only when it next writes to it: a runner killed mid
    // migration (Ctrl-C, kill -9, a supervisor) left its statement running, holding the table's
    // locks and the migration lock until it ended, however long that was, only to roll back.
    // Checked every second, it ends at once. (PostgreSQL 14 and later have the setting.)
    await client.query(`SELECT set_config(name, $1, false) FROM pg_settings WHERE name = 'client_connection_check_interval'`, [String(CLIENT_CHECK_MS)]);
    try {
      await takeMigrationLock(client, waitMs, opts.log);
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
        const waited = { ms: 0 }; // for tables' locks, all migrations together
        for (const file of files) {
          if (done.has(file)) continue;
          const sql = await readFile(new URL(file, `file://${dir.endsWith('/') ? dir : dir + '/'}`), 'utf8');
          // A migration that rewrites a large table runs for minutes: said while it runs, not only once done.
          const t0 = performance.now();
          const running = setInterval(() => {
            opts.log?.info({ migration: file, running_s: Math.round((performance.now() - t0) / 1000) }, `migration ${file} still running after ${Math.round((performance.now() - t0) / 1000)} s`);
          }, MIGRATION_PROGRESS_MS);
          try {
            await applyWaiting(client, file, sql, { lockTimeoutMs, waitMs, log: opts.log }, waited);
          } finally {
            clearInterval(running);
          }
          applied.push(file);
        }
        const known = new Set(files);
        const ahead = [...done].filter((v) => !known.has(v) && !RETIRED_MIGRATIONS.has(v)).sort();
        return { applied, current: files.at(-1) ?? null, ahead };
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
      }
    } finally {
      await client.query('RESET lock_timeout').catch(() => {});
      await client.query(`SELECT set_config(name, reset_val, false) FROM pg_settings WHERE name = 'client_connection_check_interval'`).catch(() => {});
    }
  });
}

/**
 * Applies one migration, trying again after each lock timeout (saying which transactions are in
 * the way) until `waited.ms`, all migrations' lock waits together, passes `waitMs`; then throws.
 */
async function applyWaiting(client: Queryable, file: string, sql: string, o: { lockTimeoutMs: number; waitMs: number; log?: Logger }, waited: { ms: number }): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const t0 = performance.now();
    const failed = await applyOne(client, file, sql);
    if (!failed) return;
    waited.ms += performance.now() - t0;
    if (failed.code !== LOCK_NOT_AVAILABLE) throw new Error(`migration ${file} failed: ${failed.message}`);
    const inTheWay = (await longTransactions(client, o.lockTimeoutMs)).map(describeSession).join('; ') || 'none still open';
    if (waited.ms >= o.waitMs) {
      throw new Error(`migration ${file} could not take its tables' locks in ${Math.round(waited.ms / 1000)} s; transactions in the way: ${inTheWay}. End them (or the process that holds them), then start again`);
    }
    const retryMs = Math.min(1_000 * attempt, o.lockTimeoutMs);
    o.log?.warn({ migration: file, attempt, waited_ms: Math.round(waited.ms), retry_in_ms: retryMs }, `migration ${file} waited ${o.lockTimeoutMs / 1000} s for a table's lock and let go, so other work goes on; trying again. Transactions in the way: ${inTheWay}`);
    await delay(retryMs);
  }
}

/** One migration in its own transaction, its lock waits bounded; the error that rolled it back, if any. */
async function applyOne(client: Queryable, file: string, sql: string): Promise<(Error & { code?: string }) | undefined> {
  await client.query('BEGIN');
  try {
    await client.query(sql);
    await client.query('INSERT INTO core.schema_migration (version) VALUES ($1)', [file]);
    await client.query('COMMIT');
    return undefined;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * Takes the migration lock, saying who holds it at each lock timeout. Waits as long as the holder
 * works (runs a statement: a long migration); fails once it has run nothing for `waitMs` (a
 * process stopped between two migrations holds the lock with its session).
 */
async function takeMigrationLock(client: Queryable, waitMs: number, log: Logger | undefined): Promise<void> {
  for (;;) {
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      return;
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && err.code === LOCK_NOT_AVAILABLE)) throw err;
    }
    const holder = await advisoryLockHolder(client, MIGRATION_LOCK_KEY);
    if (!holder) continue; // let go meanwhile
    const who = describeSession(holder);
    if (holder.state !== 'active' && holder.for_s * 1_000 >= waitMs) {
      throw new Error(`migrations: another process holds the migration lock and has run nothing for ${holder.for_s} s: ${who}. Stop it (or end its session), then start again`);
    }
    log?.warn({ holder: holder.pid }, `waiting for another process's migrations: ${who} holds the migration lock`);
  }
}

/**
 * What to say of a database a newer version migrated: this version has nothing to apply there,
 * and "up to date" would name a schema older than the database's. It runs on it unchanged, as an
 * old server beside new ones does during a rolling upgrade, and no migration is undone.
 */
export function aheadNotice(result: MigrationResult): string | undefined {
  if (!result.ahead.length) return undefined;
  const n = result.ahead.length;
  return `the database is ahead of this version: it has ${n} migration${n === 1 ? '' : 's'} this version does not know (${result.ahead.join(', ')}), applied by a newer version of the service; this version's newest is ${result.current ?? 'none'}. Nothing was applied or undone: start the newer version, or run this one knowing its code was not written for that schema`;
}

/**
 * Says in `log` what a run changed, as every process that migrates on its way to other work does
 * (a server's start, `svc token`): a first run only that it made the schema, an upgrade which
 * migrations it applied, nothing when there were none; and what a database a newer version
 * migrated has that this version does not know. (`svc migrate` prints its answer instead.)
 */
export function sayMigrated(log: Logger, result: MigrationResult): void {
  if (result.applied.includes(FIRST_MIGRATION)) log.info({ current: result.current }, `made the database's schema (${result.applied.length} migrations, at ${result.current})`);
  else if (result.applied.length) log.info({ applied: result.applied, current: result.current }, `applied ${result.applied.length} migration(s), the database is at ${result.current}`);
  // A rollback, or an old server restarted during a rolling upgrade: it runs, and says so.
  const ahead = aheadNotice(result);
  if (ahead) log.warn({ ahead: result.ahead, current: result.current }, ahead);
}
