-- Recovery of stranded commands (src/engine/command-reaper.ts).
--
-- What a worker pool's last heartbeat said it holds (running, queued, finished but not yet
-- reported) and when that was heard: a command the pool claimed long before and no longer lists
-- was lost in a crash or a restart of the pool (orphaned). NULL: the pool does not list them.
ALTER TABLE core.runtime ADD COLUMN held_commands bigint[], ADD COLUMN held_at timestamptz;

-- The reaper marks a CLAIMED/RUNNING command it found stranded with the attempt it saw; the
-- claim-next paths (long poll, a report's claim-ahead) look for reclaimable commands only among
-- these, through an index that is empty while nothing is stranded, so the hot path pays nothing
-- for it. A new claim bumps `attempt`, which takes the row out of the index.
ALTER TABLE core.command ADD COLUMN reclaim_attempt integer;
CREATE INDEX command_reclaim_idx ON core.command (command_id)
  WHERE status IN ('CLAIMED', 'RUNNING') AND reclaim_attempt = attempt;

