-- A start admitted at its start (migrations/0028, 0053) took a free slot whenever its key had
-- room, though executions were queued on the key: with two servers, one whose memory of the key
-- (actors/key-rooms.ts: read while the key had room, used up to 30 s) predated the other's queueing
-- admitted its start ahead of them the moment a slot came free, and the one queued first waited for
-- the next slot. "Others already queued on the key" queue a start (docs/flow-control.md), as the
-- room read before the fold says (svc_start_rooms): the trigger now refuses such an admission with
-- the write's guard, the unit reads the key again and its start queues behind them. Executions
-- queued by this same write (its transaction's now()) are its own burst's, already behind it.
CREATE OR REPLACE FUNCTION core.svc_flow_admit_at_start() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  cap integer;
  inline integer := core.svc_inline_capacity(NEW.limit_name, NEW.capacity);
BEGIN
  -- One probe of admission_queue_idx: the key's queue, as svc_start_rooms reads it.
  IF EXISTS (SELECT 1 FROM core.admission a WHERE a.limit_name = NEW.limit_name AND a.limit_key = NEW.limit_key
                AND a.admitted_at IS NULL AND a.created_at < now()) THEN
    PERFORM core.svc_write_guard_failed('flow key ' || NEW.limit_name || ' has executions queued ahead of a start');
  END IF;
  -- The key's capacity: its named limit's concurrency (none when the limit has a rate: tokens are
  -- the admitter's), else the inline limit's N (a named limit not defined has none): as
  -- svc_start_rooms reads it (src/db/flow.repo.ts).
  SELECT CASE WHEN l.name IS NULL THEN inline WHEN l.rate_limit IS NULL THEN l.concurrency END INTO cap
    FROM (SELECT 1) one LEFT JOIN core.flow_limit l ON l.name = NEW.limit_name;
  UPDATE core.flow_key k
     SET running = k.running + 1, served_at = clock_timestamp(), capacity = COALESCE(inline, k.capacity)
   WHERE k.name = NEW.limit_name AND k.key = NEW.limit_key AND k.running < cap;
  IF FOUND THEN
    RETURN NEW;
  END IF;
  -- The key's first admission makes its row; a row made meanwhile by another (or a key with no
  -- room) fails the write, and the unit is read again.
  INSERT INTO core.flow_key (name, key, capacity, running, served_at)
  SELECT NEW.limit_name, NEW.limit_key, inline, 1, clock_timestamp() WHERE cap >= 1
  ON CONFLICT (name, key) DO NOTHING;
  IF NOT FOUND THEN
    PERFORM core.svc_write_guard_failed('flow key ' || NEW.limit_name || ' has no room to admit at start');
  END IF;
  RETURN NEW;
END $$;
