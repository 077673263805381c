import type { CommandStatus } from '../../machines/command.machine.ts';
import type { Queryable } from './queryable.ts';

export type { CommandStatus } from '../../machines/command.machine.ts';

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
  /** The request that claimed it, where the reader selected it (claim answers). */
  claim_token?: string | null;
  input: unknown;
  claimed_at: Date | null;
  heartbeat_at: Date | null;
  created_at: Date;
};

const COLUMNS = 'command_id, execution_id, catalog_id, seq, step, loop_index, status, attempt, worker_id, input, claimed_at, heartbeat_at, created_at';

export async function getCommand(q: Queryable, id: number): Promise<CommandRow | undefined> {
  const { rows } = await q.query<CommandRow>(`SELECT ${COLUMNS} FROM core.command WHERE command_id = $1`, [id]);
  return rows[0];
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

/** Claims up to `max` PENDING commands, oldest first, skipping rows other claimers hold; `token` names the claiming request. */
export async function claimNextCommands(q: Queryable, workerId: string, max: number, token: string | null = null): Promise<CommandRow[]> {
  if (max <= 0) return [];
  const { rows } = await q.query<CommandRow>(
    `UPDATE core.command c
        SET status = 'CLAIMED', worker_id = $1, claim_token = $3, attempt = attempt + 1, claimed_at = now(), heartbeat_at = now(), updated_at = now()
      WHERE c.command_id IN (SELECT command_id FROM core.command WHERE status = 'PENDING' ORDER BY command_id LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING ${COLUMNS}`,
    [workerId, max, token],
  );
  return rows;
}

/**
 * Commands a worker's request (`token`) claimed that it has not started: what a lost answer
 * carried, for the same request sent again. Oldest first.
 */
export async function claimedByRequest(q: Queryable, workerId: string, token: string): Promise<CommandRow[]> {
  const { rows } = await q.query<CommandRow>(
    `SELECT ${COLUMNS} FROM core.command WHERE status = 'CLAIMED' AND worker_id = $1 AND claim_token = $2 ORDER BY command_id`,
    [workerId, token],
  );
  return rows;
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
