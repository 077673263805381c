-- Migration 0047 withdraws the unclaimed commands of an execution when it is paused (status
-- PAUSED, given back at the resume), by a trigger on the execution's status; an execution already
-- paused when 0047 ran (a database upgraded in place with a paused execution) kept its PENDING
-- commands, since the trigger fires only on a change of status. The new server's workers claimed
-- and ran them during the pause, the very thing 0047 ended. They are withdrawn here as the pause
-- would have withdrawn them; the resume (or a cancel) gives them back (or cancels them) as usual.
UPDATE core.command c SET status = 'PAUSED', updated_at = now()
  FROM core.execution e
 WHERE e.execution_id = c.execution_id AND e.status = 'paused' AND c.status = 'PENDING';
