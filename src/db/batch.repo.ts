import { EVENT } from '../../machines/event-types.ts';
import { statesAllowing, type BatchState } from '../../machines/batch-request.machine.ts';
import { eventLogCtes, recordAppends } from './event-log.ts';
import { BATCH_PENDING_SQL } from './batch-pending-sql.ts';
import type { Queryable } from './queryable.ts';
import { opaque } from './opaque-param.ts';


/** GET /api/events/batch/{request_id}/status: the request as stored. */
export type BatchStatusRow = {
  request_id: string;
  execution_id: number;
  state: BatchState;
  error_code: string | null;
  message: string | null;
  commands_generated: number;
  idempotency_key: string;
  updated_at: Date;
};

/** A batch a processor took: its items, and whether a routing already wrote them at their reserved ids. */
export type ClaimedBatch = {
  batch_id: number;
  request_id: string;
  execution_id: number;
  worker_id: string | null;
  events: unknown[];
  event_ids: number[];
  routed: boolean;
};

export async function getBatchStatus(q: Queryable, requestId: string): Promise<BatchStatusRow | undefined> {
  const { rows } = await q.query<BatchStatusRow>(
    `SELECT request_id::text, execution_id, state, error_code, message, commands_generated, idempotency_key, updated_at
       FROM core.batch_request WHERE request_id = $1::uuid`,
    [requestId],
  );
  return rows[0];
}

/** Unfinished batches (accepted or processing), all servers together. */
export async function batchQueueDepth(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.batch_request WHERE state IN (${BATCH_PENDING_SQL})`);
  return rows[0].n;
}

// Whether batch `b`'s items are in its execution's log: all are written by one routing, each at
// its reserved id, so the first one tells (a batch holds at least one item). Asked of a function
// (migrations/0027_batch_reserved_ids.sql), never by a subquery on core.event: the claim and the
// end lock or update rows, and in PostgreSQL 18.4 a recheck of a row another transaction changed
// frees the run-time partition pruning state of a core.event scan in the same statement while the
// statement still uses it (a backend killed by signal 11). The function's query has an executor
// of its own.
const ROUTED_SQL = `core.svc_event_written(b.execution_id, b.event_ids[1])`;

// The claim's two picks of executions (`pick` CTEs, each a column `execution_id`): the next heads
// free to take, or executions named by the caller (it holds them already: a retry, a split call).
// A head is an execution's oldest unfinished batch; a processor takes the execution by locking it
// (SKIP LOCKED: a head another processor is taking is passed over) and moving it to `processing`,
// which the next claims see as held until the lease ($3 seconds from its `updated_at`) has run
// out. Later batches of a held execution are no head: one processor per execution at a time.
const PICK_NEXT = `pick AS (
  SELECT h.execution_id FROM core.batch_request h
   WHERE h.state IN (${BATCH_PENDING_SQL})
     AND (h.state <> 'processing' OR h.updated_at < now() - make_interval(secs => $3))
     AND NOT EXISTS (SELECT 1 FROM core.batch_request e
                      WHERE e.execution_id = h.execution_id AND e.batch_id < h.batch_id AND e.state IN (${BATCH_PENDING_SQL}))
   ORDER BY h.batch_id LIMIT $2
   FOR UPDATE SKIP LOCKED
)`;
const PICK_NAMED = `pick AS (SELECT unnest($2::bigint[]) AS execution_id)`;

/** The claim of the picked executions' unfinished batches, in order, up to $1 events each (the first batch always). */
function claimStatement(pick: string): string {
  return `WITH ${pick}, pending AS (
  SELECT batch_id, execution_id,
         sum(cardinality(event_ids)) OVER (PARTITION BY execution_id ORDER BY batch_id) - cardinality(event_ids) AS before,
         row_number() OVER (PARTITION BY execution_id ORDER BY batch_id) AS rn
    FROM core.batch_request
   WHERE execution_id IN (SELECT execution_id FROM pick) AND state IN (${BATCH_PENDING_SQL})
)
UPDATE core.batch_request b SET state = 'processing', attempts = b.attempts + 1, updated_at = now()
  FROM pending p
 -- By the picked row's execution too: with the named pick, every row is reached by its execution (one shard under Citus).
 WHERE b.execution_id = p.execution_id AND b.batch_id = p.batch_id AND (p.rn = 1 OR p.before < $1) AND b.state IN (${statesAllowing('claim').map((s) => `'${s}'`).join(', ')})
RETURNING b.batch_id, b.request_id::text, b.execution_id, b.worker_id, b.events, b.event_ids, ${ROUTED_SQL} AS routed`;
}
const CLAIM_NEXT = claimStatement(PICK_NEXT);
const CLAIM_NAMED = claimStatement(PICK_NAMED);

/**
 * Takes batches for one handling call (the machine's `claim`): of up to `next` executions whose
 * head is free (accepted, or held past `next.leaseSeconds`), oldest head first,
 * or of the executions named (which the caller holds); each execution's in order, up to
 * `maxEventsEach` events (its first batch always). The rest wait as the execution's next head.
 */
export async function claimBatches(
  q: Queryable,
  pick: { next: number; leaseSeconds: number } | { executions: number[] },
  maxEventsEach: number,
): Promise<ClaimedBatch[]> {
  const { rows } = await ('next' in pick
    ? q.query<ClaimedBatch>({ name: 'svc_batch_claim_next', text: CLAIM_NEXT, values: [maxEventsEach, pick.next, pick.leaseSeconds] })
    : q.query<ClaimedBatch>({ name: 'svc_batch_claim_named', text: CLAIM_NAMED, values: [maxEventsEach, pick.executions] }));
  return rows
    .map((r) => ({ ...r, batch_id: Number(r.batch_id), execution_id: Number(r.execution_id), event_ids: (r.event_ids ?? []).map(Number), events: r.events ?? [] }))
    .sort((a, b) => a.execution_id - b.execution_id || a.batch_id - b.batch_id);
}

/** What a batch item's record in the log says: routed under its id, or refused (`refused`: why); `commands`: those its batch issued. */
export type ItemRecord = { batch_id: number; event_id: number; refused: { error: string; detail: string } | null; commands: number };

/**
 * The records at the ids of batches routed by another routing (a report, a wake-up, an earlier
 * processor), for their `batch.completed`: which items were refused, and the commands named as
 * the batch's (each command row names the batch whose item issued it, whichever routing wrote it).
 */
export async function itemRecords(q: Queryable, batches: { batch_id: number; execution_id: number; event_ids: number[] }[]): Promise<ItemRecord[]> {
  if (!batches.length) return [];
  const { rows } = await q.query<{ batch_id: string; event_id: string; event_type: string; refused: string | null; detail: string | null; commands: number }>({
    name: 'svc_batch_item_records',
    text: `SELECT x.batch_id, v.event_id, v.event_type, v.context->>'refused' AS refused, v.context->>'detail' AS detail, n.commands
       FROM jsonb_to_recordset($1::jsonb) AS x(batch_id bigint, execution_id bigint, event_ids bigint[])
       JOIN core.event v ON v.execution_id = x.execution_id AND v.event_id = ANY(x.event_ids)
      CROSS JOIN LATERAL (SELECT count(*)::int AS commands FROM core.command c
                           WHERE c.execution_id = x.execution_id AND c.issued_by_batch = x.batch_id AND c.execution_id = ANY(${opaque('$2', 'bigint[]')})) n
      WHERE v.execution_id = ANY(${opaque('$2', 'bigint[]')})
      ORDER BY v.execution_id, v.event_id`,
    values: [JSON.stringify(batches), [...new Set(batches.map((b) => b.execution_id))]],
  });
  return rows.map((r) => ({
    batch_id: Number(r.batch_id),
    event_id: Number(r.event_id),
    refused: r.event_type === EVENT.commandRefused ? { error: r.refused ?? 'refused', detail: r.detail ?? '' } : null,
    commands: Number(r.commands),
  }));
}

/** How a batch ended: its record in the execution's log and the request's final state. */
export type BatchEnd = {
  batch_id: number;
  execution_id: number;
  worker_id: string | null;
  state: 'completed' | 'failed';
  event_type: typeof EVENT.batchCompleted | typeof EVENT.batchFailed;
  context: Record<string, unknown>;
  /** `{context: {...}}`: the measurements of the handling call (the spec's `result.context`). */
  result: { context: Record<string, unknown> };
  error: { code: string; message: string } | null;
  commands_generated: number;
  message: string;
};

/** The log of an execution advanced by the records just appended. */
export type RecordAppend = { execution_id: number; from_event_id: number; to_event_id: number; applied: boolean };

/**
 * Ends batches in one statement, all completed or all failed (`event`): each request moves to its
 * final state (completed only once routed, failed only if never routed; ones that moved on
 * otherwise are left alone) and its record is appended to its execution's log. A failed batch's
 * reserved ids get a `command.refused` record per item, naming the failure, so the log keeps no
 * gap (a routing that wrote them meanwhile makes this statement fail: it is tried again, and then
 * finds the batch routed). The records fold to nothing, so when the execution had no events
 * waiting to be applied they count as applied at once. Returns the log advances.
 */
export async function endBatches(q: Queryable, event: 'complete' | 'fail', ends: BatchEnd[]): Promise<RecordAppend[]> {
  if (!ends.length) return [];
  const state = event === 'complete' ? 'completed' : 'failed';
  if (ends.some((e) => e.state !== state)) throw new Error(`endBatches(${event}) given a batch that is not ${state}`);
  const { rows } = await q.query<RecordAppend>({
    name: 'svc_batch_end',
    text: `
WITH x AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(ord int, batch_id bigint, execution_id bigint, worker_id text, state text, event_type text,
         context jsonb, result jsonb, error jsonb, commands_generated int, message text)
), lk AS (
  SELECT e.execution_id FROM core.execution e WHERE e.execution_id = ANY(${opaque('$3', 'bigint[]')}) ORDER BY e.execution_id FOR UPDATE
), upd AS (
  UPDATE core.batch_request b
     SET state = x.state, error_code = x.error->>'code', message = x.message, commands_generated = x.commands_generated,
         events = CASE WHEN x.state = 'completed' THEN NULL ELSE b.events END, updated_at = now(),
         routed_at = CASE WHEN x.state = 'completed' THEN COALESCE(b.routed_at, now()) ELSE b.routed_at END
    FROM x
   -- By its execution too, known from the claim (one shard under Citus); the id array reaches it by its primary key.
   WHERE b.batch_id = x.batch_id AND b.execution_id = x.execution_id AND b.execution_id = ANY(${opaque('$3', 'bigint[]')})
     AND b.batch_id = ANY(${opaque('$4', 'bigint[]')}) AND b.state = ANY(${opaque('$2', 'text[]')}) AND ${ROUTED_SQL} = (x.state = 'completed')
     AND (SELECT count(*) FROM lk) >= 0
  RETURNING b.batch_id, b.worker_id, b.event_ids, b.events
), per AS (
  SELECT x.execution_id, count(*)::int AS n FROM x JOIN upd ON upd.batch_id = x.batch_id GROUP BY x.execution_id
), ${eventLogCtes({
  appends: recordAppends('per'),
  events: `(SELECT x.execution_id, (row_number() OVER (PARTITION BY x.execution_id ORDER BY x.ord))::int AS ord, x.event_type, NULL::text AS status,
            NULL::text AS step, NULL::bigint AS command_id, x.worker_id, x.context, x.result, x.error, NULL::int AS issued_seq, NULL::bigint AS event_id
              FROM x JOIN upd ON upd.batch_id = x.batch_id
            UNION ALL
            SELECT x.execution_id, 0, '${EVENT.commandRefused}', NULL, i.item->>'step', NULL, upd.worker_id,
                   CASE WHEN jsonb_typeof(i.item->'context') = 'object' THEN i.item->'context' ELSE '{}'::jsonb END
                     || jsonb_build_object('reported', i.item->>'event_type', 'refused', x.error->>'code', 'detail', x.message,
                                           'command_id', i.item->'command_id', 'attempt', i.item->'attempt', 'batch_event_id', upd.event_ids[i.n]),
                   i.item->'result', i.item->'error', NULL, upd.event_ids[i.n]
              FROM x JOIN upd ON upd.batch_id = x.batch_id
             CROSS JOIN LATERAL jsonb_array_elements(upd.events) WITH ORDINALITY AS i(item, n)
             WHERE x.state = 'failed')`,
  ids: opaque('$3', 'bigint[]'),
}).join(', ')}
SELECT execution_id, from_event_id, to_event_id, applied FROM log_bump`,
    values: [
      JSON.stringify(ends.map((e, ord) => ({ ...e, ord }))),
      statesAllowing(event),
      [...new Set(ends.map((e) => e.execution_id))],
      ends.map((e) => e.batch_id),
    ],
  });
  return rows.map((r) => ({ execution_id: Number(r.execution_id), from_event_id: Number(r.from_event_id), to_event_id: Number(r.to_event_id), applied: r.applied }));
}

/** Deletes up to `limit` finished requests older than `retentionSeconds`; returns how many. */
export async function deleteFinishedBatches(q: Queryable, retentionSeconds: number, limit: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM core.batch_request WHERE batch_id IN (
       SELECT batch_id FROM core.batch_request
        WHERE state IN ('completed', 'failed') AND updated_at < now() - make_interval(secs => $1) LIMIT $2)`,
    [retentionSeconds, limit],
  );
  return rowCount ?? 0;
}
