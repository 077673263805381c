-- The same for a playbook's `concurrency` (migrations/0054 did it for a task's `limit`): an
-- execution cancelled (or ended by a failure) while workers ran its commands gave its key's slot
-- back at once, and the next queued execution was admitted ~0.14 s later while the cancelled one's
-- call still ran (until its worker's next heartbeat, ~2 s): two at once on a limit of 1. Its slot
-- now stays taken until the last of those commands is reported stopped or its lease expires.
--
-- The cancel marks every command a worker held (src/db/unit-write.ts sets `held_after_cancel`;
-- a limited one's trigger did already). An ended execution's admission whose commands are so
-- marked leaves its slot in core.kept_admission instead of giving it back; the status update that
-- clears the last mark (the worker's late report, or the reaper past the lease) deletes that row,
-- and its delete gives the slot back. The reaper also deletes rows no mark holds any more (an
-- execution deleted with its commands): a slot is never kept for nothing.
CREATE TABLE core.kept_admission (
  execution_id bigint PRIMARY KEY,
  limit_name   text NOT NULL,
  limit_key    text NOT NULL
);

CREATE OR REPLACE FUNCTION core.svc_flow_release_admission() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'admission' AND EXISTS (SELECT 1 FROM core.command c WHERE c.execution_id = OLD.execution_id AND c.held_after_cancel) THEN
    INSERT INTO core.kept_admission (execution_id, limit_name, limit_key) VALUES (OLD.execution_id, OLD.limit_name, OLD.limit_key)
    ON CONFLICT (execution_id) DO NOTHING;
    RETURN NULL;
  END IF;
  UPDATE core.flow_key SET running = GREATEST(running - 1, 0) WHERE name = OLD.limit_name AND key = OLD.limit_key;
  IF current_setting('svc.notify', true) IS DISTINCT FROM 'off'
     AND EXISTS (SELECT 1 FROM core.command c WHERE c.limit_name = OLD.limit_name AND c.limit_key = OLD.limit_key AND c.status = 'PENDING') THEN
    PERFORM pg_notify('svc_commands', '1');
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER kept_admission_release AFTER DELETE ON core.kept_admission
  FOR EACH ROW EXECUTE FUNCTION core.svc_flow_release_admission();

-- The command trigger of 0054 fires for marked commands of no limit too (one more OR in its WHEN,
-- still one trigger): their mark is cleared by the same status updates.
CREATE OR REPLACE FUNCTION core.svc_flow_command_moved() RETURNS trigger LANGUAGE plpgsql AS $$
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
  IF OLD.limit_name IS NOT NULL THEN
    UPDATE core.flow_key SET running = GREATEST(running - 1, 0) WHERE name = OLD.limit_name AND key = OLD.limit_key;
    IF current_setting('svc.notify', true) IS DISTINCT FROM 'off' THEN
      PERFORM pg_notify('svc_commands', '1');
    END IF;
  END IF;
  -- The last marked command of an ended execution gives back the slot its admission left.
  IF OLD.held_after_cancel THEN
    DELETE FROM core.kept_admission ka WHERE ka.execution_id = OLD.execution_id
       AND NOT EXISTS (SELECT 1 FROM core.command c WHERE c.execution_id = OLD.execution_id AND c.held_after_cancel AND c.command_id <> OLD.command_id);
  END IF;
  RETURN NEW;
END $$;

DROP TRIGGER command_flow_release ON core.command;
CREATE TRIGGER command_flow_release BEFORE UPDATE OF status ON core.command
  FOR EACH ROW WHEN (OLD.limit_name IS NOT NULL OR OLD.held_after_cancel)
  EXECUTE FUNCTION core.svc_flow_command_moved();
