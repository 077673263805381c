-- Flow keys kept by row triggers instead of parts of the unit write. The unit write runs at every
-- step and PostgreSQL starts every part of a statement (opening each table and index it names)
-- whether or not it has rows: the flow parts cost every step ~0.3 ms of executor start-up while
-- almost no step has flow work. A WHEN-guarded row trigger costs nothing when its condition is
-- false, so work of no limit pays nothing for flow control.

-- An inline limit's capacity (`limit: N` of a playbook's concurrency) travels with its admission.
ALTER TABLE core.admission ADD COLUMN capacity integer CHECK (capacity >= 1);

-- A key's row exists before anything queues on it: a limited command's, or an admission's (with
-- the inline limit's capacity, which a newer playbook version may change).
CREATE FUNCTION core.svc_flow_key_of_command() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO core.flow_key (name, key) VALUES (NEW.limit_name, NEW.limit_key) ON CONFLICT (name, key) DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER command_flow_key AFTER INSERT ON core.command
  FOR EACH ROW WHEN (NEW.limit_name IS NOT NULL)
  EXECUTE FUNCTION core.svc_flow_key_of_command();

CREATE FUNCTION core.svc_flow_key_of_admission() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO core.flow_key AS k (name, key, capacity) VALUES (NEW.limit_name, NEW.limit_key, NEW.capacity)
  ON CONFLICT (name, key) DO UPDATE SET capacity = EXCLUDED.capacity
   WHERE EXCLUDED.capacity IS NOT NULL AND k.capacity IS DISTINCT FROM EXCLUDED.capacity;
  RETURN NULL;
END $$;
CREATE TRIGGER admission_flow_key AFTER INSERT ON core.admission
  FOR EACH ROW WHEN (NEW.limit_name IS NOT NULL)
  EXECUTE FUNCTION core.svc_flow_key_of_admission();

-- An admitted execution's admission goes when it ends (or the execution is deleted): the slot it
-- held on its key is given back, whichever statement deletes it.
CREATE FUNCTION core.svc_flow_release_admission() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE core.flow_key SET running = GREATEST(running - 1, 0) WHERE name = OLD.limit_name AND key = OLD.limit_key;
  RETURN NULL;
END $$;
CREATE TRIGGER admission_flow_release AFTER DELETE ON core.admission
  FOR EACH ROW WHEN (OLD.admitted_at IS NOT NULL AND OLD.limit_name IS NOT NULL)
  EXECUTE FUNCTION core.svc_flow_release_admission();
