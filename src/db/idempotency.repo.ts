import type { Queryable } from './queryable.ts';

/** A start's idempotency key with the answer it got first (see migrations/0009_idempotency.sql). */
export type IdempotencyKeyRow = {
  scope: string;
  key: string;
  request_hash: string;
  execution_id: number;
  status_code: number;
  response: unknown;
  created_at: Date;
};

/** The stored first answer to `key` within `scope`, if any (however old: the sweep removes old ones). */
export async function findIdempotencyKey(q: Queryable, scope: string, key: string): Promise<IdempotencyKeyRow | undefined> {
  const { rows } = await q.query<IdempotencyKeyRow>(
    'SELECT scope, key, request_hash, execution_id, status_code, response, created_at FROM core.idempotency_key WHERE scope = $1 AND key = $2',
    [scope, key],
  );
  return rows[0];
}

const SWEEP_BATCH_ROWS = 5_000;

/**
 * Deletes keys older than `olderThanMs`, oldest first, in batches of SWEEP_BATCH_ROWS (each its
 * own short statement, by the created_at index); returns how many it deleted.
 */
export async function deleteExpiredIdempotencyKeys(q: Queryable, olderThanMs: number): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await q.query(
      `DELETE FROM core.idempotency_key k
        USING (SELECT scope, key FROM core.idempotency_key
                WHERE created_at < now() - $1::bigint * interval '1 millisecond'
                ORDER BY created_at LIMIT $2) old
        WHERE k.scope = old.scope AND k.key = old.key`,
      [olderThanMs, SWEEP_BATCH_ROWS],
    );
    total += rowCount ?? 0;
    if ((rowCount ?? 0) < SWEEP_BATCH_ROWS) return total;
  }
}

const UNIQUE_VIOLATION = '23505';

/** True for the error of a start whose key another start (of another server, or before) wrote first. */
export function isIdempotencyKeyTaken(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === UNIQUE_VIOLATION && 'constraint' in err && err.constraint === 'idempotency_key_pkey';
}
