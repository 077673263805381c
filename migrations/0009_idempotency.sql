-- Idempotency keys of starts (POST /api/run/playbook, /api/execute): the first answer to a
-- key, written by the same statement that writes the start, so an execution and its key exist
-- together or not at all; the primary key makes a second start with the key fail instead.
-- `scope` is the route and the caller, so one key never answers another route's or caller's
-- request. Rows live 24 h at least; a periodic sweep deletes older ones by created_at.
CREATE TABLE core.idempotency_key (
  scope text NOT NULL,
  key text NOT NULL,
  -- sha256 of the request body (canonical JSON): the same key with another body is refused.
  request_hash text NOT NULL,
  execution_id bigint NOT NULL,
  status_code int NOT NULL,
  -- json, not jsonb: the answer is replayed as it was first sent, keys in their order.
  response json NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_key_created_at_idx ON core.idempotency_key (created_at);
