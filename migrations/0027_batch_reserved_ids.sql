-- A batch's `event_ids` are the ids its items take in the execution's log (core.event.event_id):
-- the accept statement reserves them beside the batch's `batch.accepted` marker, moving
-- core.execution.last_event_id on by the marker and the items, and the routing writes each item
-- at its id (src/db/batch-accept.repo.ts, actors/fold.ts). The global sequence that numbered the
-- items apart from the log, and the check that aborted a second routing of a batch (now the log's
-- key refuses it), are no longer used.
--
-- This change was first migration 0030, taken back by 0026 (PostgreSQL 18.4 crashed under batch
-- load: see core.svc_event_written below). It runs on every database: a fresh one, one that ran
-- 0026 alone, and one that ran 0030 then 0026.

-- Whether the log holds event `event_id` of execution `execution_id`: the batch statements that
-- lock or update rows (src/db/batch.repo.ts, the claim and the end) ask it here, never by a
-- subquery on core.event of their own. In PostgreSQL 18.4 a recheck of a row another transaction
-- updated (EvalPlanQual: a FOR UPDATE that waited, an UPDATE of a changed row) initialises every
-- subplan of the statement again in its own memory, and with it the run-time partition pruning
-- state of a scan of core.event it shares with the statement (ExecInitPartitionExecPruning); when
-- the recheck ends (a FOR UPDATE's scan runs out) that memory is freed while the statement still
-- prunes with it: a backend killed by signal 11 in perform_pruning_base_step. A PL/pgSQL function
-- runs its query in an executor of its own, which no recheck of the caller reaches; its
-- parameters prune the partitions when it starts, not at run time. STABLE: it reads with the
-- caller's snapshot, as the subquery did.
CREATE FUNCTION core.svc_event_written(execution_id bigint, event_id bigint) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM core.event v WHERE v.execution_id = svc_event_written.execution_id AND v.event_id = svc_event_written.event_id);
END
$$;

-- Batches still waiting from before: their ids came from the sequence. One that a processor
-- routed (routed_at) has its items in the log under ids of the log already: it is completed here
-- (its `batch.completed` record is not written). The others get ids reserved at the end of their
-- execution's log, in batch order, as the accept statement would have given them (without the
-- marker: nothing reads it); their items are routed at those ids by the next routing.
UPDATE core.batch_request
   SET state = 'completed', events = NULL, updated_at = now(),
       message = 'routed before migration 0027_batch_reserved_ids; completed by it'
 WHERE state IN ('accepted', 'processing') AND routed_at IS NOT NULL;

WITH waiting AS (
  SELECT b.batch_id, b.execution_id, cardinality(b.event_ids) AS n,
         sum(cardinality(b.event_ids)) OVER (PARTITION BY b.execution_id ORDER BY b.batch_id) AS upto
    FROM core.batch_request b
   WHERE b.state IN ('accepted', 'processing')
), moved AS (
  UPDATE core.batch_request b
     SET event_ids = ARRAY(SELECT generate_series(e.last_event_id + w.upto - w.n + 1, e.last_event_id + w.upto))
    FROM waiting w JOIN core.execution e ON e.execution_id = w.execution_id
   WHERE b.batch_id = w.batch_id
  RETURNING b.execution_id, cardinality(b.event_ids) AS n
)
UPDATE core.execution e SET last_event_id = e.last_event_id + m.n
  FROM (SELECT execution_id, sum(n) AS n FROM moved GROUP BY execution_id) m
 WHERE e.execution_id = m.execution_id;

DROP SEQUENCE IF EXISTS core.batch_event_id_seq;
DROP FUNCTION IF EXISTS core.svc_batch_moved(text);

COMMENT ON COLUMN core.batch_request.event_ids IS 'ids reserved for the items in the execution''s log (core.event.event_id), the 202''s event_ids';
COMMENT ON COLUMN core.batch_request.routed_at IS 'when the batch was completed with its items in the log (a routing of the execution wrote them at their ids)';
