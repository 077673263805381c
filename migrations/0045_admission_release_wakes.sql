-- An admitted execution that ends gives its key's slot back (migrations/0025), but told no one:
-- a command of a task's `limit` waiting on the same key (a limit shared by one playbook's
-- concurrency and another's tasks) waited for a claimer's long poll to end (5 s by default)
-- instead of being claimed at once, though its key had room (docs/flow-control.md: a limit's
-- commands are "woken when a key has room"). The release wakes the claimers when a command waits
-- on the key, as a limited command's release does (migrations/0034); with NATS (svc.notify off)
-- the engine announces it after commit (actors/execution-unit.ts).
CREATE OR REPLACE FUNCTION core.svc_flow_release_admission() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE core.flow_key SET running = GREATEST(running - 1, 0) WHERE name = OLD.limit_name AND key = OLD.limit_key;
  IF current_setting('svc.notify', true) IS DISTINCT FROM 'off'
     AND EXISTS (SELECT 1 FROM core.command c WHERE c.limit_name = OLD.limit_name AND c.limit_key = OLD.limit_key AND c.status = 'PENDING') THEN
    PERFORM pg_notify('svc_commands', '1');
  END IF;
  RETURN NULL;
END $$;
