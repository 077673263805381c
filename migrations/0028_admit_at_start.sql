-- Admission at the start (DESIGN.md "Flow control"): a start whose concurrency key had room when
-- the unit read it (nothing queued on it, no rate on its limit) is admitted by the fold at once,
-- and its admission row is written admitted. This trigger takes the slot in the same statement:
-- it counts the key up only if the key still has room, and otherwise fails the write with the
-- unit write's guard (SVC01), so the unit is read again and the start queues. Two servers
-- admitting on one key at once cannot both take its last slot: the first updates (and locks) the
-- key's row until its commit. (The queue is not read again here: the key's row is the one
-- global row this touches; a start that read an empty queue just before another queued is not
-- behind it.)
CREATE FUNCTION core.svc_flow_admit_at_start() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  cap integer;
BEGIN
  -- The key's capacity: its named limit's concurrency (none when the limit has a rate: tokens are
  -- the admitter's), else the inline limit's N (a named limit not defined has none): as
  -- svc_start_rooms reads it (src/db/flow.repo.ts).
  SELECT CASE WHEN l.name IS NULL THEN NEW.capacity WHEN l.rate_limit IS NULL THEN l.concurrency END INTO cap
    FROM (SELECT 1) one LEFT JOIN core.flow_limit l ON l.name = NEW.limit_name;
  UPDATE core.flow_key k
     SET running = k.running + 1, served_at = clock_timestamp(), capacity = COALESCE(NEW.capacity, k.capacity)
   WHERE k.name = NEW.limit_name AND k.key = NEW.limit_key AND k.running < cap;
  IF FOUND THEN
    RETURN NEW;
  END IF;
  -- The key's first admission makes its row; a row made meanwhile by another (or a key with no
  -- room) fails the write, and the unit is read again.
  INSERT INTO core.flow_key (name, key, capacity, running, served_at)
  SELECT NEW.limit_name, NEW.limit_key, NEW.capacity, 1, clock_timestamp() WHERE cap >= 1
  ON CONFLICT (name, key) DO NOTHING;
  IF NOT FOUND THEN
    PERFORM core.svc_write_guard_failed('flow key ' || NEW.limit_name || ' has no room to admit at start');
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER admission_admit_at_start BEFORE INSERT ON core.admission
  FOR EACH ROW WHEN (NEW.admitted_at IS NOT NULL AND NEW.limit_name IS NOT NULL)
  EXECUTE FUNCTION core.svc_flow_admit_at_start();

-- The key row of a queued admission is made as before; an admitted one's is made above.
DROP TRIGGER admission_flow_key ON core.admission;
CREATE TRIGGER admission_flow_key AFTER INSERT ON core.admission
  FOR EACH ROW WHEN (NEW.limit_name IS NOT NULL AND NEW.admitted_at IS NULL)
  EXECUTE FUNCTION core.svc_flow_key_of_admission();
