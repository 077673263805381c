-- What a `playbook` task's own timer is for (its child's timeout, the delay before a retry's next
-- attempt), stored with its wait row: `{for, task, attempt}` as its timer.set's context says
-- (actors/effect-rows.ts writes both in the unit write); NULL for a step's own timer and for a
-- signal wait. GET /api/executions/{id} reads it from the row instead of reading the log back to
-- the timer.set, which cost an execution that appended many events after a long timer its whole
-- log on every read. One jsonb rather than three columns: the three are present together or not
-- at all, `for` is a reserved word, and the view hands the object on as it is.
ALTER TABLE core.wait ADD COLUMN purpose jsonb CONSTRAINT wait_purpose_of_timer CHECK (purpose IS NULL OR kind = 'timer');

-- Timers set before this (a running execution upgraded in place): each from the newest timer.set
-- of its seq, as the view read it until now.
UPDATE core.wait w
   SET purpose = jsonb_build_object('for', s.context->'for', 'task', s.context->'task', 'attempt', s.context->'attempt')
  FROM core.wait x
  CROSS JOIN LATERAL (SELECT e.context FROM core.event e
                       WHERE e.execution_id = x.execution_id AND e.event_type = 'timer.set' AND e.context->>'seq' = x.seq::text
                       ORDER BY e.event_id DESC LIMIT 1) s
 WHERE x.kind = 'timer' AND s.context ? 'for' AND w.execution_id = x.execution_id AND w.seq = x.seq;
