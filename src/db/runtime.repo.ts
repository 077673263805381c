import { heldSql } from './command-plans.ts';
import type { Queryable } from './queryable.ts';

export type RuntimeRow = {
  runtime_id: number;
  kind: string;
  name: string;
  status: string;
  capacity: number | null;
  labels: unknown;
  heartbeat_at: Date;
  created_at: Date;
};

const COLUMNS = 'runtime_id, kind, name, status, capacity, labels, heartbeat_at, created_at';

/**
 * Registers (or re-registers) a worker pool as ready. A pool registering holds nothing yet: what
 * an earlier process under the same name claimed is orphaned from now on (see ClaimPolicy).
 */
export async function registerWorkerPool(q: Queryable, p: { name: string; capacity: number; labels: unknown }): Promise<RuntimeRow> {
  const { rows } = await q.query<RuntimeRow>(
    `INSERT INTO core.runtime (kind, name, status, capacity, labels, heartbeat_at, held_commands, held_at) VALUES ('worker_pool', $1, 'ready', $2, $3, now(), '{}', now())
     ON CONFLICT (kind, name) DO UPDATE SET status = 'ready', capacity = EXCLUDED.capacity, labels = EXCLUDED.labels, heartbeat_at = now(),
                                            held_commands = '{}', held_at = now()
     RETURNING ${COLUMNS}`,
    [p.name, p.capacity, JSON.stringify(p.labels ?? {})],
  );
  return rows[0];
}

/**
 * Marks a pool alive (or draining), with the commands it holds when it lists them (`held`: null
 * when it does not; what it lists is then unknown, never "nothing"). A deregistered pool stays
 * `stopped` (a late beat must not revive it: its claims are already up for grabs) until it
 * registers again. `stopped` then, and undefined when the pool was never registered.
 */
export async function heartbeatWorkerPool(q: Queryable, name: string, status: 'ready' | 'draining', held: number[] | null): Promise<RuntimeRow | 'stopped' | undefined> {
  const { rows } = await q.query<RuntimeRow>(
    `UPDATE core.runtime SET heartbeat_at = now(), status = $2, held_commands = $3::bigint[], held_at = CASE WHEN $3::bigint[] IS NULL THEN NULL ELSE now() END
      WHERE kind = 'worker_pool' AND name = $1 AND status <> 'stopped' RETURNING ${COLUMNS}`,
    [name, status, held],
  );
  if (rows[0]) return rows[0];
  const { rowCount } = await q.query(`SELECT 1 FROM core.runtime WHERE kind = 'worker_pool' AND name = $1`, [name]);
  return rowCount ? 'stopped' : undefined;
}

export async function deregisterWorkerPool(q: Queryable, name: string): Promise<boolean> {
  const { rowCount } = await q.query(`UPDATE core.runtime SET status = 'stopped', heartbeat_at = now() WHERE kind = 'worker_pool' AND name = $1`, [name]);
  return (rowCount ?? 0) > 0;
}

/**
 * Forgets the worker pools silent for over `silentSeconds` (deregistered ones: their last beat is
 * their deregistration; and ones killed without it) that hold no claimed or running command:
 * their rows go. Returns their names, in order. A pool that beats again meanwhile is kept (the
 * silence is checked again on the row the delete takes).
 */
export async function forgetSilentWorkerPools(q: Queryable, silentSeconds: number): Promise<string[]> {
  const { rows } = await q.query<{ name: string }>({
    name: 'svc_worker_pools_forget',
    text: `DELETE FROM core.runtime r
            WHERE r.kind = 'worker_pool' AND r.heartbeat_at < now() - make_interval(secs => $1::float8)
              AND NOT EXISTS (SELECT 1 FROM core.command c WHERE c.worker_id = r.name AND ${heldSql('c')})
           RETURNING r.name`,
    values: [silentSeconds],
  });
  return rows.map((r) => r.name).sort();
}

export async function listWorkerPools(q: Queryable): Promise<RuntimeRow[]> {
  const { rows } = await q.query<RuntimeRow>(`SELECT ${COLUMNS} FROM core.runtime WHERE kind = 'worker_pool' ORDER BY name`);
  return rows;
}

/**
 * Worker pools alive now (not stopped, heartbeat within `staleSeconds`) and, with
 * `beatWithinSeconds`, heard from within that many seconds.
 */
export async function countLiveWorkerPools(q: Queryable, staleSeconds: number, beatWithinSeconds: number | null): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM core.runtime
      WHERE kind = 'worker_pool' AND status <> 'stopped' AND heartbeat_at >= now() - make_interval(secs => $1)
        AND ($2::float8 IS NULL OR heartbeat_at >= now() - make_interval(secs => $2::float8))`,
    [staleSeconds, beatWithinSeconds],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Takes the lease `name` for `holder` for `ttlSeconds` when no one holds it (a holder's lease
 * that expired counts as free: a dead holder does not block) and, with `minGapSeconds`, the
 * last taking was at least that long ago (one sweep per interval across servers). The lease row's
 * heartbeat_at is when it was last taken. True when taken.
 */
export async function takeLease(q: Queryable, p: { name: string; holder: string; ttlSeconds: number; minGapSeconds: number | null }): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO core.runtime AS l (kind, name, status, holder, heartbeat_at, lease_expires_at)
     VALUES ('lease', $1, 'held', $2, now(), now() + make_interval(secs => $3))
     ON CONFLICT (kind, name) DO UPDATE SET status = 'held', holder = EXCLUDED.holder, heartbeat_at = now(), lease_expires_at = EXCLUDED.lease_expires_at
      WHERE (l.status <> 'held' OR l.lease_expires_at IS NULL OR l.lease_expires_at < now())
        AND ($4::float8 IS NULL OR l.heartbeat_at <= now() - make_interval(secs => $4))`,
    [p.name, p.holder, p.ttlSeconds, p.minGapSeconds],
  );
  return (rowCount ?? 0) > 0;
}

/** Moves the lease's end to `ttlSeconds` from now while `holder` still holds it; false when it no longer does. */
export async function renewLease(q: Queryable, p: { name: string; holder: string; ttlSeconds: number }): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE core.runtime SET lease_expires_at = now() + make_interval(secs => $3) WHERE kind = 'lease' AND name = $1 AND holder = $2 AND status = 'held'`,
    [p.name, p.holder, p.ttlSeconds],
  );
  return (rowCount ?? 0) > 0;
}

/** Gives the lease back (only when `holder` still holds it). */
export async function releaseLease(q: Queryable, name: string, holder: string): Promise<void> {
  await q.query(`UPDATE core.runtime SET status = 'ready', lease_expires_at = NULL WHERE kind = 'lease' AND name = $1 AND holder = $2 AND status = 'held'`, [name, holder]);
}

/** Who holds lease `name` and until when; undefined when no one does. */
export async function leaseHolder(q: Queryable, name: string): Promise<{ holder: string; expires_at: Date } | undefined> {
  const { rows } = await q.query<{ holder: string; expires_at: Date }>(
    `SELECT holder, lease_expires_at AS expires_at FROM core.runtime WHERE kind = 'lease' AND name = $1 AND status = 'held' AND lease_expires_at >= now()`,
    [name],
  );
  return rows[0];
}
