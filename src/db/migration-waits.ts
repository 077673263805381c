import type { Queryable } from './queryable.ts';

/** Another session of this database: who it is and what it does, for a line saying what a migration waits on. */
export type SessionSeen = {
  pid: number;
  application: string;
  client: string | null;
  state: string | null;
  /** Seconds in its present state (running a statement, idle, idle in transaction). */
  for_s: number;
  /** Seconds its transaction has been open; null outside one. */
  xact_s: number | null;
};

const SESSION_COLUMNS = `a.pid, a.application_name AS application, host(a.client_addr) AS client, a.state,
       round(extract(epoch FROM now() - coalesce(a.state_change, a.backend_start)))::int AS for_s,
       round(extract(epoch FROM now() - a.xact_start))::int AS xact_s`;

/** The session holding session advisory lock `key` (the migration lock), if any and visible. */
export async function advisoryLockHolder(q: Queryable, key: number): Promise<SessionSeen | undefined> {
  const { rows } = await q.query<SessionSeen>(
    `SELECT ${SESSION_COLUMNS}
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid::bigint = $1::bigint >> 32 AND l.objid::bigint = $1::bigint & 4294967295 AND l.objsubid = 1
      LIMIT 1`,
    [key],
  );
  return rows[0];
}

/** Sessions of this database in a transaction open `olderThanMs` or more: what a migration's lock wait most likely waits behind. */
export async function longTransactions(q: Queryable, olderThanMs: number): Promise<SessionSeen[]> {
  const { rows } = await q.query<SessionSeen>(
    `SELECT ${SESSION_COLUMNS}
       FROM pg_stat_activity a
      WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
        AND a.xact_start <= now() - make_interval(secs => $1::float8 / 1000)
      ORDER BY a.xact_start
      LIMIT 5`,
    [olderThanMs],
  );
  return rows;
}

/** "pid 123 (psql, 10.0.0.5, idle in transaction for 40 s, its transaction open 45 s)": one session, readable. */
export function describeSession(s: SessionSeen): string {
  const who = [s.application || 'no application name', s.client].filter(Boolean).join(', ');
  const open = s.xact_s === null ? '' : `, its transaction open ${s.xact_s} s`;
  return `pid ${s.pid} (${who}, ${s.state ?? 'state not visible'} for ${s.for_s} s${open})`;
}
