-- A held command's slot given back wakes claimers through the database only where the bus is
-- PostgreSQL: a connection of a server whose bus is NATS says `svc.notify = off` (src/db/db.ts),
-- and the engine announces on NATS after commit instead (no NOTIFY on the hot path).
CREATE OR REPLACE FUNCTION core.svc_flow_release_command() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE core.flow_key SET running = GREATEST(running - 1, 0) WHERE name = OLD.limit_name AND key = OLD.limit_key;
  IF current_setting('svc.notify', true) IS DISTINCT FROM 'off' THEN
    PERFORM pg_notify('svc_commands', '1');
  END IF;
  RETURN NULL;
END $$;
