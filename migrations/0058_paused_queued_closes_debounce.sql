-- A queued execution may be paused now (docs/flow-control.md, "Pausing a queued execution"): it
-- keeps its admission row, its place, and the admitter passes it over until its resume. One that
-- holds an open debounce window closes it with the pause, in the statement that writes its new
-- status: later starts of its playbook and key then open a window of their own and run, rather
-- than join an execution an operator holds back. Starts that joined before the pause run with it
-- once it is resumed; a start joins one window or opens one, so none is lost and none runs twice.
-- A join racing the pause is ordered by the admission row's lock: the join's transaction holds it
-- (openDebounceWindowCatalog) and the pause's update waits, or the join finds the window closed.
CREATE FUNCTION core.svc_pause_debounce_window() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE core.admission SET debounce_closed = true
   WHERE execution_id = NEW.execution_id AND admitted_at IS NULL AND debounce_path IS NOT NULL AND NOT debounce_closed;
  RETURN NULL;
END $$;

CREATE TRIGGER execution_pause_debounce_window AFTER UPDATE OF status ON core.execution
  FOR EACH ROW WHEN (OLD.status = 'queued' AND NEW.status = 'paused')
  EXECUTE FUNCTION core.svc_pause_debounce_window();
