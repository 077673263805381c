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

/** Registers (or re-registers) a worker pool as ready. */
export async function registerWorkerPool(q: Queryable, p: { name: string; capacity: number; labels: unknown }): Promise<RuntimeRow> {
  const { rows } = await q.query<RuntimeRow>(
    `INSERT INTO core.runtime (kind, name, status, capacity, labels, heartbeat_at) VALUES ('worker_pool', $1, 'ready', $2, $3, now())
     ON CONFLICT (kind, name) DO UPDATE SET status = 'ready', capacity = EXCLUDED.capacity, labels = EXCLUDED.labels, heartbeat_at = now()
     RETURNING ${COLUMNS}`,
    [p.name, p.capacity, JSON.stringify(p.labels ?? {})],
  );
  return rows[0];
}

/**
 * Marks a pool alive (or draining). A deregistered pool stays `stopped` (a late beat must not
 * revive it: its claims are already up for grabs) until it registers again. `stopped` then, and
 * undefined when the pool was never registered.
 */
export async function heartbeatWorkerPool(q: Queryable, name: string, status: 'ready' | 'draining'): Promise<RuntimeRow | 'stopped' | undefined> {
  const { rows } = await q.query<RuntimeRow>(
    `UPDATE core.runtime SET heartbeat_at = now(), status = $2 WHERE kind = 'worker_pool' AND name = $1 AND status <> 'stopped' RETURNING ${COLUMNS}`,
    [name, status],
  );
  if (rows[0]) return rows[0];
  const { rowCount } = await q.query(`SELECT 1 FROM core.runtime WHERE kind = 'worker_pool' AND name = $1`, [name]);
  return rowCount ? 'stopped' : undefined;
}

export async function deregisterWorkerPool(q: Queryable, name: string): Promise<boolean> {
  const { rowCount } = await q.query(`UPDATE core.runtime SET status = 'stopped', heartbeat_at = now() WHERE kind = 'worker_pool' AND name = $1`, [name]);
  return (rowCount ?? 0) > 0;
}

export async function listWorkerPools(q: Queryable): Promise<RuntimeRow[]> {
  const { rows } = await q.query<RuntimeRow>(`SELECT ${COLUMNS} FROM core.runtime WHERE kind = 'worker_pool' ORDER BY name`);
  return rows;
}
