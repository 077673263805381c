-- Flow control (DESIGN.md "Flow control"): named limits, their keys' counters, executions queued
-- for admission, and the command columns the claim orders and gates by.

-- A named limit (PUT /api/limits/{name}): at most `concurrency` holders at once per key, and/or
-- a token bucket per key: `rate_limit` tokens per `period_seconds`, holding at most `burst`.
CREATE TABLE core.flow_limit (
  name            text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
  concurrency     integer CHECK (concurrency >= 1),
  rate_limit      integer CHECK (rate_limit >= 1),
  period_seconds  double precision CHECK (period_seconds > 0),
  burst           integer CHECK (burst >= 1),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  CHECK (concurrency IS NOT NULL OR rate_limit IS NOT NULL),
  CHECK ((rate_limit IS NULL) = (period_seconds IS NULL) AND (rate_limit IS NULL) = (burst IS NULL))
);

-- One row per key of a limit that has been used: what holds a slot (`running`: claimed commands
-- and admitted executions), the bucket (`tokens` as of `refilled_at`; NULL: full) and when the
-- key was last served (the claim and the admitter take the least recently served key first: round
-- robin between keys). A playbook's inline `concurrency: {limit: N}` is the limit named `@<path>`
-- (a name no PUT can make) with `capacity` N. Rows are made by the statements that queue work
-- for a key; claims and the admitter count up, the release trigger below counts down.
CREATE TABLE core.flow_key (
  name         text NOT NULL,
  key          text NOT NULL,
  capacity     integer,
  running      integer NOT NULL DEFAULT 0,
  tokens       double precision,
  refilled_at  timestamptz NOT NULL DEFAULT now(),
  served_at    timestamptz NOT NULL DEFAULT '-infinity',
  PRIMARY KEY (name, key)
);

-- Executions started but not yet admitted (status `queued`): by a concurrency limit (`limit_name`,
-- `limit_key`) and/or a debounce window (`not_before`; `debounce_path`/`debounce_key` find the one
-- a later start of the burst replaces the arguments of, `args`). Written by the unit write that
-- starts the execution; `admitted_at` by the admitter (src/flow/admitter.ts), which then routes
-- `execution.admitted`; the row goes with the unit write that ends the execution.
CREATE TABLE core.admission (
  execution_id   bigint PRIMARY KEY REFERENCES core.execution (execution_id) ON DELETE CASCADE,
  limit_name     text,
  limit_key      text,
  priority       smallint NOT NULL DEFAULT 5,
  not_before     timestamptz NOT NULL DEFAULT now(),
  debounce_path  text,
  debounce_key   text,
  args           jsonb,
  created_at     timestamptz NOT NULL DEFAULT now(),
  admitted_at    timestamptz,
  CHECK ((limit_name IS NULL) = (limit_key IS NULL)),
  CHECK ((debounce_path IS NULL) = (debounce_key IS NULL))
);
-- The queue of each key, in admission order; and the unlimited (debounce-only) ones.
CREATE INDEX admission_queue_idx ON core.admission (limit_name, limit_key, priority DESC, execution_id)
  WHERE admitted_at IS NULL AND limit_name IS NOT NULL;
CREATE INDEX admission_free_idx ON core.admission (priority DESC, execution_id)
  WHERE admitted_at IS NULL AND limit_name IS NULL;
-- One open debounce window per playbook and key: a start of the burst finds it, two first starts cannot both open one.
CREATE UNIQUE INDEX admission_debounce_key ON core.admission (debounce_path, debounce_key)
  WHERE admitted_at IS NULL AND debounce_path IS NOT NULL;

ALTER TABLE core.execution DROP CONSTRAINT IF EXISTS execution_status_check;
ALTER TABLE core.execution ADD CONSTRAINT execution_status_check
  CHECK (status IN ('queued', 'running', 'paused', 'completed', 'failed', 'cancelled')) NOT VALID;
ALTER TABLE core.event DROP CONSTRAINT IF EXISTS event_status_check;
ALTER TABLE core.event ADD CONSTRAINT event_status_check
  CHECK (status IN ('queued', 'running', 'paused', 'completed', 'failed', 'cancelled')) NOT VALID;

-- What the claim orders by (priority first) and gates by (a task's `limit`).
ALTER TABLE core.command ADD COLUMN priority smallint NOT NULL DEFAULT 5;
ALTER TABLE core.command ADD COLUMN limit_name text;
ALTER TABLE core.command ADD COLUMN limit_key text;
-- The claim's two picks (src/db/command-plans.ts): commands of no limit by priority, then age;
-- and per key of a limit, the same order. The reaper's look at PENDING ones reads the first.
DROP INDEX IF EXISTS core.command_pending_idx;
CREATE INDEX command_pending_idx ON core.command (priority DESC, command_id) WHERE status = 'PENDING' AND limit_name IS NULL;
CREATE INDEX command_limited_idx ON core.command (limit_name, limit_key, priority DESC, command_id) WHERE status = 'PENDING' AND limit_name IS NOT NULL;

-- A held command of a limit that stops being held (it ended, was cancelled, or its row went)
-- gives its slot back, whichever statement moved it: a trigger, so that no path can forget it
-- (and a report racing a claim sees the row as it really was). Waiting claimers are woken.
CREATE FUNCTION core.svc_flow_release_command() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE core.flow_key SET running = GREATEST(running - 1, 0) WHERE name = OLD.limit_name AND key = OLD.limit_key;
  PERFORM pg_notify('svc_commands', '1');
  RETURN NULL;
END $$;
CREATE TRIGGER command_flow_release AFTER UPDATE OF status ON core.command
  FOR EACH ROW WHEN (OLD.limit_name IS NOT NULL AND OLD.status IN ('CLAIMED', 'RUNNING') AND NEW.status NOT IN ('CLAIMED', 'RUNNING'))
  EXECUTE FUNCTION core.svc_flow_release_command();
CREATE TRIGGER command_flow_release_deleted AFTER DELETE ON core.command
  FOR EACH ROW WHEN (OLD.limit_name IS NOT NULL AND OLD.status IN ('CLAIMED', 'RUNNING'))
  EXECUTE FUNCTION core.svc_flow_release_command();
