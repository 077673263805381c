-- Triggers (DESIGN.md "Triggers"): the live triggers of each playbook path, written when a
-- version is registered (src/db/trigger.repo.ts is the one writer of both tables).
CREATE TABLE core.trigger (
  path text NOT NULL,
  name text NOT NULL,
  -- The catalog version whose `triggers:` block declared it (the newest of its path).
  catalog_id bigint NOT NULL REFERENCES core.catalog (catalog_id),
  kind text NOT NULL CHECK (kind IN ('schedule', 'webhook', 'nats')),
  spec jsonb NOT NULL,
  -- An operator's pause outlives new versions of the playbook.
  paused boolean NOT NULL DEFAULT false,
  -- Schedules: the earliest scheduled time not handled yet (fired, skipped or missed). A tick
  -- moves it forward in the transaction that records the fires, guarded on the value it read.
  next_fire_at timestamptz,
  fires bigint NOT NULL DEFAULT 0,
  skipped bigint NOT NULL DEFAULT 0,
  errors bigint NOT NULL DEFAULT 0,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (path, name)
);
CREATE INDEX trigger_due_idx ON core.trigger (next_fire_at) WHERE kind = 'schedule' AND NOT paused;

-- Every fire, by its key (schedule: the scheduled time; webhook: the delivery id or the body's
-- SHA-256; NATS: the stream sequence). Written in the transaction that starts its execution, so
-- the primary key makes a second start of one fire fail instead: exactly once across servers,
-- restarts and redeliveries. A fire that started nothing (overlap `skip`, refused inputs) is kept
-- too, so it is never tried again. Rows outlive their trigger: a backfill of a range twice, or a
-- redelivery after a new version, still finds them.
CREATE TABLE core.trigger_fire (
  path text NOT NULL,
  name text NOT NULL,
  fire_key text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('started', 'skipped', 'refused')),
  execution_id bigint,
  scheduled_time timestamptz,
  error text,
  fired_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (path, name, fire_key)
);
CREATE INDEX trigger_fire_recent_idx ON core.trigger_fire (path, name, fired_at DESC);
CREATE INDEX trigger_fire_execution_idx ON core.trigger_fire (execution_id) WHERE execution_id IS NOT NULL;
