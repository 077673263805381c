import type pg from 'pg';
import { COMMAND_COLUMNS_NO_INPUT } from './command-plans.ts';
import type { CommandRow } from './command.repo.ts';
import type { ExecutionRow } from './execution.repo.ts';

const EXECUTION_COLUMNS = `execution_id, catalog_id, path, parent_execution_id, root_execution_id, parent_command_id, status,
  progress, result, error, machine_version, snapshot_event_id, applied_event_id, last_event_id, started_at, updated_at, finished_at`;

/** Checked non-negative integers as SQL text, for parameterless statements (ids, counts); throws on anything else. */
export function intList(ids: number[]): string {
  for (const id of ids) if (!Number.isSafeInteger(id) || id < 0) throw new Error(`not an id: ${id}`);
  return ids.join(',');
}

/**
 * Parameterless SQL (ids are checked integers, inlined) that takes the per-execution advisory
 * locks in id order, then loads the executions with row locks and the reported commands.
 * `cached` maps execution ids to the last_event_id of a snapshot held in memory: such a row's
 * stored snapshot is not sent when it is still at that event. Sent with BEGIN in one round trip;
 * parse the results with `parseLockAndLoad`.
 */
export function lockAndLoadSql(executionIds: number[], commandIds: number[], cached: ReadonlyMap<number, number> = new Map(), opts: LockAndLoadOptions = {}): string {
  const ids = [...new Set(executionIds)].sort((a, b) => a - b);
  const list = intList(ids);
  const hot = [...cached].filter(([id]) => ids.includes(id));
  const snapshot = hot.length
    ? `CASE WHEN (execution_id, last_event_id) IN (${hot.map(([id, last]) => `(${intList([id])}, ${intList([last])})`).join(', ')}) THEN NULL ELSE snapshot END AS snapshot`
    : 'snapshot';
  const clock = opts.timed ? [CLOCK_SQL] : [];
  return [
    ...(opts.statementTimeoutMs === undefined ? [] : [`SET LOCAL statement_timeout = ${intList([Math.max(1, Math.ceil(opts.statementTimeoutMs))])}`]),
    ...clock,
    `SELECT pg_advisory_xact_lock(id) FROM unnest(ARRAY[${list}]::bigint[]) AS id`,
    ...clock,
    `SELECT ${EXECUTION_COLUMNS}, ${snapshot} FROM core.execution WHERE execution_id = ANY(ARRAY[${list}]::bigint[]) ORDER BY execution_id FOR UPDATE`,
    `SELECT ${COMMAND_COLUMNS_NO_INPUT} FROM core.command WHERE command_id = ANY(ARRAY[${intList(commandIds)}]::bigint[])`,
    ...clock,
  ].join(';\n');
}

/**
 * `statementTimeoutMs`: every statement of the transaction is cancelled past it (SQLSTATE 57014).
 * `timed`: PostgreSQL's clock is read around the locks and the loads (parseLockAndLoad's `serverMs`).
 */
export type LockAndLoadOptions = { statementTimeoutMs?: number; timed?: boolean };

const CLOCK_SQL = 'SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms';

/** The executions and commands loaded by `lockAndLoadSql` (with the same options), and with `timed` how long the locks and the loads took. */
export function parseLockAndLoad(
  results: pg.QueryResult[],
  opts: LockAndLoadOptions = {},
): { executions: ExecutionRow[]; commands: CommandRow[]; serverMs?: { lock: number; load: number } } {
  const r = results.slice(opts.statementTimeoutMs === undefined ? 0 : 1);
  if (!opts.timed) return { executions: (r[1]?.rows ?? []) as ExecutionRow[], commands: (r[2]?.rows ?? []) as CommandRow[] };
  const at = (i: number) => Number((r[i]?.rows[0] as { ms?: unknown } | undefined)?.ms ?? 0);
  return {
    executions: (r[3]?.rows ?? []) as ExecutionRow[],
    commands: (r[4]?.rows ?? []) as CommandRow[],
    serverMs: { lock: at(2) - at(0), load: at(5) - at(2) },
  };
}
