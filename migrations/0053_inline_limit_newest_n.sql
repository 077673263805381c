-- A playbook's inline limit (`concurrency: {limit: N}`, kept as `@<path>`) is shared by every
-- version of the playbook, and its N is the newest version's: registering another N applies at
-- once (docs/flow-control.md, "Caveats"; src/db/flow.repo.ts setInlineCapacity). An admission
-- carries the N of the version it starts, and an older version started again (a retry runs the
-- version it retries; a start may name `version`) set its key's N back to its own: a retry of a
-- version with N 3 ran beside the one running under the newest N of 1, and one of a version with
-- N 1 held a key raised to 3 at 1 until a start of the newest came. An inline limit's N is now
-- the newest version's, wherever an admission makes, sets or fills its key; the admission's own
-- N counts only when the newest version has no inline limit (its concurrency was removed or
-- names a limit now, and older versions' executions keep theirs).

-- The N of inline limit `name` (`@<path>`): its path's newest playbook version's, else `capacity`
-- (the admission's); NULL for a named limit (no capacity). One probe of catalog's (path, version).
CREATE FUNCTION core.svc_inline_capacity(name text, capacity integer) RETURNS integer LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN capacity IS NULL THEN NULL
              ELSE COALESCE((SELECT CASE WHEN jsonb_typeof(newest.n) = 'number' THEN (newest.n #>> '{}')::integer END
                               FROM (SELECT c.payload #> '{concurrency,limit}' AS n FROM core.catalog c
                                      WHERE c.path = substr(name, 2) AND c.kind = 'playbook' ORDER BY c.version DESC LIMIT 1) newest),
                            capacity) END
$$;

CREATE OR REPLACE FUNCTION core.svc_flow_admit_at_start() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  cap integer;
  inline integer := core.svc_inline_capacity(NEW.limit_name, NEW.capacity);
BEGIN
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

CREATE OR REPLACE FUNCTION core.svc_flow_key_of_admission() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO core.flow_key AS k (name, key, capacity) VALUES (NEW.limit_name, NEW.limit_key, core.svc_inline_capacity(NEW.limit_name, NEW.capacity))
  ON CONFLICT (name, key) DO UPDATE SET capacity = EXCLUDED.capacity
   WHERE EXCLUDED.capacity IS NOT NULL AND k.capacity IS DISTINCT FROM EXCLUDED.capacity;
  RETURN NULL;
END $$;
