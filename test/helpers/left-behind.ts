import { setTimeout } from 'node:timers/promises';
import pg from 'pg';
import { until } from './until.ts';

// Each probe, given to the caller's way of running a statement: what PostgreSQL grants every role
// (even read-only: a large object on 15, a NOTIFY, advisory locks), which only a superuser could revoke.
const CHANNEL = 'svc_left_behind_probe';
const LOCK_WAIT_MS = 5_000;
export const LEFT_BEHIND_PROBES = {
  largeObject: `SELECT lo_from_bytea(0, '\\x00'::bytea) AS oid`,
  notify: `SELECT pg_notify('${CHANNEL}', 'from the probe')`,
  locks: 'SELECT pg_advisory_xact_lock(424242), pg_advisory_lock(434343)',
} as const;

/**
 * Runs each of LEFT_BEHIND_PROBES through `run` and reports, as the database's owner at `adminUrl`
 * sees it afterwards, what outlasted them: large objects made, notifications heard, advisory locks
 * still held (a session's lock is waited for up to 5 s: it ends with its connection).
 */
export async function leftBehind(adminUrl: string, run: (sql: string) => Promise<void>): Promise<{ largeObjects: number; heard: string[]; locks: number }> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const heard: string[] = [];
    admin.on('notification', (n) => heard.push(n.payload ?? ''));
    await admin.query(`LISTEN ${CHANNEL}`);
    const objects = async () => (await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_largeobject_metadata')).rows[0].n;
    const locks = async () => (await admin.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid IN (424242, 434343) AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)).rowCount ?? 0;
    const before = await objects();
    for (const sql of Object.values(LEFT_BEHIND_PROBES)) await run(sql);
    await admin.query(`SELECT pg_notify('${CHANNEL}', 'fence')`);
    await until('the fence notification', () => heard.includes('fence'), 5_000);
    const deadline = Date.now() + LOCK_WAIT_MS;
    let held = await locks();
    while (held > 0 && Date.now() < deadline) {
      await setTimeout(20);
      held = await locks();
    }
    return { largeObjects: (await objects()) - before, heard: heard.filter((h) => h !== 'fence'), locks: held };
  } finally {
    await admin.end();
  }
}
