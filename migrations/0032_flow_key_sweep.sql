-- Idle flow keys are forgotten (src/periodic/flow-key-sweep.ts): keys are tenants, customers or
-- orders, and a row per key ever used grew with the log. The sweep locks an idle key's row
-- (FOR UPDATE SKIP LOCKED), then, in a later statement of the same transaction (a fresh snapshot),
-- deletes it if nothing waits on it. A limited command's insert used to leave an existing key row
-- unlocked (ON CONFLICT DO NOTHING), so a sweep whose snapshot predated the command could delete
-- the row under it, and no claim would then pick the command (claims JOIN its key). Now the insert
-- holds the row FOR KEY SHARE until its transaction ends: the sweep skips a key held so, and an
-- insert after the sweep's lock waits, finds the row gone and makes it again. KEY SHARE does not
-- conflict with itself nor with the claims' and releases' updates of `running`: commands of one key
-- still go in side by side.
CREATE OR REPLACE FUNCTION core.svc_flow_key_of_command() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  LOOP
    PERFORM 1 FROM core.flow_key WHERE name = NEW.limit_name AND key = NEW.limit_key FOR KEY SHARE;
    IF FOUND THEN
      RETURN NULL;
    END IF;
    -- A row this transaction makes is its own until it commits; one another made meanwhile is locked next time round.
    INSERT INTO core.flow_key (name, key) VALUES (NEW.limit_name, NEW.limit_key) ON CONFLICT (name, key) DO NOTHING;
    IF FOUND THEN
      RETURN NULL;
    END IF;
  END LOOP;
END $$;
