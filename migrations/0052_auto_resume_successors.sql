-- Auto-resume's restart is two writes: the interrupted execution cancelled (reason `auto_resume`,
-- `successor: true`), then its successor started (`resumed_from` in its `execution.started`). A
-- server that died between the two left the old one cancelled with no successor. The next
-- auto-resume finds such cancels through the first index (only auto-resume's cancels are in it)
-- and whether a successor started through the second (only successors' start events), and
-- starts the one that is missing. Both are small partial indexes, as event_retry_of_idx is.
CREATE INDEX event_auto_resume_cancel_idx ON core.event (created_at)
  WHERE event_type = 'execution.cancelled' AND context->>'reason' = 'auto_resume';
CREATE INDEX event_resumed_from_idx ON core.event ((context->>'resumed_from'))
  WHERE event_type = 'execution.started' AND context ? 'resumed_from';
