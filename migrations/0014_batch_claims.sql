-- Batch processors claim core.batch_request rows themselves (src/db/batch.repo.ts claimBatches):
-- an execution's oldest unfinished batch is its head, and a processor takes an execution by
-- locking that row (FOR UPDATE SKIP LOCKED) and moving its batches to `processing`; a head left
-- `processing` longer than the lease (the processing timeout + a margin, from `updated_at`) is
-- taken again. pg-boss carried a job per execution before; its schema goes.
--
-- The commands a batch issued name it, written in the transaction that issues them, so that a
-- claim reads from the command row itself that it is the first claim of a batch's command
-- (svc_batch_first_worker_claim_latency_seconds).
ALTER TABLE core.command ADD COLUMN issued_by_batch bigint;

-- The job queue's tables (pg-boss, schema `pgboss`) held nothing the batch rows do not: an
-- unfinished batch is claimed from its row. Dropped by its owner; another role's is left to drop by hand.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'pgboss' AND pg_has_role(nspowner, 'USAGE')) THEN
    DROP SCHEMA pgboss CASCADE;
  ELSIF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'pgboss') THEN
    RAISE NOTICE 'schema pgboss (the job queue of earlier versions) belongs to another role; it is unused and may be dropped';
  END IF;
END $$;
