-- A command issued before its execution was paused and not claimed when the pause landed was
-- still claimed and run during the pause (DESIGN.md "Waiting and control": while paused no
-- command is issued, running ones finish). The pause now withdraws such commands (status PAUSED,
-- the command machine's: no claim reads it, since every claim picks PENDING rows by the partial
-- indexes) and the resume gives them back (PENDING, in their old order), in the statement that
-- writes the execution's new status, so a crash never leaves them withdrawn under a running
-- execution. The claims and the report writes are unchanged: the cost is this trigger's WHEN on
-- the execution's row (two columns compared; the function runs only when the status changes).
ALTER DOMAIN core.command_status DROP CONSTRAINT command_status_check;
ALTER DOMAIN core.command_status ADD CONSTRAINT command_status_check
  CHECK (VALUE IN ('PENDING', 'PAUSED', 'CLAIMED', 'RUNNING', 'WAITING', 'COMPLETED', 'FAILED', 'CANCELLED')) NOT VALID;

CREATE FUNCTION core.svc_pause_commands() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  IF NEW.status = 'paused' THEN
    UPDATE core.command SET status = 'PAUSED', updated_at = now() WHERE execution_id = NEW.execution_id AND status = 'PENDING';
  ELSIF OLD.status = 'paused' THEN
    -- Resumed: claimable again, and the claimers are told (with NATS the engine announces them).
    -- Ended while paused: what its cancel did not reach goes with it.
    UPDATE core.command SET status = CASE WHEN NEW.status = 'running' THEN 'PENDING' ELSE 'CANCELLED' END, updated_at = now()
     WHERE execution_id = NEW.execution_id AND status = 'PAUSED';
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n > 0 AND NEW.status = 'running' AND current_setting('svc.notify', true) IS DISTINCT FROM 'off' THEN
      PERFORM pg_notify('svc_commands', n::text);
    END IF;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER execution_pause_commands AFTER UPDATE OF status ON core.execution
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION core.svc_pause_commands();
