import { EVENT } from '../../machines/event-types.ts';
import { BATCH_PENDING_SQL } from './batch-pending-sql.ts';
import { eventLogCtes, recordAppends } from './event-log.ts';
import type { Queryable } from './queryable.ts';

/** A batch to accept, as the accept statement takes it (`events` are the validated items). */
export type AcceptInput = {
  pos: number;
  request_id: string;
  execution_id: number;
  worker_id: string | null;
  /** The key's namespace: its route and caller. */
  key_scope: string;
  idempotency_key: string;
  body_hash: string;
  events: unknown[];
};

/** A stored batch as its first 202 answer shows it (a replay answers the same). */
export type AcceptedBatch = {
  request_id: string;
  execution_id: number;
  idempotency_key: string;
  body_hash: string;
  event_ids: number[];
  queue_depth: number;
};

/** What became of each input: stored now, already stored under its key, or not stored (queue full). */
export type AcceptOutcome =
  | { pos: number; kind: 'accepted' | 'duplicate'; batch: AcceptedBatch }
  | { pos: number; kind: 'full'; depth: number };

/** Executions of the log whose last events are the markers just appended (to advance hot snapshots). */
export type MarkerAppend = { execution_id: number; from_event_id: number; to_event_id: number; applied: boolean };

type Row = {
  kind: 'accepted' | 'duplicate' | 'full' | 'marker' | 'found';
  pos: number | null;
  request_id: string | null;
  execution_id: number | null;
  idempotency_key: string | null;
  body_hash: string | null;
  event_ids: (number | string)[] | null;
  queue_depth: number | null;
  from_event_id: number | null;
  to_event_id: number | null;
  applied: boolean | null;
};

/** What one accept statement did: the outcome of each input whose execution exists, and the markers appended. */
export type AcceptResult = { found: Set<number>; outcomes: AcceptOutcome[]; markers: MarkerAppend[] };

// The accept statement (acceptBatches): parameters $1 the inputs (jsonb), $2 the queue limit,
// $3 their executions. Each stored batch takes ids in its execution's log, in `pos` order: one
// for its `batch.accepted` marker, written now, then one per item, reserved (the 202's
// `event_ids`): the items are written at them when routed (actors/fold.ts). The ids follow the
// `last_event_id` the lock read, which the append (log_bump) moves on by the same count. There
// is no ON CONFLICT: a batch left out in the middle would leave a gap, so a key stored
// meanwhile by another statement fails this one (unique violation) and the caller sends it again.
const ACCEPT_STATEMENT = `
WITH x AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(pos int, request_id uuid, execution_id bigint, worker_id text,
         key_scope text, idempotency_key text, body_hash text, events jsonb)
), lk AS (
  SELECT e.execution_id, e.last_event_id FROM core.execution e WHERE e.execution_id = ANY($3::bigint[]) ORDER BY e.execution_id FOR UPDATE
), dup AS (
  SELECT b.request_id, b.execution_id, b.key_scope, b.idempotency_key, b.body_hash, b.event_ids, b.queue_depth
    FROM x CROSS JOIN LATERAL (
      SELECT * FROM core.batch_request b WHERE b.key_scope = x.key_scope AND b.idempotency_key = x.idempotency_key LIMIT 1) b
), depth AS (
  SELECT count(*)::int AS n FROM (SELECT 1 FROM core.batch_request WHERE state IN (${BATCH_PENDING_SQL}) LIMIT $2) q
), fresh AS (
  SELECT x.*, d.n + row_number() OVER (ORDER BY x.pos) AS depth_after
    FROM x CROSS JOIN depth d
   WHERE x.execution_id IN (SELECT execution_id FROM lk)
     AND NOT EXISTS (SELECT 1 FROM dup WHERE dup.key_scope = x.key_scope AND dup.idempotency_key = x.idempotency_key)
), kept AS (
  SELECT f.*, l.last_event_id + sum(1 + jsonb_array_length(f.events)) OVER (PARTITION BY f.execution_id ORDER BY f.pos)
                - jsonb_array_length(f.events) AS marker_id
    FROM fresh f JOIN lk l ON l.execution_id = f.execution_id
   WHERE f.depth_after <= $2
), ins AS (
  INSERT INTO core.batch_request (request_id, execution_id, worker_id, key_scope, idempotency_key, body_hash, events, event_ids, queue_depth)
  SELECT k.request_id, k.execution_id, k.worker_id, k.key_scope, k.idempotency_key, k.body_hash, k.events,
         ARRAY(SELECT generate_series(k.marker_id + 1, k.marker_id + jsonb_array_length(k.events))), k.depth_after
    FROM kept k ORDER BY k.pos
  RETURNING batch_id, request_id, execution_id, worker_id, idempotency_key, body_hash, event_ids, queue_depth
), per AS (
  SELECT execution_id, sum(1 + cardinality(event_ids))::int AS n FROM ins GROUP BY execution_id
), ${eventLogCtes({
  appends: recordAppends('per', 'marker'),
  events: `(SELECT i.execution_id, (row_number() OVER (PARTITION BY i.execution_id ORDER BY i.batch_id))::int AS ord, '${EVENT.batchAccepted}'::text AS event_type,
            NULL::text AS status, NULL::text AS step, NULL::bigint AS command_id, i.worker_id,
            jsonb_build_object('request_id', i.request_id, 'events', cardinality(i.event_ids), 'event_ids', to_jsonb(i.event_ids)) AS context,
            NULL::jsonb AS result, NULL::jsonb AS error, NULL::int AS issued_seq, k.marker_id AS event_id
              FROM ins i JOIN kept k ON k.request_id = i.request_id)`,
  ids: '$3::bigint[]',
}).join(', ')}
SELECT 'accepted' AS kind, f.pos, i.request_id::text, i.execution_id, i.idempotency_key, i.body_hash, i.event_ids, i.queue_depth,
       NULL::bigint AS from_event_id, NULL::bigint AS to_event_id, NULL::boolean AS applied
  FROM ins i JOIN fresh f ON f.request_id = i.request_id
UNION ALL
SELECT 'duplicate', x.pos, d.request_id::text, d.execution_id, d.idempotency_key, d.body_hash, d.event_ids, d.queue_depth, NULL, NULL, NULL
  FROM dup d JOIN x ON x.key_scope = d.key_scope AND x.idempotency_key = d.idempotency_key
UNION ALL
SELECT 'full', f.pos, NULL, NULL, NULL, NULL, NULL, f.depth_after - 1, NULL, NULL, NULL FROM fresh f WHERE f.depth_after > $2
UNION ALL
SELECT 'marker', NULL, NULL, b.execution_id, NULL, NULL, NULL, NULL, b.from_event_id, b.to_event_id, b.applied FROM log_bump b
UNION ALL
SELECT 'found', NULL, NULL, lk.execution_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM lk`;

/** The unique key of a batch's idempotency key (its violation: another statement stored the key meanwhile). */
export const BATCH_KEY_CONSTRAINT = 'batch_request_key_scope_idempotency_key_key';

/**
 * Stores the batches with ONE statement (sent alone it commits by itself): it row-locks their
 * executions in id order first (accepts of one execution take turns, so their markers and the
 * order of their batches agree), then stores a request row per batch whose execution exists and that is not already
 * stored under its idempotency key, while the queue holds fewer than `maxDepth` unfinished
 * batches; and a `batch.accepted` marker per stored batch in its execution's log, followed by
 * the ids reserved for its items (the row's `event_ids`). The rows are the processors' queue
 * (batch.repo.ts claimBatches). A marker folds to nothing, so when the execution had no events
 * waiting to be applied the first one counts as applied at once; the reserved items wait.
 * Throws a unique violation on BATCH_KEY_CONSTRAINT when another statement stored one of the
 * keys since this one began (nothing is stored; sent again, that batch is a duplicate).
 */
export async function acceptBatches(q: Queryable, inputs: AcceptInput[], maxDepth: number): Promise<AcceptResult> {
  const { rows } = await q.query<Row>({ name: 'svc_batch_accept', text: ACCEPT_STATEMENT, values: [JSON.stringify(inputs), maxDepth, [...new Set(inputs.map((i) => i.execution_id))]] });
  const found = new Set<number>();
  const outcomes: AcceptOutcome[] = [];
  const markers: MarkerAppend[] = [];
  for (const r of rows) {
    if (r.kind === 'found') found.add(Number(r.execution_id));
    else if (r.kind === 'marker') {
      markers.push({ execution_id: Number(r.execution_id), from_event_id: Number(r.from_event_id), to_event_id: Number(r.to_event_id), applied: r.applied === true });
    } else if (r.kind === 'full') outcomes.push({ pos: Number(r.pos), kind: 'full', depth: Number(r.queue_depth) });
    else outcomes.push({ pos: Number(r.pos), kind: r.kind, batch: acceptedBatch(r) });
  }
  return { found, outcomes, markers };
}

function acceptedBatch(r: Pick<Row, 'request_id' | 'execution_id' | 'idempotency_key' | 'body_hash' | 'event_ids' | 'queue_depth'>): AcceptedBatch {
  return {
    request_id: String(r.request_id),
    execution_id: Number(r.execution_id),
    idempotency_key: String(r.idempotency_key),
    body_hash: String(r.body_hash),
    event_ids: (r.event_ids ?? []).map(Number),
    queue_depth: Number(r.queue_depth),
  };
}
