-- The enumerations of the tables every step writes (an execution's and an event's status, a
-- command's status, an execution's progress) are domains instead of table CHECK constraints: the
-- same values are refused. PostgreSQL reads a table CHECK's stored text and plans it again in
-- every statement that writes the table (ExecRelCheck, per statement and table): 6 % of the
-- backend's CPU on a sequential step, whose write inserts and updates three such tables
-- (docs/benchmarks.md, "Thirty-third session"). A domain's check is read and planned once per
-- connection (the type cache) and only compiled per statement.
--
-- No table is rewritten: each column changes to a domain without a constraint (binary coercible),
-- then the domain gets its constraint NOT VALID: the rows stored were checked by the table
-- constraints these replace (the status ones since migrations 0019 and 0021, NOT VALID there too),
-- and every new value is checked. The flow triggers' WHEN clauses read command.status, so they are
-- made again as they were (migrations/0021).

CREATE DOMAIN core.execution_status AS text;
CREATE DOMAIN core.command_status AS text;
CREATE DOMAIN core.execution_progress AS numeric(5, 2);

DROP TRIGGER command_flow_release ON core.command;
DROP TRIGGER command_flow_release_deleted ON core.command;

ALTER TABLE core.execution
  DROP CONSTRAINT execution_status_check,
  DROP CONSTRAINT execution_progress_check,
  ALTER COLUMN status TYPE core.execution_status,
  ALTER COLUMN progress TYPE core.execution_progress;
ALTER TABLE core.event
  DROP CONSTRAINT event_status_check,
  ALTER COLUMN status TYPE core.execution_status;
ALTER TABLE core.command
  DROP CONSTRAINT command_status_check,
  ALTER COLUMN status TYPE core.command_status;

ALTER DOMAIN core.execution_status ADD CONSTRAINT execution_status_check
  CHECK (VALUE IN ('queued', 'running', 'paused', 'completed', 'failed', 'cancelled')) NOT VALID;
ALTER DOMAIN core.command_status ADD CONSTRAINT command_status_check
  CHECK (VALUE IN ('PENDING', 'CLAIMED', 'RUNNING', 'WAITING', 'COMPLETED', 'FAILED', 'CANCELLED')) NOT VALID;
ALTER DOMAIN core.execution_progress ADD CONSTRAINT execution_progress_check
  CHECK (VALUE BETWEEN 0 AND 100) NOT VALID;

CREATE TRIGGER command_flow_release AFTER UPDATE OF status ON core.command
  FOR EACH ROW WHEN (OLD.limit_name IS NOT NULL AND OLD.status IN ('CLAIMED', 'RUNNING') AND NEW.status NOT IN ('CLAIMED', 'RUNNING'))
  EXECUTE FUNCTION core.svc_flow_release_command();
CREATE TRIGGER command_flow_release_deleted AFTER DELETE ON core.command
  FOR EACH ROW WHEN (OLD.limit_name IS NOT NULL AND OLD.status IN ('CLAIMED', 'RUNNING'))
  EXECUTE FUNCTION core.svc_flow_release_command();
