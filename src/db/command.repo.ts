import type { Queryable } from './queryable.ts';

export type CommandStatus = 'PENDING' | 'CLAIMED' | 'RUNNING' | 'WAITING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';

export type CommandRow = {
  command_id: number;
  execution_id: number;
  catalog_id: number;
  seq: number;
  step: string;
  loop_index: number | null;
  status: CommandStatus;
  attempt: number;
  worker_id: string | null;
  input: unknown;
  claimed_at: Date | null;
  heartbeat_at: Date | null;
  created_at: Date;
};

export type NewCommand = {
  execution_id: number;
  catalog_id: number;
  seq: number;
  step: string;
  loop_index: number | null;
  status: CommandStatus;
  input: unknown;
};

const COLUMNS = 'command_id, execution_id, catalog_id, seq, step, loop_index, status, attempt, worker_id, input, claimed_at, heartbeat_at, created_at';

/** Inserts commands; returns their ids by (execution_id, seq). */
export async function insertCommands(q: Queryable, rows: NewCommand[]): Promise<{ command_id: number; execution_id: number; seq: number }[]> {
  if (!rows.length) return [];
  const { rows: out } = await q.query<{ command_id: number; execution_id: number; seq: number }>(
    `INSERT INTO core.command (execution_id, catalog_id, seq, step, loop_index, status, input)
     SELECT execution_id, catalog_id, seq, step, loop_index, status, input
       FROM jsonb_to_recordset($1::jsonb) AS x(execution_id bigint, catalog_id bigint, seq int, step text, loop_index int, status text, input jsonb)
     RETURNING command_id, execution_id, seq`,
    [JSON.stringify(rows)],
  );
  return out;
}

/** Commands by id (no lock: callers hold the execution lock). */
export async function getCommands(q: Queryable, ids: number[]): Promise<CommandRow[]> {
  if (!ids.length) return [];
  const { rows } = await q.query<CommandRow>(`SELECT ${COLUMNS} FROM core.command WHERE command_id = ANY($1::bigint[])`, [ids]);
  return rows;
}

export async function getCommand(q: Queryable, id: number): Promise<CommandRow | undefined> {
  return (await getCommands(q, [id]))[0];
}

export type CommandUpdate = { command_id: number; status: CommandStatus; heartbeat?: boolean };

/** Applies status changes (and heartbeats) in one statement. */
export async function updateCommands(q: Queryable, rows: CommandUpdate[]): Promise<void> {
  if (!rows.length) return;
  await q.query(
    `UPDATE core.command c SET status = x.status, updated_at = now(),
            heartbeat_at = CASE WHEN x.heartbeat THEN now() ELSE c.heartbeat_at END
       FROM jsonb_to_recordset($1::jsonb) AS x(command_id bigint, status text, heartbeat boolean)
      WHERE c.command_id = x.command_id`,
    [JSON.stringify(rows)],
  );
}

/** Cancels the named commands of one execution that are not finished yet. */
export async function cancelCommandsBySeq(q: Queryable, executionId: number, seqs: number[]): Promise<void> {
  if (!seqs.length) return;
  await q.query(
    `UPDATE core.command SET status = 'CANCELLED', updated_at = now()
      WHERE execution_id = $1 AND seq = ANY($2::int[]) AND status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')`,
    [executionId, seqs],
  );
}

/**
 * Claims one command for a worker: PENDING, or held by a claimer the policy calls gone (its pool
 * stopped or its heartbeat — the pool's, or the claim's for an unregistered claimer — is older
 * than staleSeconds, or the claim is older than hardTimeoutSeconds).
 * Bumps `attempt` so reports from an older claim are fenced off. Undefined when not claimable.
 */
export async function claimCommand(
  q: Queryable,
  commandId: number,
  workerId: string,
  policy: { staleSeconds: number; hardTimeoutSeconds: number | null },
): Promise<CommandRow | undefined> {
  const { rows } = await q.query<CommandRow>(
    `UPDATE core.command c
        SET status = 'CLAIMED', worker_id = $2, attempt = attempt + 1, claimed_at = now(), heartbeat_at = now(), updated_at = now()
      WHERE c.command_id = $1
        AND (c.status = 'PENDING'
             OR (c.status IN ('CLAIMED', 'RUNNING') AND (
                   -- a registered holder that stopped or went quiet
                   EXISTS (SELECT 1 FROM core.runtime r WHERE r.kind = 'worker_pool' AND r.name = c.worker_id
                            AND (r.status <> 'ready' OR r.heartbeat_at < now() - make_interval(secs => $3)))
                   -- an unregistered holder whose own claim heartbeat went quiet
                   OR (NOT EXISTS (SELECT 1 FROM core.runtime r WHERE r.kind = 'worker_pool' AND r.name = c.worker_id)
                       AND c.heartbeat_at < now() - make_interval(secs => $3))
                   OR ($4::int IS NOT NULL AND c.claimed_at < now() - make_interval(secs => $4)))))
      RETURNING ${COLUMNS}`,
    [commandId, workerId, policy.staleSeconds, policy.hardTimeoutSeconds],
  );
  return rows[0];
}

/** Claims up to `max` PENDING commands, oldest first, skipping rows other claimers hold. */
export async function claimNextCommands(q: Queryable, workerId: string, max: number): Promise<CommandRow[]> {
  if (max <= 0) return [];
  const { rows } = await q.query<CommandRow>(
    `UPDATE core.command c
        SET status = 'CLAIMED', worker_id = $1, attempt = attempt + 1, claimed_at = now(), heartbeat_at = now(), updated_at = now()
      WHERE c.command_id IN (SELECT command_id FROM core.command WHERE status = 'PENDING' ORDER BY command_id LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING ${COLUMNS}`,
    [workerId, max],
  );
  return rows;
}

/** Wakes listeners (workers' long polls) after commit: NOTIFY is transactional. */
export async function notifyCommands(q: Queryable, count: number): Promise<void> {
  await q.query(`SELECT pg_notify('svc_commands', $1)`, [String(count)]);
}

/** Records a heartbeat from the claimer of a command; false when the claim is gone or stale. */
export async function heartbeatCommand(q: Queryable, commandId: number, workerId: string, attempt: number | undefined): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE core.command SET heartbeat_at = now() WHERE command_id = $1 AND worker_id = $2 AND ($3::int IS NULL OR attempt = $3)
        AND status IN ('CLAIMED', 'RUNNING')`,
    [commandId, workerId, attempt ?? null],
  );
  return (rowCount ?? 0) > 0;
}

/** Of the given commands, those that were cancelled (their workers should stop them). */
export async function cancelledAmong(q: Queryable, ids: number[]): Promise<number[]> {
  if (!ids.length) return [];
  const { rows } = await q.query<{ command_id: number }>(
    `SELECT command_id FROM core.command WHERE command_id = ANY($1::bigint[]) AND status = 'CANCELLED'`,
    [ids],
  );
  return rows.map((r) => r.command_id);
}
