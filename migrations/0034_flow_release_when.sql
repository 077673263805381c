-- The triggers that give a limited command's slot back test only `limit_name` in their WHEN; the
-- statuses move into the function. PostgreSQL reads a trigger's WHEN back from its stored text and
-- plans it in every statement that fires the trigger's event (TriggerEnabled, per statement), and
-- every step's write updates a command's status: with the status lists (arrays, stored byte by
-- byte) that was 2 % of the backend's CPU on a sequential step (docs/benchmarks.md, "Thirty-third
-- session"). A command of no limit still calls nothing; a limited one now calls the function at
-- each of its status changes, which gives the slot back as before: once it stops being held.
CREATE OR REPLACE FUNCTION core.svc_flow_release_command() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status IN ('CLAIMED', 'RUNNING') AND (TG_OP = 'DELETE' OR NEW.status NOT IN ('CLAIMED', 'RUNNING')) THEN
    UPDATE core.flow_key SET running = GREATEST(running - 1, 0) WHERE name = OLD.limit_name AND key = OLD.limit_key;
    IF current_setting('svc.notify', true) IS DISTINCT FROM 'off' THEN
      PERFORM pg_notify('svc_commands', '1');
    END IF;
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER command_flow_release ON core.command;
DROP TRIGGER command_flow_release_deleted ON core.command;
CREATE TRIGGER command_flow_release AFTER UPDATE OF status ON core.command
  FOR EACH ROW WHEN (OLD.limit_name IS NOT NULL)
  EXECUTE FUNCTION core.svc_flow_release_command();
CREATE TRIGGER command_flow_release_deleted AFTER DELETE ON core.command
  FOR EACH ROW WHEN (OLD.limit_name IS NOT NULL)
  EXECUTE FUNCTION core.svc_flow_release_command();
