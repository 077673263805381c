-- A paused execution's command that waited for room on a task's limit (withdrawn, PAUSED:
-- migrations/0047) counted as no work on its key: DELETE /api/limits deleted the limit and its
-- keys, and the idle-key sweep forgot the key. At the resume the command was PENDING on a key with
-- no row, which no claim picks (the claim joins core.flow_key), stranded even once the limit was
-- set again. Both now count such a command (src/db/flow.repo.ts), found by this index as the
-- waiting ones are by command_limited_idx; the rows of keys already lost are made again.
CREATE INDEX command_paused_limited_idx ON core.command (limit_name, limit_key) WHERE status = 'PAUSED' AND limit_name IS NOT NULL;

INSERT INTO core.flow_key (name, key)
SELECT DISTINCT o.limit_name, o.limit_key FROM core.command o
 WHERE o.status IN ('PENDING', 'PAUSED') AND o.limit_name IS NOT NULL
ON CONFLICT (name, key) DO NOTHING;
