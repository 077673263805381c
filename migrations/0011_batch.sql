-- Asynchronous batch intake (POST /api/events/batch). A batch is a worker report routed later:
-- its events wait here, each with an id of its own (`event_ids` of the 202 answer), until a
-- processor routes them like a synchronous report (they then enter core.event in order, each
-- carrying its `batch_event_id`). The execution's log records `batch.accepted` when the batch is
-- accepted and `batch.completed` / `batch.failed` when it is done.

CREATE SEQUENCE core.batch_event_id_seq AS bigint;

CREATE TABLE core.batch_request (
  batch_id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  request_id          uuid NOT NULL UNIQUE,
  execution_id        bigint NOT NULL,
  worker_id           text,
  -- The client's Idempotency-Key (the request id when it sent none), in the namespace of its
  -- route and caller (src/api/idempotent-starts.ts keyScope); a second request with it gets the
  -- first answer again.
  key_scope           text NOT NULL,
  idempotency_key     text NOT NULL,
  body_hash           text NOT NULL,                 -- sha256 of the canonical body
  events              jsonb,                         -- the items until routed; NULL once in core.event
  event_ids           bigint[] NOT NULL,
  queue_depth         integer NOT NULL,              -- as answered at acceptance
  state               text NOT NULL DEFAULT 'accepted'
                      CHECK (state IN ('accepted', 'processing', 'completed', 'failed')),
  error_code          text,
  message             text,
  commands_generated  integer NOT NULL DEFAULT 0,
  attempts            integer NOT NULL DEFAULT 0,
  -- Set in the transaction that routed the items: a processor that died after it only writes the
  -- completion, never routes them twice.
  routed_at           timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (key_scope, idempotency_key)
);
-- What is waiting: the queue depth, and a processor's pick of an execution's batches in order.
CREATE INDEX batch_request_pending_idx ON core.batch_request (execution_id, batch_id) WHERE state IN ('accepted', 'processing');
-- Finished requests are dropped after their retention (src/db/batch.repo.ts).
CREATE INDEX batch_request_finished_idx ON core.batch_request (updated_at) WHERE state IN ('completed', 'failed');
ALTER TABLE core.batch_request SET (fillfactor = 80);

-- Aborts the routing of batches that another processor routed or failed meanwhile (a processor
-- presumed dead that was only slow): nothing of that routing is written.
CREATE OR REPLACE FUNCTION core.svc_batch_moved(what text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'batch moved on: %', what USING ERRCODE = 'SVC02';
END
$$;
