-- A limited command cancelled while a worker held it gave its key's slot back at once, though the
-- worker hears of the cancel only at its next heartbeat (~2 s) and runs the task on meanwhile: a
-- limit of concurrency 1 had two calls in flight for ~1.7 s (test/integration/engine/
-- audit-cancel-keeps-limit-slot.test.ts). Such a command now keeps its slot, marked
-- `held_after_cancel`, until the worker's report after the cancel (a late report: its write sets
-- the status again, src/db/unit-write.ts) or the reaper's release once its lease has expired
-- (src/db/command.repo.ts releaseKeptSlots); either one's status update gives the slot back here.
-- The claim statement is unchanged: it counts core.flow_key.running, which keeps the slot.
ALTER TABLE core.command ADD COLUMN held_after_cancel boolean NOT NULL DEFAULT false;
-- The reaper's look at them: few rows, for seconds each.
CREATE INDEX command_held_after_cancel_idx ON core.command (command_id) WHERE held_after_cancel;

-- BEFORE, to mark the row it moves; the same one trigger and the same WHEN as before
-- (migrations/0034: a WHEN is planned in every statement that updates a command's status).
CREATE FUNCTION core.svc_flow_command_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status IN ('CLAIMED', 'RUNNING') THEN
    IF NEW.status IN ('CLAIMED', 'RUNNING') THEN
      RETURN NEW;
    END IF;
    IF NEW.status = 'CANCELLED' THEN
      -- Its worker may still run it: the slot stays taken.
      NEW.held_after_cancel := true;
      RETURN NEW;
    END IF;
  ELSIF NOT OLD.held_after_cancel THEN
    RETURN NEW;
  END IF;
  NEW.held_after_cancel := false;
  UPDATE core.flow_key SET running = GREATEST(running - 1, 0) WHERE name = OLD.limit_name AND key = OLD.limit_key;
  IF current_setting('svc.notify', true) IS DISTINCT FROM 'off' THEN
    PERFORM pg_notify('svc_commands', '1');
  END IF;
  RETURN NEW;
END $$;

DROP TRIGGER command_flow_release ON core.command;
CREATE TRIGGER command_flow_release BEFORE UPDATE OF status ON core.command
  FOR EACH ROW WHEN (OLD.limit_name IS NOT NULL)
  EXECUTE FUNCTION core.svc_flow_command_moved();

-- A deleted command (retention, its execution deleted) gives back a slot it kept as well.
CREATE OR REPLACE FUNCTION core.svc_flow_release_command() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status IN ('CLAIMED', 'RUNNING') OR OLD.held_after_cancel THEN
    UPDATE core.flow_key SET running = GREATEST(running - 1, 0) WHERE name = OLD.limit_name AND key = OLD.limit_key;
    IF current_setting('svc.notify', true) IS DISTINCT FROM 'off' THEN
      PERFORM pg_notify('svc_commands', '1');
    END IF;
  END IF;
  RETURN NULL;
END $$;
