-- Waiting and control (DESIGN.md "Waiting and control"): an execution may be `paused`, and a
-- step may wait for a time or a signal without holding a worker or a connection.
ALTER TABLE core.execution DROP CONSTRAINT IF EXISTS execution_status_check;
ALTER TABLE core.execution ADD CONSTRAINT execution_status_check
  CHECK (status IN ('running', 'paused', 'completed', 'failed', 'cancelled')) NOT VALID;
ALTER TABLE core.event DROP CONSTRAINT IF EXISTS event_status_check;
-- NOT VALID: rows already stored hold the old statuses only; new rows are checked.
ALTER TABLE core.event ADD CONSTRAINT event_status_check
  CHECK (status IN ('running', 'paused', 'completed', 'failed', 'cancelled')) NOT VALID;

-- What a waiting step waits for, one row per wait (the execution's seq for it), written by the
-- unit write in the statement that appends the event that set it, and removed by the one that
-- ends it (a timer fired, a signal came or timed out, the execution ended). `wake_at`: when a
-- timer fires or a signal wait times out (NULL: a signal wait without timeout). The timekeeper
-- (src/waits/timekeeper.ts) takes due rows by `wait_due_idx`.
CREATE TABLE core.wait (
  execution_id   bigint NOT NULL REFERENCES core.execution (execution_id) ON DELETE CASCADE,
  seq            integer NOT NULL,
  step           text NOT NULL,
  kind           text NOT NULL CHECK (kind IN ('timer', 'signal')),
  signal         text,
  wake_at        timestamptz,
  approval_roles text[],
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (execution_id, seq)
);
CREATE INDEX wait_due_idx ON core.wait (wake_at) WHERE wake_at IS NOT NULL;
